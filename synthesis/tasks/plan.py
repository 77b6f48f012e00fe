"""The task-plan record: what a task asks for, decided by a planner before any wording.

A planner (synthesis.tasks.planner with a task family for exact models,
synthesis.tasks.explorer for inferred ones) emits one TaskPlan per candidate task: the gold
chain, the goals it serves, the words that name each record without its id, the facts the
text must carry and the ids it must hide. Phrasing (synthesis.tasks.phrasing offline, an LLM
stage later) reads only this record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from synthesis.models import ToolCall

GoalKind = Literal["create", "transition", "update", "action", "ask", "conditional", "refuse"]
"""`ask`: a value read from the state, changing nothing; `conditional`: a read decides whether
the mutation is done (else the reply states what was read); `refuse`: a request a guard of the
tool refuses in this state (the reply names the rule's fact)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanGoal(_Record):
    """One change the task asks for, and the words that name what it acts on."""

    kind: GoalKind
    tool: str
    verb: str = Field(description="the action's verb, from the tool name")
    target: str | None = Field(
        default=None, description="how the task names the record acted on (never its id)"
    )
    refs: list[str] = Field(
        default_factory=list, description="how it names the records a new one is created for"
    )
    values: list[tuple[str, str]] = Field(
        default_factory=list, description="(what, value) pairs the task states, in words"
    )
    label: str | None = Field(default=None, description="the noun of a created record")
    to_status: str | None = None
    says_result: bool = Field(
        default=False, description="whether the text states the status the record ends in"
    )
    description: str = Field(default="", description="the tool's own description (actions)")
    owner: tuple[str, str] | None = Field(
        default=None,
        description="(label, words) of the person the record belongs to, when the task "
        "names it through them: ('artist', 'Ada Lee (ada@example.com)'); lets phrasing speak "
        "as that person ('my order')",
    )
    own_target: str | None = Field(
        default=None,
        description="how the owner names the record without naming themselves "
        "('order with status paid'); for a create, the refs other than the owner, joined",
    )
    question: str | None = Field(
        default=None, description="ask: what is asked, e.g. 'the status of the order ...'"
    )
    condition: str | None = Field(
        default=None, description="conditional: the status the mutation is done in"
    )
    otherwise: str | None = Field(
        default=None, description="conditional: what to report when the condition fails"
    )
    then: PlanGoal | None = Field(
        default=None, description="conditional/refuse: the mutation asked for, as a goal"
    )
    withheld: list[str] = Field(
        default_factory=list,
        description="the `what` of values the user's opening leaves out (a multi-turn task's "
        "first message, synthesis.tasks.dialogue): said as 'change the tag of ...', no value",
    )


PlanGoal.model_rebuild()


class TaskPlan(_Record):
    env_id: str
    state_id: str
    seed: int
    index: int
    title: str = Field(description="the domain's name, for the request's opener")
    labels: list[str] = Field(
        default_factory=list,
        description="the nouns of the environment's collections (which shorter words for a "
        "record's noun could be mistaken for another kind)",
    )
    goals: list[PlanGoal]
    gold_chain: list[ToolCall]
    roles: list[str] = Field(description="per gold step: 'lookup' or 'mutation' (or 'enable')")
    facts: list[str] = Field(
        default_factory=list, description="values the text must carry verbatim, in words"
    )
    hidden_ids: list[str] = Field(
        default_factory=list, description="record ids the text must never show"
    )
    goal_tools: list[str] = Field(default_factory=list)
    generator: str
    extra: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["feasible", "infeasible"] = "feasible"
    expected_reply: dict[str, Any] | None = Field(
        default=None,
        description="what the final reply must (include) and must not (exclude) contain, "
        "and the broken rule of an infeasible task",
    )
    difficulty: dict[str, Any] = Field(default_factory=dict)
    asked: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the reply's asked values as synthesis.tasks.checks.AskedValue JSON "
        "(what, value, and the gold step and path whose result shows it)",
    )

    @property
    def n_mutations(self) -> int:
        return self.roles.count("mutation")
