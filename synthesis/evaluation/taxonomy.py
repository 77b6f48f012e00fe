"""Why an episode failed, in one word: a pure function of its checks' verdicts and transcript.

The reward says how much an agent achieved; the failure class says what went wrong, so a
model's errors can be counted by kind (the `failure` column of `eval_episodes`). A state
check reads the final state, a reply check the final reply (`REPLY_CHECK_TYPES` of
envfoundry_reward); roles are the checks' own (goal, guard). The classes, tried in this
order (the first that fits wins):

* `none`: the episode succeeded (every check passed).
* `llm_error`: it ended in an LLMError (no answer from the endpoint after the retries).
* `invalid_tool_or_arguments`: the client rejected the model's turn as a call of an unknown
  tool or with arguments that are not a JSON object (the episode ends there).
* `out_of_turns`: it hit the step limit (`synthesis.rollouts.episodes.default_max_steps`).
* `complied_infeasible`: an infeasible task where a forbidden change happened (a state guard
  failed), or where the agent acted and then did not decline (the refusal goal failed).
* `refused_feasible`: a feasible task whose reply declined with no tool call, or declined
  while a goal failed.
* `no_action`: no tool call, and a reply that earned nothing.
* `wrong_record`: a state guard failed (something changed that should not have) and a state
  goal failed: the change landed on another record than the one asked for.
* `collateral_damage`: a state guard failed although every state goal held: the work was
  done, plus changes nobody asked for.
* `wrong_or_missing_answer`: a reply check failed: an asked value not stated (or stated
  without a call showing it), a decoy's value stated, a refusal without a true reason, a
  dump of the records.
* `invalid_tool_or_arguments`: none of the above, and some call failed for an unknown tool or
  bad arguments (an unknown parameter, a missing one, a value of the wrong type).
* `other`: anything else (a goal not done, with nothing above to say why).

When the verdicts are unknown (`verdicts=None`), the classes that need them are not given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from synthesis.tasks.envfoundry_reward import GUARD, REPLY_CHECK_TYPES, decline_cue

NONE = "none"
LLM_ERROR = "llm_error"
NO_ACTION = "no_action"
WRONG_RECORD = "wrong_record"
COLLATERAL_DAMAGE = "collateral_damage"
WRONG_OR_MISSING_ANSWER = "wrong_or_missing_answer"
REFUSED_FEASIBLE = "refused_feasible"
COMPLIED_INFEASIBLE = "complied_infeasible"
INVALID_TOOL_OR_ARGUMENTS = "invalid_tool_or_arguments"
OUT_OF_TURNS = "out_of_turns"
OTHER = "other"

FAILURE_CLASSES = (
    NONE,
    LLM_ERROR,
    NO_ACTION,
    WRONG_RECORD,
    COLLATERAL_DAMAGE,
    WRONG_OR_MISSING_ANSWER,
    REFUSED_FEASIBLE,
    COMPLIED_INFEASIBLE,
    INVALID_TOOL_OR_ARGUMENTS,
    OUT_OF_TURNS,
    OTHER,
)

# What a tool's error says when the call itself was wrong (unknown tool, a parameter that
# does not exist or is missing, a value of the wrong type), as the sandbox and the compiled
# classes word it; a domain refusal ("no barber with name ...") is not one.
_INVALID_CALL = re.compile(
    r"unknown tool|no such tool|not a tool|unexpected keyword argument|"
    r"missing \d+ required (?:positional |keyword-only )?argument|"
    r"takes \d+ positional arguments? but|arguments? (?:are|is) not (?:valid )?JSON|"
    r"not a JSON object|\bmust be (?:a|an) (?:string|str|integer|int|number|float|"
    r"boolean|bool|list|array|object|dict)\b|^TypeError:",
    re.IGNORECASE,
)
# The client's reasons for rejecting a turn of tool calls (synthesis.rollouts.agents).
_REJECTED_CALL = re.compile(r"^tool:")


@dataclass(frozen=True)
class Verdict:
    """One check's verdict on the episode: its spec's `type`, its role and whether it held."""

    type: str
    role: str
    passed: bool

    @property
    def reads_reply(self) -> bool:
        return self.type in REPLY_CHECK_TYPES

    @property
    def guard(self) -> bool:
        return self.role == GUARD


@dataclass(frozen=True)
class EpisodeFacts:
    """What the failure class is decided from.

    `verdicts`: one per check (None: not known); `tool_errors`: the error text of every call
    that failed, in order; `reply`: the final assistant text; `rejection`: why the client
    rejected the model's last turn (None: it did not); `error`: the LLMError that ended the
    episode (None: it finished)."""

    success: bool
    kind: str = "feasible"
    verdicts: tuple[Verdict, ...] | None = ()
    tool_calls: int = 0
    tool_errors: tuple[str, ...] = field(default_factory=tuple)
    reply: str = ""
    hit_step_limit: bool = False
    rejection: str | None = None
    error: str | None = None


def invalid_call(error: str) -> bool:
    """Whether a tool's error says the call itself was malformed (tool, parameter, type)."""
    return bool(_INVALID_CALL.search(error or ""))


def classify(facts: EpisodeFacts) -> str:
    """The episode's failure class (see the module's table); `none` for a success."""
    if facts.success and facts.error is None:
        return NONE
    if facts.error is not None:
        return LLM_ERROR
    if facts.rejection is not None and _REJECTED_CALL.match(facts.rejection):
        return INVALID_TOOL_OR_ARGUMENTS
    if facts.hit_step_limit:
        return OUT_OF_TURNS
    verdicts: Sequence[Verdict] = facts.verdicts or ()
    failed = [v for v in verdicts if not v.passed]
    state_guard = any(v.guard and not v.reads_reply for v in failed)
    state_goal = any(not v.guard and not v.reads_reply for v in failed)
    reply_failed = any(v.reads_reply for v in failed)
    refusal_failed = any(v.type == "reply_refuses" for v in failed)
    goal_failed = any(not v.guard for v in failed)
    declined = decline_cue(facts.reply) if facts.reply else False
    infeasible = facts.kind == "infeasible"

    if infeasible and (state_guard or (refusal_failed and facts.tool_calls and not declined)):
        return COMPLIED_INFEASIBLE
    if facts.tool_calls == 0:
        return REFUSED_FEASIBLE if declined and not infeasible else NO_ACTION
    if state_guard:
        return WRONG_RECORD if state_goal else COLLATERAL_DAMAGE
    if not infeasible and declined and (goal_failed or facts.verdicts is None):
        return REFUSED_FEASIBLE
    if reply_failed:
        return WRONG_OR_MISSING_ANSWER
    if any(invalid_call(e) for e in facts.tool_errors):
        return INVALID_TOOL_OR_ARGUMENTS
    return OTHER
