"""The registry of LLM stages, and the docs page generated from it (docs/llm-stages.md).

Each stage is a module exposing `STAGE` (its name: the ledger's `stage`, the json_schema
name of its requests, the `__<STAGE>` suffix of its overrides), `SCHEMA` (the JSON schema
of an answer) and `PROMPT` (its system prompt). Registering one is one line in `STAGES`.
A registered module that fails to import, or lacks a constant, fails the page (and its
test) loudly: a stage never vanishes from its own documentation.

    python -m synthesis.llm.stages > docs/llm-stages.md     (or: make docs)
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from synthesis.config import BUILD_SETTINGS, PROFILES, STAGE_SETTINGS, LLMSettings, Profile

PAGE = "docs/llm-stages.md"
COMMAND = "python -m synthesis.llm.stages > docs/llm-stages.md"


@dataclass(frozen=True)
class Stage:
    name: str  # its module: synthesis.llm.<name>, or a dotted path; the module's STAGE names it
    asset: str  # the Dagster asset whose runs call it
    role: str  # one line: what the model is asked for

    @property
    def module(self) -> str:
        return self.name if "." in self.name else f"synthesis.llm.{self.name}"


# In pipeline order; one line a stage.
STAGES: tuple[Stage, ...] = (
    Stage("topic_mining", "mined_topics", "mines new topics from the task corpus"),
    Stage(
        "project_topic",
        "mined_topics",
        "writes what a mined project topic's folder holds (ledger, fields, groups, items, "
        "statuses), checked by making the folder and planning its tasks",
    ),
    Stage("env_spec", "llm_env_specs", "writes an EnvSpec for a topic, compiled by our compiler"),
    Stage("env_code", "llm_env_code", "writes an environment class (run only in the sandbox)"),
    Stage(
        "audit_judge",
        "env_judgement",
        "proposes calls to every tool (tester) and grades each from the states before and "
        "after and the result (judge)",
    ),
    Stage("initial_state", "initial_states", "writes a seed state for an environment"),
    Stage("task_plan", "scenarios", "proposes task goals the planner must prove"),
    Stage("task_text", "scenarios", "rewords a planned task's text in its persona's voice"),
    Stage("user_sim", "trajectories", "words a multi-turn task's user's answers in its persona"),
    Stage(
        # Described beside the policy it is (the rollouts), not among the client's stages.
        "synthesis.rollouts.agent_stage",
        "trajectories",
        "acts as the agent under test (tool calls), k attempts per task: the difficulty "
        "calibration that task_screening filters on",
    ),
)
# Settings whose pydantic field carries no description.
_DESCRIPTIONS = {
    "model": "the model name sent on every request (any string the endpoint accepts)",
    "price_in_per_mtok": "USD per million prompt tokens (cost, budgets and marts)",
    "price_out_per_mtok": "USD per million answer tokens",
}


def load(stage: Stage) -> ModuleType:
    """The stage's module; an import error, or a module without STAGE, SCHEMA and PROMPT,
    is raised: a broken stage must not vanish."""
    module = importlib.import_module(stage.module)
    missing = [n for n in ("STAGE", "SCHEMA", "PROMPT") if not hasattr(module, n)]
    if missing:
        raise AttributeError(f"{stage.module} lacks {', '.join(missing)}")
    return module


def _settings_rows() -> list[str]:
    fields = LLMSettings.model_fields
    rows = [
        "| `OPENAI_BASE_URL` | unset | the endpoint; unset, every stage runs offline |",
        "| `OPENAI_API_KEY` | unset | sent to the endpoint, never written to a file |",
    ]
    for var, name in {**BUILD_SETTINGS, **STAGE_SETTINGS}.items():
        field = fields[name]
        default = "unset" if field.default is None else f"`{field.default}`"
        per_stage = " (per stage: `" + var + "__<STAGE>`)" if var in STAGE_SETTINGS else ""
        text = (field.description or _DESCRIPTIONS.get(name, name)) + per_stage
        rows.append(f"| `{var}` | {default} | {text} |")
    return rows


def _profile_rows() -> list[str]:
    names = [n for n in Profile.model_fields if n.startswith("llm_")]
    head = "| profile | " + " | ".join(f"`{n}`" for n in names) + " |"
    rows = [head, "|---" * (len(names) + 1) + "|"]
    for profile in PROFILES.values():
        values = " | ".join(str(getattr(profile, n)) for n in names)
        rows.append(f"| {profile.name} | {values} |")
    return rows


def _stage_section(stage: Stage, module: ModuleType) -> list[str]:
    role = stage.role[0].upper() + stage.role[1:]
    schema: Any = module.SCHEMA
    return [
        f"### `{module.STAGE}`",
        "",
        f"{role}. Module `{stage.module}`, run by the asset `{stage.asset}`.",
        "",
        "Answer schema:",
        "",
        "```json",
        json.dumps(schema, indent=2, ensure_ascii=False),
        "```",
        "",
        "Prompt:",
        "",
        "```text",
        module.PROMPT,
        "```",
        "",
    ]


def render() -> str:
    """The whole page."""
    loaded = [(s, load(s)) for s in STAGES]
    lines = [
        "# LLM stages",
        "",
        f"<!-- generated by `{COMMAND}` (make docs) from synthesis/llm/stages.py; do not edit -->",
        "",
        "Every stage asks its model through one client (`synthesis/llm/client.py`): budgets, "
        "deadline, circuit breaker, retries, cache of accepted answers, and a ledger row per "
        "attempt (`llm_calls`). A stage checks each answer against its schema and its own "
        "rules; anything else (rejected, unanswered, stopped) keeps the offline result with "
        "a recorded reason `<stage>: <why>`. Without `OPENAI_BASE_URL` no stage runs.",
        "",
        "| stage | role | module | asset |",
        "|---|---|---|---|",
    ]
    for stage, module in loaded:
        lines.append(f"| `{module.STAGE}` | {stage.role} | `{stage.module}` | `{stage.asset}` |")
    lines += ["", "## Settings", "", "| variable | default | what |", "|---|---|---|"]
    lines += _settings_rows()
    lines += [
        "",
        "A stage's overrides take its name upper-cased, e.g. `ENVFOUNDRY_BUDGET_USD__AGENT`; "
        "its own caps apply on top of the build-wide ones. The end-of-build summary and the "
        "`warehouse/llm_calls` asset's metadata say what each stage spent and which stopped "
        "at which setting; the marts `mart_llm_spend*` break spend down by build and stage, "
        "accepted environment, published task and successful trajectory.",
        "",
        "## Profile shares",
        "",
        "How much of a build each stage takes when an endpoint is set (`synthesis/config.py`):",
        "",
    ]
    lines += _profile_rows()
    lines += ["", "## Stages", ""]
    for stage, module in loaded:
        lines += _stage_section(stage, module)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render(), end="")
