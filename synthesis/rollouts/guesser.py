"""The guesser: a seeded weak agent whose k attempts per task rate the task's difficulty offline.

What the agent is (its model; every number below is a module constant):

- It knows the plan. It makes the gold chain's calls in order, so finding the right tools
  is never where it fails; what makes a task hard is what happens between the calls. It
  copies ids out of its own results: wherever its run saw another record than the gold
  run did, it carries that record's id on (gold id -> its id), as an agent does.
- It matches records by the words of the task, loosely (the structural `decoys`). When a
  lookup lists several records and the task means one of them (the next call to use one
  of their ids uses its id, or the reply asks for its value), it keeps the listed records
  the task's words do not rule out: a record is ruled out only by a field whose value the
  meant record shows verbatim in the task text and it does not, where sharing a name part
  counts as matching (same surname, similar title). It takes one of those at random; from
  then on it acts on, and reports the values of, the one it took. A value the text states
  in other words (a date, an amount) does not help it.
- It does not reason over conditions (the structural `conditionals`). It reads the deciding
  value like the gold chain does but guesses the branch, right with probability
  1 - WRONG_BRANCH. A wrong guess where the change was due leaves it undone; a wrong guess
  where it was not (the "otherwise" branch) makes it believe it made the change and say so,
  without the status it was asked to report.
- It does not recognise a refusal as the answer (the structural `infeasible`). It makes the
  refused call as the gold chain does, and with probability MISSES_REFUSAL takes the
  refusal for a hiccup and reports the request as done, without the rule's fact.
- It loses track on long chains (the structural `steps`): before every call it stops, with
  probability SLIP, and apologises, leaving the rest undone.

Otherwise it answers honestly from its own run: the oracle's answer over its results, with
each listing seen the way it read it (the record it took where the gold run's was), so a
wrong pick reports the wrong record's value.

It is a control policy (dbt `control_policies()`): it rates tasks, it is not an agent under
test. Every draw comes from `Random(derive_seed("guesser", scenario_id, attempt, ...))`, the
per-step draws from their own seeds, so an attempt is a pure function of (scenario, attempt
seed) and the sandbox's results.
"""

from __future__ import annotations

import random
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.hashing import derive_seed
from synthesis.models import Scenario
from synthesis.rollouts.agents import (
    Action,
    FinalAnswer,
    Observation,
    ToolCallAction,
    ask_first,
    oracle_question,
)
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import asked_values
from synthesis.tasks.difficulty import DIFFICULTY_POLICY

NAME = DIFFICULTY_POLICY
SLIP = 0.03
WRONG_BRANCH = 0.5
MISSES_REFUSAL = 0.5
DONE_CLAIM = "All done: I have carried out your request."
LOST_TRACK = "I'm sorry, I lost track of the request and stopped before finishing it."


class GuesserPolicy:
    """One seeded attempt of the guesser on one scenario (build a new one per attempt)."""

    name = NAME

    def __init__(self, scenario: Scenario, model: EnvModel | None, attempt: int) -> None:
        self.scenario = scenario
        self.model = model
        self.attempt = attempt
        chain = scenario.gold_chain
        rng = random.Random(derive_seed(NAME, scenario.scenario_id, attempt))
        # Drawn up front in a fixed order, so a decision never depends on how far a run got.
        self.slips = [rng.random() < SLIP for _ in chain]
        wrong_branch = rng.random() < WRONG_BRANCH
        misses_refusal = rng.random() < MISSES_REFUSAL
        self.claims_done = False
        self.plan = list(range(len(chain)))
        if scenario.provenance.get("family") == "conditional" and wrong_branch:
            due = _conditional_change(scenario)
            if due is None:
                self.claims_done = True  # "otherwise": believes it made the change
            else:
                self.plan.remove(due)  # "then": leaves the change undone
        if scenario.kind == "infeasible" and misses_refusal:
            self.claims_done = True
        self.ids: dict[str, str] = {}
        self.views: list[Any] = [None] * len(chain)
        self.question = oracle_question(scenario)

    def next_action(self, observation: Observation) -> Action:
        asking = ask_first(self.question, observation)
        if asking is not None:
            return asking
        k = observation.step
        if k > 0:
            self._saw(self.plan[k - 1], observation.last_result)
        if k < len(self.plan):
            index = self.plan[k]
            if self.slips[index]:
                return FinalAnswer(LOST_TRACK)
            call = self.scenario.gold_chain[index]
            return ToolCallAction(
                tool=call.tool, args={p: _mapped(v, self.ids) for p, v in call.args.items()}
            )
        if self.claims_done:
            return FinalAnswer(DONE_CLAIM)
        state = observation.read_state() if observation.read_state is not None else None
        return FinalAnswer(oracle_answer(self.scenario, state, self.views, model=self.model))

    def _saw(self, index: int, result: Any) -> None:
        """Read the result of gold step `index` as this agent does: pick among listed
        siblings, then learn which of its records stand for the gold run's."""
        gold = (
            self.scenario.gold_results[index] if index < len(self.scenario.gold_results) else None
        )
        view = _own_view(result)
        gold_list, own_list = _listing(gold), _listing(view)
        meant = self._meant(index, gold_list)
        if meant is not None and own_list:
            rng = random.Random(derive_seed(NAME, self.scenario.scenario_id, self.attempt, index))
            candidates = _unruled(gold_list[meant], own_list, self.scenario.task_text)
            taken = candidates[rng.randrange(len(candidates))] if candidates else 0
            gold_id, own_id = gold_list[meant].get("id"), own_list[taken].get("id")
            if meant < len(own_list):
                own_list[meant], own_list[taken] = own_list[taken], own_list[meant]
            if isinstance(gold_id, str) and isinstance(own_id, str):
                self.ids[gold_id] = own_id
        _align(gold, view, self.ids)
        self.views[index] = view

    def _meant(self, index: int, listed: list[dict[str, Any]] | None) -> int | None:
        """Which listed record the task means: one a later gold call names, or whose value
        the reply asks for; None when the listing is not a choice (fewer than two)."""
        if not listed or len(listed) < 2:
            return None
        position = {rec.get("id"): i for i, rec in enumerate(listed)}
        for call in self.scenario.gold_chain[index + 1 :]:
            for _param, value in sorted(call.args.items()):
                if isinstance(value, str) and value in position:
                    return position[value]
        for item in asked_values(self.scenario.provenance.get("reply")):
            if item.step == index:
                for key in item.path:
                    if isinstance(key, int) and 0 <= key < len(listed):
                        return key
        return None


def _own_view(result: Any) -> Any:
    """`result` copied as deep as `_saw` changes it: the order of its listing (the records
    themselves are only read, so they are shared, not copied)."""
    if isinstance(result, list):
        return list(result)
    if isinstance(result, dict):
        view = dict(result)
        if isinstance(view.get("data"), list):
            view["data"] = list(view["data"])
        return view
    return result


def _unruled(meant: dict[str, Any], listed: list[dict[str, Any]], text: str) -> list[int]:
    """Positions of the listed records the task's words do not rule out (see the module
    docstring); the meant record's own position is among them when it is listed."""
    said = text.casefold()
    telling = [
        f
        for f, v in sorted(meant.items())
        if f != "id" and isinstance(v, str) and len(v) >= 3 and v.casefold() in said
    ]
    return [i for i, rec in enumerate(listed) if all(_alike(rec.get(f), meant[f]) for f in telling)]


def _alike(value: Any, meant: str) -> bool:
    if value == meant:
        return True
    if not isinstance(value, str):
        return False
    parts = {w for w in meant.casefold().split() if len(w) > 3}
    return len(parts) > 1 and bool(parts & set(value.casefold().split()))


def _conditional_change(scenario: Scenario) -> int | None:
    """The gold step that makes a conditional task's change (its "then" branch), or None
    when the gold run took the "otherwise" branch."""
    goal = scenario.provenance.get("goal") or []
    roles = scenario.provenance.get("roles") or []
    if not goal:
        return None
    for i, call in enumerate(scenario.gold_chain):
        if call.tool == goal[0] and i < len(roles) and roles[i] == "mutation":
            return i
    return None


def _listing(result: Any) -> list[dict[str, Any]] | None:
    """The records a result lists (the payload's `data` list, or the list itself)."""
    data = result.get("data") if isinstance(result, dict) else result
    if isinstance(data, list) and data and all(isinstance(r, dict) and "id" in r for r in data):
        return data
    return None


def _align(gold: Any, own: Any, ids: dict[str, str]) -> None:
    """Learn gold id -> own id wherever both runs show a record in the same place."""
    if isinstance(gold, dict) and isinstance(own, dict):
        for key in sorted(set(gold) & set(own)):
            g, o = gold[key], own[key]
            if (key == "id" or key.endswith("_id")) and isinstance(g, str) and isinstance(o, str):
                # The latest result wins: a fresh lookup shows the agent which record it has.
                if g == o:
                    ids.pop(g, None)
                else:
                    ids[g] = o
            else:
                _align(g, o, ids)
    elif isinstance(gold, list) and isinstance(own, list) and len(gold) == len(own):
        for g, o in zip(gold, own, strict=True):
            _align(g, o, ids)


def _mapped(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [ids.get(v, v) if isinstance(v, str) else v for v in value]
    return value


def guesser_policies(
    scenario: Scenario, model: EnvModel | None, attempts: int
) -> list[GuesserPolicy]:
    """The `attempts` seeded attempts of the guesser on `scenario` (attempt seeds 0..k-1)."""
    return [GuesserPolicy(scenario, model, attempt) for attempt in range(attempts)]
