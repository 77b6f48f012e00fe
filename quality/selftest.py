"""Check self-tests: prove a scenario's checks by replaying gold, do-nothing and mutant chains.

Every run is graded as an episode is: (initial state, final state, final reply) under the
reward rule of `synthesis.tasks.checks.grade`, with the reply the oracle would give for that
run (`synthesis.tasks.answers`), rebuilt from the run's own results. Proven means: the
gold chain passes every check and earns reward 1, the baselines fail and earn 0 (doing
nothing, refusing, and the gold chain acted out on a decoy record where one exists: all
three are what `noop_fail` records), every shortcut a policy trained on the reward would try
earns 0 (a dump of the state, a hedge over enum values, a false "done", the system prompt
pasted into a refusal, the tools' descriptions pasted into one, a refusal of feasible work, a
dump after the gold calls: synthesis/tasks/shortcuts.py; `shortcuts_fail`), every correct
alternative earns 1 (synthesis/rollouts/alternatives.py; `alternatives_pass`), the gold
answer is grounded (quality/grounding.py), and the gold run is reproduced: a fresh replay
gives the results and the final state the scenario recorded when it was made (two replays
where it recorded none). Mutants (a step dropped, an id argument pointed at another record,
a number nudged, two dependent mutations swapped; for tasks whose reply is checked, the
lookups too) measure how sharp the checks are; a mutant is equivalent to gold only when its
final state and its reply both equal gold's. All replays of all scenarios go to the sandbox
in one batch.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from quality.grounding import answer_problems, episode_messages
from quality.work_runs import (
    Reads,
    call_key,
    keeps_reads,
    mapped_run,
    outcome_only,
    reads_of,
    work_chain,
)
from synthesis.environments.model import EnvModel, model_of
from synthesis.environments.runtime import episode_seed
from synthesis.environments.topology import ToolGraph, build_tool_graph, id_params
from synthesis.hashing import content_hash, derive_seed
from synthesis.models import Check, CheckSelftest, Environment, Scenario, ToolCall
from synthesis.rollouts.agents import NOOP_ANSWER, REFUSAL, WrongRecordPolicy, wrong_record_policy
from synthesis.rollouts.alternatives import chain_alternatives, reply_alternatives
from synthesis.rollouts.episodes import openai_tools, system_prompt
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import asked_values, failing_checks, fails_on_state, grade
from synthesis.tasks.decoys import best_decoy, record_named_by
from synthesis.tasks.envfoundry_reward import Grade, Seen, grade_replies
from synthesis.tasks.gold import RecordedRun, call_payload, recorded_run, run_chains, shown_by
from synthesis.tasks.screens import wrong_record_earns
from synthesis.tasks.shortcuts import ShortcutContext, shortcut_reward, shortcuts_for

MutantKind = Literal["drop_step", "change_id", "change_number", "swap_steps", "mistake"]
MAX_MUTANTS = 16


@dataclass(frozen=True)
class Mutant:
    kind: MutantKind
    label: str
    chain: tuple[ToolCall, ...]
    origin: tuple[int, ...] | None = None
    """The gold step each step of `chain` comes from (None: the same positions), so the
    answer reads an asked value from the result of the step that asks for it."""

    def gold_aligned(self, results: Sequence[Any], n_gold: int) -> list[Any]:
        """`results` of this chain at their gold positions (None for a dropped step)."""
        origin = self.origin if self.origin is not None else tuple(range(len(results)))
        aligned: list[Any] = [None] * n_gold
        for gold_index, result in zip(origin, results, strict=False):
            aligned[gold_index] = result
        return aligned


@dataclass
class SelftestOutcome:
    """A self-test verdict with the evidence behind it (what each mutant did)."""

    selftest: CheckSelftest
    mutants: list[tuple[Mutant, str]] = field(default_factory=list)
    """(mutant, 'killed' | 'survived' | 'equivalent')."""
    seconds: float = 0.0

    @property
    def survivors(self) -> list[Mutant]:
        return [m for m, verdict in self.mutants if verdict == "survived"]


def make_mutants(
    model: EnvModel,
    scenario: Scenario,
    *,
    limit: int = MAX_MUTANTS,
    graph: ToolGraph | None = None,
) -> list[Mutant]:
    """Plausible wrong solutions derived from the gold chain (deterministic per scenario).

    `graph` is `build_tool_graph(model)` when the caller has it (one per environment)."""
    chain = list(scenario.gold_chain)
    writes = model.mutating_tools()
    # Steps the planner wrote as reads with a tool that may write (a project task's shell
    # looks: synthesis.tasks.projects.work `looks`) are not mutated, as a query tool's are not.
    reads = set((scenario.provenance or {}).get("looks") or ())
    mut_idx = [i for i, c in enumerate(chain) if c.tool in writes and i not in reads]
    # A task whose reply is checked depends on the lookups its answer reads too: such a lookup
    # pointed at another record makes the answer report that record. Other lookups only
    # produced ids the later steps carry as gold has them, so no checks could tell a mutant
    # of those apart: it is no plausible wrong solution, and left out.
    reply_task = bool(scenario.provenance.get("reply"))
    read = {a.step for a in asked_values(scenario.provenance.get("reply"))} - {None}
    changed_idx = sorted(set(mut_idx) | {i for i in read if i < len(chain)})
    rng = random.Random(derive_seed("mutants", scenario.scenario_id))
    out: list[Mutant] = []
    # An infeasible task's refused attempt (its role "refused"): leaving it out and answering
    # with the rule is a right answer (no forbidden change, a true reason), not a plausible
    # wrong one, so it is not a mutant.
    roles = list((scenario.provenance or {}).get("roles") or [])
    refused = roles.index("refused") if "refused" in roles else None
    for i in changed_idx:
        if i == refused:
            continue
        out.append(
            Mutant(
                "drop_step",
                f"drop step {i + 1} {chain[i].tool}",
                tuple(chain[:i] + chain[i + 1 :]),
                tuple(j for j in range(len(chain)) if j != i),
            )
        )
    for i in changed_idx:
        for param, value in sorted(chain[i].args.items()):
            other = _other_id(model, scenario, chain[i].tool, param, value, rng)
            if other is None and reply_task:
                other = _other_lookup(scenario, value)
            if other is not None:
                out.append(
                    Mutant(
                        "change_id",
                        f"step {i + 1} {chain[i].tool}: {param} {value} -> {other}",
                        tuple(_with_arg(chain, i, param, other)),
                    )
                )
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                nudged = value + 1 if isinstance(value, int) else round(value + 1.0, 2)
                out.append(
                    Mutant(
                        "change_number",
                        f"step {i + 1} {chain[i].tool}: {param} {value} -> {nudged}",
                        tuple(_with_arg(chain, i, param, nudged)),
                    )
                )
    graph = graph if graph is not None else build_tool_graph(model)
    for a, b in zip(mut_idx, mut_idx[1:], strict=False):
        if _dependent(graph, scenario, a, b):
            swapped = list(chain)
            swapped[a], swapped[b] = chain[b], chain[a]
            origin = list(range(len(chain)))
            origin[a], origin[b] = b, a
            out.append(
                Mutant(
                    "swap_steps",
                    f"swap steps {a + 1} {chain[a].tool} and {b + 1} {chain[b].tool}",
                    tuple(swapped),
                    tuple(origin),
                )
            )
    # The mistakes people make with the task's data, as the planner wrote them (the stale
    # backup read, void rows kept...: synthesis.tasks.projects), first: each is a whole
    # wrong solution, not an edit of the gold chain.
    mistakes = [
        Mutant("mistake", m["label"], tuple(ToolCall.model_validate(c) for c in m["chain"]))
        for m in (scenario.provenance or {}).get("mistakes") or []
    ]
    out = mistakes + out
    unique: dict[str, Mutant] = {}
    gold_key = _chain_key(chain)
    for m in out:
        key = _chain_key(m.chain)
        if key != gold_key and key not in unique:
            unique[key] = m
    return list(unique.values())[:limit]


def _chain_key(chain: Sequence[ToolCall]) -> str:
    return content_hash([c.model_dump(mode="json") for c in chain])


def _with_arg(chain: list[ToolCall], i: int, param: str, value: Any) -> list[ToolCall]:
    out = list(chain)
    out[i] = ToolCall(tool=chain[i].tool, args={**chain[i].args, param: value})
    return out


def _collection_of(state: dict[str, Any], rid: Any) -> str | None:
    for coll, records in sorted(state.items()):
        if isinstance(records, dict) and rid in records:
            return coll
    return None


def _other_id(
    model: EnvModel, scenario: Scenario, tool: str, param: str, value: Any, rng: random.Random
) -> Any:
    """Another record's id for an id argument (None when the argument takes no id)."""
    try:
        entity = id_params(model.tool(tool)).get(param)
    except KeyError:
        entity = None
    if entity is not None and model.has_entity(entity):
        ids = model.entity(entity).ids_in(scenario.start_state)
    elif model.exact or not isinstance(value, str):
        return None
    else:
        # A model that does not know this parameter: an id is a key of some collection.
        coll = _collection_of(scenario.start_state, value) or _collection_of(
            scenario.final_state or {}, value
        )
        records = scenario.start_state.get(coll or "")
        ids = sorted(records) if isinstance(records, dict) else []
    others = sorted((rid for rid in ids if rid != value), key=str)
    return rng.choice(others) if others else None


def _other_lookup(scenario: Scenario, value: Any) -> Any:
    """Another record's value for an argument that names a record by a field (an email)."""
    found = record_named_by(scenario.start_state, value)
    if found is None or found[2] == "id":
        return None
    coll, rid, fname = found
    return best_decoy(scenario.start_state[coll], rid, fname)


def _dependent(graph: ToolGraph | None, scenario: Scenario, a: int, b: int) -> bool:
    """Whether mutation b relies on mutation a (so running b first should go wrong)."""
    chain = scenario.gold_chain
    first, second = chain[a], chain[b]
    produced = scenario.gold_results[a] if a < len(scenario.gold_results) else None
    data = produced.get("data") if isinstance(produced, dict) else None
    if isinstance(data, dict) and data.get("id") in second.args.values():
        return True
    if set(map(str, first.args.values())) & set(map(str, second.args.values())):
        return True
    return graph is not None and graph.depends_on(second.tool, first.tool)


def selftest_scenario(
    env: Environment,
    scenario: Scenario,
    checks: Sequence[Check],
    *,
    model: EnvModel | None = None,
    backend: str = "auto",
) -> CheckSelftest:
    """Prove (or refute) one scenario's checks; see selftest_outcomes for the evidence."""
    return selftest_outcomes(env, [(scenario, checks)], model=model, backend=backend)[0].selftest


def selftest_scenarios(
    env: Environment,
    items: Sequence[tuple[Scenario, Sequence[Check]]],
    *,
    model: EnvModel | None = None,
    backend: str = "auto",
    pool: Any = None,
) -> list[CheckSelftest]:
    outcomes = selftest_outcomes(env, items, model=model, backend=backend, pool=pool)
    return [o.selftest for o in outcomes]


def selftest_outcomes(
    env: Environment,
    items: Sequence[tuple[Scenario, Sequence[Check]]],
    *,
    model: EnvModel | None = None,
    backend: str = "auto",
    pool: Any = None,
) -> list[SelftestOutcome]:
    """Self-test many scenarios of one environment with every replay in one sandbox batch
    (and a second, smaller one: the mutants of a task judged by its outcome whose work chain
    did not decide them, quality/work_runs.py)."""
    started = time.perf_counter()
    model = model or model_of(env)
    graph = build_tool_graph(model) if items else None  # one per environment, not scenario
    plans: list[_Plan] = []
    episodes: list[tuple[dict[str, Any], Sequence[ToolCall], int]] = []

    def add(plan: _Plan, chain: Sequence[ToolCall]) -> int:
        episodes.append((plan.scenario.initial_state, chain, plan.seed))
        return len(episodes) - 1

    for scenario, checks in items:
        plan = _Plan(
            scenario,
            checks,
            make_mutants(model, scenario, graph=graph),
            wrong_record_policy(scenario, model),
            other_paths(scenario, graph),
            reads_of(scenario, outcome_only(checks), model),
            recorded_run(scenario),
            episode_seed(scenario),
        )
        plans.append(plan)
        # A gold replay, checked against the run the scenario recorded when it was made (a
        # second replay where it recorded none): two runs in fresh sandboxes that must agree
        # (determinism). Then one empty chain (the do-nothing agent, loaded and dumped by the
        # class itself), then every mutant; all in the scenario's own world (the same clock
        # and randomness as its gold run).
        plan.gold = add(plan, scenario.gold_chain)
        if plan.recorded is None:
            plan.gold_b = add(plan, scenario.gold_chain)
        plan.noop = add(plan, [])
        if plan.reads is None:
            plan.mutant_at = [add(plan, m.chain) for m in plan.mutants]
        else:
            # Only the calls that work, each distinct work chain run once (the empty one is
            # the do-nothing run); the gold chain's too, which proves the reads read.
            works: dict[tuple, int] = {(): plan.noop}
            at = []
            for chain in (scenario.gold_chain, *(m.chain for m in plan.mutants)):
                work = work_chain(chain, plan.reads)
                key = tuple(call_key(c) for c in work)
                if key not in works:
                    works[key] = add(plan, work)
                at.append(works[key])
            plan.gold_work, plan.mutant_at = at[0], at[1:]
        if plan.wrong is not None:
            plan.wrong_at = add(plan, plan.wrong.chain)
        # A path that keeps every read between the same two pieces of work as gold shows
        # what gold's run showed, in its own order: not run while the reads are proven.
        plan.path_at = [
            None
            if plan.reads is not None
            and keeps_reads(p.chain, p.origin, scenario.gold_chain, plan.reads)
            else add(plan, p.chain)
            for p in plan.paths
        ]
    results = run_chains(env, episodes, backend=backend, pool=pool)
    # Each plan's runs as the first batch left them; then a second batch of whole runs for
    # what the work runs did not decide, each put in the place of the run it replaces.
    redo: list[tuple[list[Any], int]] = []
    episodes = []  # `add` appends the second batch's episodes here
    for plan in plans:
        gold_a = results[plan.gold]
        plan.mutant_runs = [results[at] for at in plan.mutant_at]
        if plan.reads is not None:
            # The reads proven to read: the gold chain's work reached the gold replay's state.
            plan.reads_proven = gold_a.status == "ok" and (
                results[plan.gold_work].final_state == gold_a.final_state
            )
            for k, (mutant, run) in enumerate(zip(plan.mutants, plan.mutant_runs, strict=True)):
                same = run.final_state is not None and run.final_state == gold_a.final_state
                decided = same or fails_on_state(
                    plan.checks, plan.scenario.start_state, run.final_state
                )
                if not (plan.reads_proven and decided):
                    redo.append((plan.mutant_runs, k))
                    add(plan, mutant.chain)
        plan.path_runs = []
        for k, (path, at) in enumerate(zip(plan.paths, plan.path_at, strict=True)):
            if at is not None:
                plan.path_runs.append(results[at])
            elif plan.reads_proven:
                plan.path_runs.append(mapped_run(path.origin, gold_a))
            else:
                plan.path_runs.append(None)
                redo.append((plan.path_runs, k))
                add(plan, path.chain)
    again = run_chains(env, episodes, backend=backend, pool=pool) if episodes else []
    for (runs, k), run in zip(redo, again, strict=True):
        runs[k] = run
    per_item = (time.perf_counter() - started) / max(1, len(items))
    shown = _Shown(system_prompt(model), openai_tools(env)) if items else None
    out = []
    for plan in plans:
        gold_b = plan.recorded if plan.recorded is not None else results[plan.gold_b]
        wrong_run = (plan.wrong, results[plan.wrong_at]) if plan.wrong is not None else None
        outcome = _judge(
            plan.scenario,
            plan.checks,
            results[plan.gold],
            gold_b,
            results[plan.noop],
            plan.mutants,
            plan.mutant_runs,
            model,
            wrong_run,
            shown,
            list(zip(plan.paths, plan.path_runs, strict=True)),
        )
        outcome.seconds = per_item
        out.append(outcome)
    return out


@dataclass
class _Plan:
    """One scenario's runs in the self-test's batches: where each one's result is."""

    scenario: Scenario
    checks: Sequence[Check]
    mutants: list[Mutant]
    wrong: WrongRecordPolicy | None
    paths: list[Mutant]
    reads: Reads | None  # quality/work_runs.py; None: its mutants are run whole
    recorded: RecordedRun | None  # the gold run the scenario recorded, if whole
    seed: int
    reads_proven: bool = False
    # Indices into the first batch's results.
    gold: int = -1
    gold_b: int = -1
    noop: int = -1
    gold_work: int = -1
    mutant_at: list[int] = field(default_factory=list)
    wrong_at: int = -1
    path_at: list[int | None] = field(default_factory=list)  # None: mapped from gold's run
    # The runs judged, once both batches are in.
    mutant_runs: list[Any] = field(default_factory=list)
    path_runs: list[Any] = field(default_factory=list)


def _judge(
    scenario: Scenario,
    checks: Sequence[Check],
    gold_a: Any,
    gold_b: Any,
    noop: Any,
    mutants: list[Mutant],
    mutant_runs: Sequence[Any],
    model: EnvModel,
    wrong_run: tuple[WrongRecordPolicy, Any] | None = None,
    shown: _Shown | None = None,
    path_runs: Sequence[tuple[Mutant, Any]] = (),
) -> SelftestOutcome:
    initial = scenario.start_state

    n_gold = len(scenario.gold_chain)

    def answer(run: Any, mutant: Mutant | None = None) -> str:
        results = [call_payload(r) for r in run.results]
        if mutant is not None:
            results = mutant.gold_aligned(results, n_gold)
        return oracle_answer(scenario, run.final_state, results, model=model)

    payloads_a = [call_payload(r) for r in gold_a.results]
    payloads_b = [call_payload(r) for r in gold_b.results]
    # Every run is graded on what its own calls showed (a reply's values must have been).
    seen_a = shown_by(scenario.gold_chain, payloads_a)
    reply_a = answer(gold_a)
    graded_a = grade(checks, initial, gold_a.final_state, reply_a, shown=seen_a)
    # The answer and the grade are functions of the run's final state and results: a replay
    # that reproduced both gets the same ones without working them out again.
    if gold_b.final_state == gold_a.final_state and payloads_b == payloads_a:
        reply_b, graded_b = reply_a, graded_a
    else:
        reply_b = answer(gold_b)
        seen_b = shown_by(scenario.gold_chain, payloads_b)
        graded_b = grade(checks, initial, gold_b.final_state, reply_b, shown=seen_b)
    # The gold answer is a training target: it must state only what its run showed and
    # never deny a change the run made (quality/grounding.py).
    ungrounded = (
        answer_problems(
            episode_messages(
                shown.system_prompt,
                scenario.task_text,
                [(c.tool, dict(c.args)) for c in scenario.gold_chain],
                payloads_a,
                reply_a,
            ),
            initial,
            gold_a.final_state,
        )
        if shown is not None
        else []
    )
    gold_pass = (
        graded_a.success and graded_a.reward == 1.0 and gold_a.status == "ok" and not ungrounded
    )
    # The do-nothing run's state graded once for both idle replies.
    idle = grade_replies(checks, initial, noop.final_state, shown=Seen())
    baselines = [idle(r) for r in (NOOP_ANSWER, REFUSAL)]
    idle_fail = all(not g.success and g.reward == 0.0 for g in baselines)
    wrong_earns = None
    if wrong_run is not None:
        wrong, run = wrong_run
        results = [call_payload(r) for r in run.results]
        graded = wrong_record_earns(
            scenario, checks, run.final_state, results, model, shown=shown_by(wrong.chain, results)
        )
        if graded is not None:
            wrong_earns = f"({wrong.label}) earns reward {graded.reward:g}"
    noop_fail = idle_fail and wrong_earns is None
    shortcut_rewards = (
        _shortcut_rewards(
            scenario,
            checks,
            noop.final_state,
            gold_a.final_state,
            seen_a,
            _lookups_shown(scenario, payloads_a, model),
            shown,
        )
        if shown is not None
        else {}
    )
    paid = {name: r for name, r in shortcut_rewards.items() if r > 0}
    on_gold = grade_replies(checks, initial, gold_a.final_state, shown=seen_a)
    alternative_rewards = {
        alt.name: on_gold(alt.reply).reward
        for alt in reply_alternatives(scenario, reply_a, payloads_a)
    }
    for path, run in path_runs:
        # Only a path that reaches exactly the gold run's state is a right one.
        if run.status == "ok" and run.final_state == gold_a.final_state:
            graded = grade(
                checks, initial, run.final_state, answer(run, path), shown=_run_seen(path, run)
            )
            alternative_rewards[path.label] = graded.reward
    failed_alternatives = {n: r for n, r in alternative_rewards.items() if r < 1.0}
    same_runs = (
        gold_a.status == gold_b.status == "ok"
        and gold_a.final_state == gold_b.final_state
        and payloads_a == payloads_b
    )
    matches_gold_run = scenario.final_state is None or gold_a.final_state == scenario.final_state
    deterministic = (
        same_runs
        and reply_a == reply_b
        and graded_a.verdicts == graded_b.verdicts
        and matches_gold_run
    )
    # A task judged by its outcome alone: no check reads what the reply says (the length
    # guard at most, which any oracle answer meets).
    judged_by_outcome = outcome_only(checks)
    judged: list[tuple[Mutant, str]] = []
    for mutant, run in zip(mutants, mutant_runs, strict=True):
        same_state = run.final_state is not None and run.final_state == gold_a.final_state
        if not same_state and fails_on_state(checks, initial, run.final_state):
            # Killed whatever it would reply: most mutants are, and working out the oracle's
            # reply to a run is most of the judging.
            judged.append((mutant, "killed"))
            continue
        if same_state and judged_by_outcome:
            # It did what was asked: a look taken before the work instead of after it (two
            # dependent steps swapped) gives another reply from the same outcome, which no
            # check of such a task reads; a right solution, not a wrong one that slipped through.
            judged.append((mutant, "equivalent"))
            continue
        reply = answer(run, mutant)
        if same_state and reply == reply_a:
            # No check can tell these apart; counting them would punish checks for the gold
            # chain's redundancy, not for their own weakness.
            judged.append((mutant, "equivalent"))
        elif grade(
            checks,
            initial,
            run.final_state,
            reply,
            shown=_run_seen(mutant, run),
        ).success:
            # A refused request whose mutant also changed nothing and declined with a true
            # reason reached the right outcome (the rule blocks the request whichever
            # lookups led to it): another right answer, not a wrong one that slipped through.
            refused_alike = scenario.kind == "infeasible" and same_state
            judged.append((mutant, "equivalent" if refused_alike else "survived"))
        else:
            judged.append((mutant, "killed"))
    counted = [v for _, v in judged if v != "equivalent"]
    kill_rate = counted.count("killed") / len(counted) if counted else 0.0
    reasons = []
    if not checks:
        reasons.append("scenario has no checks")
    elif not graded_a.success or gold_a.status != "ok":
        failed = failing_checks(list(checks), initial, gold_a.final_state, reply_a)
        status = "" if gold_a.status == "ok" else f" (replay {gold_a.status}: {gold_a.reason})"
        reasons.append(
            "gold final state fails: " + "; ".join(c.description for c in failed[:3]) + status
        )
    elif ungrounded:
        reasons.append("the gold answer is not grounded: " + "; ".join(ungrounded[:3]))
    elif not gold_pass:
        reasons.append(
            f"gold earns reward {graded_a.reward:g}, not 1: no goal is left for an agent to "
            "achieve (every goal held before it acted)"
        )
    if checks and not idle_fail:
        reasons.append("a do-nothing or refusing agent passes every check or earns a reward")
    if checks and wrong_earns is not None:
        reasons.append(f"the wrong-record baseline {wrong_earns}")
    if checks and paid:
        earned = ", ".join(f"{name} earns {r:g}" for name, r in sorted(paid.items()))
        reasons.append(f"a shortcut earns a reward: {earned}")
    if checks and gold_pass and failed_alternatives:
        scored = ", ".join(f"{n} earns {r:g}" for n, r in sorted(failed_alternatives.items()))
        reasons.append(f"a correct alternative earns less than 1: {scored}")
    if not deterministic:
        if not same_runs:
            reasons.append(
                "the gold replay differs from the recorded gold run (final state or results)"
                if isinstance(gold_b, RecordedRun)
                else "two gold replays differ (final state, results or status)"
            )
        elif not matches_gold_run:
            reasons.append("gold replay differs from the recorded gold run")
        else:
            reasons.append("check verdicts or answers differ between two replays")
    selftest = CheckSelftest(
        scenario_id=scenario.scenario_id,
        gold_pass=gold_pass,
        noop_fail=noop_fail,
        deterministic=deterministic,
        mutation_kill_rate=round(kill_rate, 6),
        n_mutants=len(counted),
        reason="; ".join(reasons) or None,
        shortcuts_fail=not paid,
        shortcut_rewards=shortcut_rewards,
        alternatives_pass=not failed_alternatives,
        alternative_rewards=alternative_rewards,
    )
    return SelftestOutcome(selftest=selftest, mutants=judged)


@dataclass(frozen=True)
class _Shown:
    """What every agent of an environment is shown besides the request."""

    system_prompt: str
    tools: list[dict[str, Any]]


def _shortcut_rewards(
    scenario: Scenario,
    checks: Sequence[Check],
    idle_state: dict[str, Any] | None,
    gold_state: dict[str, Any] | None,
    gold_seen: Seen,
    lookups_seen: Seen,
    shown: _Shown,
) -> dict[str, float]:
    """shortcut name → the reward it earns on `scenario` (each must earn 0). The no-call
    shortcuts end in the state a do-nothing run left, having been shown nothing; those that
    play the gold calls after them, shown what they showed (`gold_seen`); those that look
    first in the state the gold lookups leave (the initial one), shown what they showed."""
    rewards = {}
    answered = bool((scenario.provenance or {}).get("reply"))
    nothing = Seen()
    # One grader per episode the shortcuts end in: their states and calls are graded once,
    # each reply's checks per reply (the guess alone tries two replies per enum value).
    graders: dict[str, Callable[[str], Grade]] = {}
    for shortcut in shortcuts_for(scenario.kind, answered):
        if shortcut.plays_gold:
            key, state, seen = "gold", gold_state, gold_seen
        elif shortcut.looks_first:
            key, state, seen = "lookups", idle_state, lookups_seen
        else:
            key, state, seen = "idle", idle_state, nothing
        if key not in graders:
            graders[key] = grade_replies(checks, scenario.start_state, state, shown=seen)
        context = ShortcutContext(shown.system_prompt, scenario.task_text, shown.tools, state or {})
        rewards[shortcut.name] = shortcut_reward(
            shortcut, context, lambda reply, of=graders[key]: of(reply).reward
        )
    return rewards


def _run_seen(mutant: Mutant, run: Any) -> Seen:
    """What a run of a mutant or another path showed (each run is graded on its own calls)."""
    return shown_by(mutant.chain, [call_payload(r) for r in run.results])


def _lookups_shown(scenario: Scenario, payloads: Sequence[Any], model: EnvModel) -> Seen:
    """What the gold chain's lookups showed (its calls of tools that change nothing)."""
    writes = model.mutating_tools()
    looked = [
        (call, payload)
        for call, payload in zip(scenario.gold_chain, payloads, strict=False)
        if call.tool not in writes
    ]
    return shown_by([c for c, _ in looked], [p for _, p in looked])


def other_paths(scenario: Scenario, graph: ToolGraph | None) -> list[Mutant]:
    """Valid chains other than gold's (synthesis.rollouts.alternatives.chain_alternatives),
    as mutants are: with the gold step each step comes from."""
    roles = list((scenario.provenance or {}).get("roles") or [])
    if len(roles) != len(scenario.gold_chain):
        return []
    return [
        Mutant("swap_steps", label, chain, origin)
        for label, chain, origin in chain_alternatives(
            scenario, roles, lambda a, b: _dependent(graph, scenario, a, b)
        )
    ]
