"""From what a planner planned to a scenario: the task-plan record, its words, its id.

Every planner ends here (the spec planner's families, goal-directed planning, the explorer,
the workspace planner): `task_plan_of` turns a `Planner` and its family's `Outcome` into the
plain `TaskPlan` record (gold chain, goals, facts the text must carry, hidden ids, reply
contract, difficulty); `assemble_scenario` words it with the offline phrasing and drops a
task whose words would leak an id or give its own answer away. The helpers here are what the
LLM stages that reword or propose tasks check their words against (`safe_reply`,
`mentions_an_id`, `plan_facts`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

from synthesis import codec
from synthesis.environments.model import EnvModel
from synthesis.environments.splits import environment_split
from synthesis.environments.topology import id_params
from synthesis.hashing import content_hash, short_id
from synthesis.models import Environment, InitialState, Scenario, ToolCall
from synthesis.tasks.checks import REMOVED, AskedValue, diff_states, reply_request
from synthesis.tasks.dialogue import user_record
from synthesis.tasks.difficulty import difficulty_record
from synthesis.tasks.envfoundry_reward import error_tells, mentions
from synthesis.tasks.phrasing import phrase, value_words
from synthesis.tasks.plan import TaskPlan
from synthesis.tasks.planner import STEP_RESULT, Outcome, Planner
from synthesis.tasks.spec_model import SpecModel, json_copy
from synthesis.tasks.text.voices import Persona

GENERATOR = "topology_walk/v1"


def gold_chain_key(state_id: str, gold_chain: Iterable[ToolCall]) -> str:
    """Dedup key: two tasks with the same state and gold chain are the same task."""
    return content_hash([state_id, [c.model_dump(mode="json") for c in gold_chain]])


def keep_distinct(scenario: Scenario, seen: set[str], out: list[Scenario]) -> bool:
    """Add `scenario` to `out` unless a task of the same state and gold chain is there
    (`seen`: their keys); whether it was added."""
    key = gold_chain_key(scenario.state_id, scenario.gold_chain)
    if key in seen:
        return False
    seen.add(key)
    out.append(scenario)
    return True


def task_plan_of(
    planner: Planner,
    outcome: Outcome,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
    *,
    extra: dict[str, Any],
) -> TaskPlan | None:
    """The task-plan record of what `planner` planned (None if it makes no gradable task:
    no goal, too long, or no change and no reply to grade). An infeasible task's refused
    request changes nothing (`Planner.attempt`); its other goals may."""
    model = planner.model
    if not planner.goals or len(planner.steps) > max_chain_length:
        return None
    reply = outcome.expected_reply()
    changed = planner.world.state != state.state
    if outcome.kind == "feasible" and not changed and reply is None:
        return None
    if reply is not None:
        reply["candidates"] = candidate_values(planner, outcome)
    if reply is not None and "refusal" in reply:
        # Refused alone, a reply that claims something was done is false; beside goals that
        # were done, it may say so of them.
        reply["refusal"] = {**reply["refusal"], "alone": not changed}
    if reply is not None and changed:
        # The right reply states what changed ("its price is now 90 (it was 110.83)"): a
        # decoy's value that the changes themselves carry cannot tell a wrong reply apart.
        said = _changed_words(state.state, planner.world.state)
        for key in ("exclude", "candidates"):
            reply[key] = [v for v in reply[key] if value_words(v).casefold() not in said]
    hidden = hidden_lookups(model, planner.steps, planner.roles)
    # The gold chain played once in the exact model: both readings below need its results.
    results = chain_results(model, state.state, planner.steps)
    decoys = listed_decoys(model, state.state, planner.steps, planner.roles, results=results)
    return TaskPlan(
        env_id=model.env_id,
        state_id=state.state_id,
        seed=seed,
        index=index,
        title=model.title,
        labels=[c.label for c in model.collections],
        goals=list(planner.goals),
        gold_chain=list(planner.steps),
        roles=list(planner.roles),
        facts=plan_facts(model, planner.steps),
        hidden_ids=sorted(state_ids(state.state, planner.world.state)),
        goal_tools=list(outcome.goal_tools),
        generator=GENERATOR,
        extra=dict(extra),
        kind="infeasible" if outcome.kind == "infeasible" else "feasible",
        expected_reply=reply,
        asked=[
            a.to_json()
            for a in asked_in_chain(
                model, state.state, planner.steps, outcome.asked, results=results
            )
        ],
        difficulty=difficulty_record(
            steps=len(planner.steps),
            n_mutations=planner.roles.count("mutation"),
            n_lookups=planner.roles.count("lookup"),
            hidden_lookups=hidden,
            decoys=decoys + len(outcome.exclude),
            conditionals=outcome.conditionals,
            infeasible=outcome.kind == "infeasible",
        ),
    )


def stored_reply(plan: TaskPlan, reply: dict[str, Any], **system: Any) -> dict[str, Any]:
    """The reply contract the checks, the oracle and the self-test read (checks.py), from a
    plan's asked values and its expected reply; `system`: the rules and tool descriptions a
    question's answer may not recite (`reply_request`)."""
    return reply_request(
        [AskedValue(a["what"], a["value"], a["step"], tuple(a["path"])) for a in plan.asked],
        reply["exclude"],
        candidates=reply["candidates"],
        refusal=reply.get("refusal"),
        **system,
    )


def candidate_values(planner: Planner, outcome: Outcome) -> list[Any]:
    """The values a hedge would state beside the right one: every other value the asked
    attributes have among the records (and may take, for an enum), and the other values of
    a refusal's facts. A reply that states one of them is not a specific answer. Free text
    (a message's body, a title) is no candidate: a right reply names other records by theirs,
    and no hedge lists sentences."""
    asked = [a for a in outcome.asked if a[0] not in (STEP_RESULT, "#count", "#aggregate")]
    said = {repr(planner.world.records(e).get(rid, {}).get(f)) for e, rid, f, _ in asked}
    values: dict[str, Any] = {}
    for entity, _rid, fname, _what in asked:
        for value in planner.attribute_values(entity, fname):
            values.setdefault(repr(value), value)
    for value in (outcome.refusal or {}).get("candidates", []):
        values.setdefault(repr(value), value)
    return [values[k] for k in sorted(values) if k not in said and not _free_text(values[k])]


# A value of more words than this is free text, not a candidate answer.
CANDIDATE_WORDS = 3


def _free_text(value: Any) -> bool:
    return isinstance(value, str) and len(value.split()) > CANDIDATE_WORDS


def _changed_words(initial: dict[str, Any], final: dict[str, Any]) -> set[str]:
    """Casefolded words of every value the changes from `initial` to `final` set or replace,
    and of the fields of records they create: what a reply stating the outcome may say."""
    diff = diff_states(initial, final)
    values: list[Any] = []
    for coll, rid, fname, new in diff.changed:
        values += [new, initial[coll][rid].get(fname, REMOVED)]
    for _, _, record in diff.created:
        values += list(record.values())
    return {value_words(v).casefold() for v in values if v is not REMOVED and v is not None}


def chain_results(
    model: EnvModel, initial: dict[str, Any], chain: list[ToolCall]
) -> list[dict[str, Any]]:
    """What each call of `chain` returns when played from `initial` in the exact model."""
    world = SpecModel(model, initial)
    return [world.call(c.tool, c.args) for c in chain]


def asked_in_chain(
    model: EnvModel,
    initial: dict[str, Any],
    chain: list[ToolCall],
    asked: list[tuple[str, str, str, str]],
    *,
    results: list[dict[str, Any]] | None = None,
) -> list[AskedValue]:
    """Each asked value with the last gold step whose result shows it (and where), so the
    oracle's answer, and a mutant's, read it from what that run saw. `results` are the
    chain's (`chain_results`) when the caller has them."""
    if results is None:
        results = chain_results(model, initial, chain)
    out = []
    for entity, rid, fname, what in asked:
        if entity == STEP_RESULT:
            # A figure a step computed (an aggregate): its value where that step shows it.
            step, path = int(rid), tuple(fname)
            value: Any = results[step]
            for key in path:
                value = value[key]
            out.append(AskedValue(what, value, step, path))
            continue
        # The value before the chain, as a fresh SpecModel reads it (only the value copied).
        value = json_copy(initial.get(model.entity(entity).collection, {})[rid][fname])
        step: int | None = None
        path: tuple[Any, ...] = (model.entity(entity).collection, rid, fname)
        for i, result in enumerate(results):
            data = result.get("data") if result.get("success") else None
            if isinstance(data, dict) and data.get("id") == rid and fname in data:
                step, path = i, ("data", fname)
            elif isinstance(data, list):
                for j, rec in enumerate(data):
                    if isinstance(rec, dict) and rec.get("id") == rid and fname in rec:
                        step, path = i, ("data", j, fname)
        out.append(AskedValue(what, value, step, path))
    return out


def hidden_lookups(model: EnvModel, chain: list[ToolCall], roles: list[str]) -> int:
    """Lookups that take an id an earlier step revealed (chained reads)."""
    n = 0
    for call, role in zip(chain, roles, strict=True):
        if role == "lookup" and any(
            call.args.get(p) is not None for p in id_params(model.tool(call.tool))
        ):
            n += 1
    return n


def listed_decoys(
    model: EnvModel,
    initial: dict[str, Any],
    chain: list[ToolCall],
    roles: list[str],
    *,
    results: list[dict[str, Any]] | None = None,
) -> int:
    """Records the agent must tell apart from the one meant: the others each listing shows
    (`results`: the chain's, `chain_results`, when the caller has them)."""
    if results is None:
        results = chain_results(model, initial, chain)
    n = 0
    for call, role, result in zip(chain, roles, results, strict=True):
        if role == "lookup" and model.tool(call.tool).operation == "list":
            n += max(0, len(result.get("data") or []) - 1)
    return n


def plan_facts(model: EnvModel, chain: Iterable[ToolCall]) -> list[str]:
    """The values a task's words must carry: every argument that is not a record id."""
    facts: list[str] = []
    for call in chain:
        ids = id_params(model.tool(call.tool))
        for name, value in call.args.items():
            if name not in ids and isinstance(value, (str, int, float, bool)):
                facts.append(value_words(value))
    return list(dict.fromkeys(facts))


def assemble_scenario(
    env: Environment,
    state: InitialState,
    plan: TaskPlan,
    rng: random.Random,
) -> Scenario | None:
    """A scenario from a plan, worded by the offline phrasing (None if the words leak an id);
    multi-turn when its user holds a detail back (synthesis.tasks.dialogue)."""
    refusal = (plan.expected_reply or {}).get("refusal") or {}
    text, persona = phrase(plan, rng, archetype=env.archetype)
    if mentions_an_id(text, plan.hidden_ids):
        return None
    chain = list(plan.gold_chain)
    n_mutations = plan.n_mutations
    reply = safe_reply(plan, text)
    if plan.expected_reply is not None and (reply is None or not plan.asked):
        return None
    if refusal and not error_tells(refusal["reasons"], text):
        return None  # the tool's error is the request's own words: quoting it shows nothing
    facts = int(refusal.get("asked_facts", 0))
    if any(mentions(text, a["value"], spoken=True) for a in plan.asked[facts:]):
        return None  # a request that states its own answer: echoing it back would earn
    extra = dict(plan.extra)
    if reply is not None:
        extra["reply"] = stored_reply(
            plan,
            reply,
            rules=env.spec.rules if env.spec is not None else (),
            tools=[t.description for t in env.spec.tools if t.description]
            if env.spec is not None
            else (),
        )
    difficulty = dict(plan.difficulty) or difficulty_record(
        steps=len(chain),
        n_mutations=n_mutations,
        n_lookups=plan.roles.count("lookup"),
        hidden_lookups=0,
        decoys=0,
        conditionals=0,
        infeasible=False,
    )
    user = user_record(plan, text, persona, env.archetype)
    if user is not None and mentions_an_id(codec.dumps_str(user.record), plan.hidden_ids):
        user = None  # the user never names a hidden record: single-turn instead
    if user is not None and user.stage_steps:
        # Where the oracle replies before the user's next request (engine only: a trainer's
        # agent is told nothing of the gold chain).
        extra["stage_steps"] = user.stage_steps
    record = user.record if user is not None else None
    return scenario_of(env, state, plan, text, persona, difficulty, reply, extra, record)


def scenario_of(
    env: Environment,
    state: InitialState,
    plan: TaskPlan,
    text: str,
    persona: Persona,
    difficulty: dict[str, Any],
    reply: dict[str, Any] | None,
    extra: dict[str, Any],
    user: dict[str, Any] | None = None,
) -> Scenario:
    """The scenario record of a worded plan (both planners', the workspace one's too): its
    id from its environment, state, gold chain and words; `reply` the reply it expects,
    `extra` what joins the provenance."""
    chain = list(plan.gold_chain)
    scenario = Scenario(
        scenario_id=scenario_id_of(env.env_id, state.state_id, chain, text, user),
        env_id=env.env_id,
        state_id=state.state_id,
        kind=plan.kind,
        task_text=text,
        initial_state=json_copy(state.state),
        initial_dump=json_copy(state.dump) if state.dump is not None else None,
        gold_chain=chain,
        split=environment_split(env),
        difficulty=difficulty,
        expected_reply=reply,
        user=user,
        provenance={
            "generator": plan.generator,
            "seed": plan.seed,
            "index": plan.index,
            "persona": persona.name,
            "register": persona.register,
            "goal": list(plan.goal_tools),
            "roles": list(plan.roles),
            **extra,
        },
    )
    scenario._plan = plan
    return scenario


def scenario_id_of(
    env_id: str,
    state_id: str,
    chain: list[ToolCall],
    text: str,
    user: dict[str, Any] | None = None,
) -> str:
    """A scenario's id: its environment, state, gold chain and words (and its user's, for a
    multi-turn task)."""
    said = [user] if user else []
    calls = [c.model_dump(mode="json") for c in chain]
    return short_id("scenario", env_id, state_id, calls, text, *said)


def reworded(scenario: Scenario, text: str, provenance: dict[str, Any]) -> Scenario:
    """`scenario` asking for the same plan in other words, `provenance` added to its own.

    Its id follows the words. Nothing else changes: the caller has checked that the words
    leave the reply contract as it was (`safe_reply` of either text is the same), so the
    checks, and the wrong-record screen the planner ran on them, still hold."""
    out = scenario.model_copy(
        update={
            "scenario_id": scenario_id_of(
                scenario.env_id, scenario.state_id, scenario.gold_chain, text, scenario.user
            ),
            "task_text": text,
            "provenance": {**scenario.provenance, **provenance},
        }
    )
    out._plan = scenario._plan
    return out


def safe_reply(plan: TaskPlan, text: str) -> dict[str, Any] | None:
    """The plan's reply contract without decoys a right reply could innocently contain.

    A decoy that is in the task text, is (part of) a value the reply must carry, or is a
    status or value the task's own changes set ("I cancelled it") is dropped. None when the
    plan has no contract, or when nothing is left for the reply to carry.
    """
    if plan.expected_reply is None:
        return None
    include = [str(v) for v in plan.expected_reply.get("include", [])]
    said = [text.casefold()] + [v.casefold() for v in include]
    for goal in plan.goals:
        for g in (goal, goal.then):
            if g is None:
                continue
            said += [str(g.to_status or "").casefold()] + [v.casefold() for _, v in g.values]

    def innocent(v: Any) -> bool:
        words = value_words(v).casefold()
        return any(words in s or (s and s in words) for s in said[1:]) or words in said[0]

    exclude = [str(v) for v in plan.expected_reply.get("exclude", []) if not innocent(v)]
    candidates = [v for v in plan.expected_reply.get("candidates", []) if not innocent(v)]
    if not include:
        return None
    out: dict[str, Any] = {"include": include, "exclude": exclude, "candidates": candidates}
    if "rule" in plan.expected_reply:
        out["rule"] = plan.expected_reply["rule"]
    if "refusal" in plan.expected_reply:
        out["refusal"] = plan.expected_reply["refusal"]
    return out


def state_ids(*states: dict[str, Any]) -> set[str]:
    """Every record id in the given states (the keys of each id-keyed collection)."""
    out: set[str] = set()
    for st in states:
        for coll in st.values():
            if isinstance(coll, dict):
                out.update(str(rid) for rid in coll)
    return out


def mentions_an_id(text: str, ids: Iterable[str]) -> bool:
    """Whether `text` names an internal id (which would let an agent skip a lookup)."""
    # Most ids are nowhere in the text: a plain substring test rules them out before the
    # regex (sound only for ASCII text, where IGNORECASE folds exactly as lower() does).
    folded = text.lower() if text.isascii() else None
    for rid in ids:
        # Bare numbers ("3") would match any quantity; only id-shaped tokens can leak.
        if rid.isdigit() and len(rid) < 4:
            continue
        if folded is not None and rid.isascii():
            if _ascii_token_in(folded, rid.lower()):
                return True
            continue
        if re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text, re.IGNORECASE):
            return True
    return False


# What `[\w-]` matches next to an ASCII token in ASCII text, lower-cased.
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def _ascii_token_in(folded: str, token: str) -> bool:
    """Whether lower-cased ASCII `token` occurs in lower-cased ASCII `folded` with no word
    character or hyphen on either side: the regex above, without compiling a pattern per id
    (the planner asks this of every id of every state for each candidate)."""
    at = folded.find(token)
    while at >= 0:
        end = at + len(token)
        if (at == 0 or folded[at - 1] not in _ASCII_WORD) and (
            end == len(folded) or folded[end] not in _ASCII_WORD
        ):
            return True
        at = folded.find(token, at + 1)
    return False
