"""Check self-tests: prove a scenario's checks by replaying gold, do-nothing and mutant chains.

Proven means: the gold chain passes every check, a do-nothing agent fails at least one, and
two fresh replays agree. Mutants (a mutating step dropped, an id argument pointed at another
record, a number nudged, two dependent mutations swapped) measure how sharp the checks are.
All replays of all scenarios go to the sandbox in one batch.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.environments.model import EnvModel, model_of
from synthesis.hashing import content_hash, derive_seed
from synthesis.models import Check, CheckSelftest, Environment, Scenario, ToolCall
from synthesis.runtime import episode_seed
from synthesis.tasks.checks import evaluate_checks, failing_checks, oracle_reply
from synthesis.tasks.gold import call_payload, run_chains
from synthesis.tasks.topology import ToolGraph, build_tool_graph, id_params

MutantKind = Literal["drop_step", "change_id", "change_number", "swap_steps"]
MAX_MUTANTS = 16


@dataclass(frozen=True)
class Mutant:
    kind: MutantKind
    label: str
    chain: tuple[ToolCall, ...]


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


def make_mutants(model: EnvModel, scenario: Scenario, *, limit: int = MAX_MUTANTS) -> list[Mutant]:
    """Plausible wrong solutions derived from the gold chain (deterministic per scenario)."""
    chain = list(scenario.gold_chain)
    writes = model.mutating_tools()
    mut_idx = [i for i, c in enumerate(chain) if c.tool in writes]
    rng = random.Random(derive_seed("mutants", scenario.scenario_id))
    out: list[Mutant] = []
    for i in mut_idx:
        out.append(
            Mutant(
                "drop_step", f"drop step {i + 1} {chain[i].tool}", tuple(chain[:i] + chain[i + 1 :])
            )
        )
    for i in mut_idx:
        for param, value in sorted(chain[i].args.items()):
            other = _other_id(model, scenario, chain[i].tool, param, value, rng)
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
    graph = build_tool_graph(model)
    for a, b in zip(mut_idx, mut_idx[1:], strict=False):
        if _dependent(graph, scenario, a, b):
            swapped = list(chain)
            swapped[a], swapped[b] = chain[b], chain[a]
            out.append(
                Mutant(
                    "swap_steps",
                    f"swap steps {a + 1} {chain[a].tool} and {b + 1} {chain[b].tool}",
                    tuple(swapped),
                )
            )
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
    """Self-test many scenarios of one environment with every replay in one sandbox batch."""
    started = time.perf_counter()
    model = model or model_of(env)
    plans: list[tuple[Scenario, Sequence[Check], list[Mutant], int]] = []
    episodes: list[tuple[dict[str, Any], Sequence[ToolCall], int]] = []
    for scenario, checks in items:
        mutants = make_mutants(model, scenario)
        plans.append((scenario, checks, mutants, len(episodes)))
        # Two gold replays (determinism), one empty chain (the do-nothing agent, loaded and
        # dumped by the class itself), then every mutant; all in the scenario's own world
        # (the same clock and randomness as its gold run).
        seed = episode_seed(scenario)
        episodes.append((scenario.initial_state, scenario.gold_chain, seed))
        episodes.append((scenario.initial_state, scenario.gold_chain, seed))
        episodes.append((scenario.initial_state, [], seed))
        episodes.extend((scenario.initial_state, m.chain, seed) for m in mutants)
    results = run_chains(env, episodes, backend=backend, pool=pool)
    per_item = (time.perf_counter() - started) / max(1, len(items))
    out = []
    for scenario, checks, mutants, at in plans:
        gold_a, gold_b, noop = results[at], results[at + 1], results[at + 2]
        mutant_runs = results[at + 3 : at + 3 + len(mutants)]
        outcome = _judge(scenario, checks, gold_a, gold_b, noop, mutants, mutant_runs)
        outcome.seconds = per_item
        out.append(outcome)
    return out


def _judge(
    scenario: Scenario,
    checks: Sequence[Check],
    gold_a: Any,
    gold_b: Any,
    noop: Any,
    mutants: list[Mutant],
    mutant_runs: Sequence[Any],
) -> SelftestOutcome:
    initial = scenario.start_state
    # A reply task's gold reply states the values its contract asks for; the do-nothing
    # agent says nothing. (Minimal: the reply-aware self-test rebuilds replies per run.)
    reply = oracle_reply(scenario.expected_reply)
    verdict_a = evaluate_checks(checks, initial, gold_a.final_state, reply=reply)
    verdict_b = evaluate_checks(checks, initial, gold_b.final_state, reply=reply)
    gold_pass = bool(checks) and all(verdict_a) and gold_a.status == "ok"
    noop_fail = not all(evaluate_checks(checks, initial, noop.final_state))
    same_runs = (
        gold_a.status == gold_b.status == "ok"
        and gold_a.final_state == gold_b.final_state
        and [call_payload(r) for r in gold_a.results] == [call_payload(r) for r in gold_b.results]
    )
    matches_gold_run = scenario.final_state is None or gold_a.final_state == scenario.final_state
    deterministic = same_runs and verdict_a == verdict_b and matches_gold_run
    judged: list[tuple[Mutant, str]] = []
    for mutant, run in zip(mutants, mutant_runs, strict=True):
        if run.final_state is not None and run.final_state == gold_a.final_state:
            # No final-state check can tell these apart; counting them would punish checks
            # for the gold chain's redundancy, not for their own weakness.
            judged.append((mutant, "equivalent"))
        elif all(evaluate_checks(checks, initial, run.final_state, reply=reply)):
            judged.append((mutant, "survived"))
        else:
            judged.append((mutant, "killed"))
    counted = [v for _, v in judged if v != "equivalent"]
    kill_rate = counted.count("killed") / len(counted) if counted else 0.0
    reasons = []
    if not checks:
        reasons.append("scenario has no checks")
    elif not gold_pass:
        failed = failing_checks(list(checks), initial, gold_a.final_state, reply=reply)
        status = "" if gold_a.status == "ok" else f" (replay {gold_a.status}: {gold_a.reason})"
        reasons.append(
            "gold final state fails: " + "; ".join(c.description for c in failed[:3]) + status
        )
    if checks and not noop_fail:
        reasons.append("a do-nothing agent passes every check")
    if not deterministic:
        if not same_runs:
            reasons.append("two gold replays differ (final state, results or status)")
        elif not matches_gold_run:
            reasons.append("gold replay differs from the recorded gold run")
        else:
            reasons.append("check verdicts differ between two replays")
    selftest = CheckSelftest(
        scenario_id=scenario.scenario_id,
        gold_pass=gold_pass,
        noop_fail=noop_fail,
        deterministic=deterministic,
        mutation_kill_rate=round(kill_rate, 6),
        n_mutants=len(counted),
        reason="; ".join(reasons) or None,
    )
    return SelftestOutcome(selftest=selftest, mutants=judged)
