"""The LLM stages registry and its page: every registered stage that exists exposes
STAGE, SCHEMA (a JSON schema) and PROMPT, and docs/llm-stages.md is what they generate."""

from __future__ import annotations

import json
import sys
import types

import jsonschema
import pytest

from synthesis.config import REPO_ROOT
from synthesis.llm import stages


def test_the_committed_page_is_the_generated_one():
    committed = (REPO_ROOT / stages.PAGE).read_text()
    assert committed == stages.render(), f"stale: regenerate with `{stages.COMMAND}`"


@pytest.mark.parametrize("stage", stages.STAGES, ids=lambda s: s.name)
def test_each_existing_stage_describes_itself(stage):
    module = stages.load(stage)
    assert isinstance(module.STAGE, str) and module.STAGE.isidentifier()  # a `__<STAGE>` suffix
    jsonschema.validators.validator_for(module.SCHEMA).check_schema(module.SCHEMA)
    json.dumps(module.SCHEMA)  # exportable as JSON
    assert isinstance(module.PROMPT, str) and module.PROMPT.strip()
    page = stages.render()
    assert f"### `{module.STAGE}`\n" in page and module.PROMPT in page


def test_stage_names_are_unique_and_every_stage_of_the_issue_is_registered():
    names = [stages.load(s).STAGE for s in stages.STAGES]
    assert len(names) == len(set(names))  # one ledger name, one override suffix per stage
    assert names == [
        "topic",
        "project_topic",
        "env_spec",
        "env_code",
        "audit_judge",
        "initial_state",
        "task_plan",
        "task_text",
        "user_sim",
        "agent",
    ]


def test_a_broken_or_missing_stage_module_fails_loudly(monkeypatch):
    broken = types.ModuleType("synthesis.llm.fake_broken")
    broken.STAGE = "fake_broken"  # no SCHEMA, no PROMPT
    monkeypatch.setitem(sys.modules, "synthesis.llm.fake_broken", broken)
    with pytest.raises(AttributeError, match="lacks SCHEMA, PROMPT"):
        stages.load(stages.Stage("fake_broken", "x", "y"))
    missing = stages.Stage("not_written_yet", "scenarios", "does something")
    monkeypatch.setattr(stages, "STAGES", (missing,))
    with pytest.raises(ModuleNotFoundError):
        stages.render()
