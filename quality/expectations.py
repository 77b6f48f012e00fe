"""Great Expectations gates for warehouse tables: one suite per table, one `validate` entry.

Suites are plain data here (expectation name + arguments) and become GE objects only inside
`validate`, so importing this module stays cheap: GE's own import costs ~2.4 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from quality.audit import AUDIT_THRESHOLD
from synthesis.llm.ledger import STATUSES as LLM_CALL_STATUSES
from synthesis.models import Environment, Scenario, ToolInfo, Trajectory

# Allowed values come from the data model, so a new Literal member there is allowed here too.


def _literal(model: type, name: str) -> list[str]:
    return list(get_args(model.model_fields[name].annotation))


ENV_KINDS = _literal(Environment, "kind")
ENV_SOURCES = _literal(Environment, "source")
ENV_STATUSES = _literal(Environment, "status")
TOOL_KINDS = _literal(ToolInfo, "kind")
SCENARIO_STATUSES = _literal(Scenario, "status")
SCENARIO_KINDS = _literal(Scenario, "kind")
SPLITS = _literal(Trajectory, "split")
# Trajectory.policy is free text; these are the policy families the pipeline runs. An LLM
# policy names its model after a colon, and model names are free-form ("llm:gpt-4o-mini",
# "llm:@cf/meta/llama-3.1-8b-instruct"): anything but whitespace.
POLICY_REGEX = (
    r"^(?:(?:oracle|noop|refuse_always|wrong_record|guesser|random)(?::[\w.\-/:]+)?"
    r"|llm(?::\S+)?)$"
)
BASELINE_POLICIES = ("noop", "refuse_always", "wrong_record")
SHARD_FORMATS = ["jsonl", "parquet", "json", "py", "md", "svg"]
SHARD_KINDS = [
    "openai_chat",
    "trl_chat",
    "trajectories",
    "rl_tasks",
    "environment_code",
    "reward_module",
    "user_simulator",
    "verifiers_taskset",
    "dataset_card",
    "plot",
]
SHA256_REGEX = r"^[0-9a-f]{64}$"
IDENTIFIER_REGEX = r"^[A-Za-z_][A-Za-z0-9_]*$"

# An OpenAI function definition, in either the tools-array or the bare form.
FUNCTION_SCHEMA = {
    # Great Expectations checks the schema itself against its draft's meta-schema once per
    # row (jsonschema.validate): draft-07's costs a quarter of the default 2020-12's (0.5 ms
    # against 1.9 ms a row, seconds on a full build's tools), for the same keywords here.
    "$schema": "http://json-schema.org/draft-07/schema#",
    "anyOf": [
        {
            "type": "object",
            "required": ["type", "function"],
            "properties": {"function": {"type": "object", "required": ["name", "parameters"]}},
        },
        {"type": "object", "required": ["name", "parameters"]},
    ],
}

Spec = tuple[str, dict[str, Any]]


def _e(name: str, **kwargs: Any) -> Spec:
    return name, kwargs


def _key(column: str) -> list[Spec]:
    return [
        _e("ExpectColumnValuesToNotBeNull", column=column),
        _e("ExpectColumnValuesToBeUnique", column=column),
    ]


def _not_null(*columns: str) -> list[Spec]:
    return [_e("ExpectColumnValuesToNotBeNull", column=c) for c in columns]


def _in_set(column: str, values: list[Any], **kwargs: Any) -> Spec:
    return _e("ExpectColumnValuesToBeInSet", column=column, value_set=values, **kwargs)


def _json(*columns: str) -> list[Spec]:
    return [_e("ExpectColumnValuesToBeJsonParseable", column=c) for c in columns]


def _non_empty(*columns: str) -> list[Spec]:
    return [_e("ExpectColumnValueLengthsToBeBetween", column=c, min_value=1) for c in columns]


def _where(column: str, value: Any) -> dict[str, Any]:
    # Kept as a (column, value) pair until GE is imported; becomes `Column(column) == value`.
    return {"row_condition": (column, value)}


# Conditions on a published scenario's self-test; added to the scenarios suite when the
# frame carries the self-test columns (see `validate(..., related=...)`).
PROVEN_SCENARIO_SPECS: list[Spec] = [
    spec
    for column in (
        "gold_pass",
        "noop_fail",
        "deterministic",
        "shortcuts_fail",
        "alternatives_pass",
    )
    for spec in (
        _e("ExpectColumnValuesToNotBeNull", column=column, **_where("status", "published")),
        _in_set(column, [True], **_where("status", "published")),
    )
]

# Trajectories are played only on tasks no shortcut earns a reward on; added to the
# trajectories suite when the frame carries the self-test's verdict (`related`). A task whose
# self-test is not among the rows checked (kept from an earlier publish) was checked then.
SHORTCUT_PROOF_SPECS: list[Spec] = [_in_set("shortcuts_fail", [True])]

SUITES: dict[str, list[Spec]] = {
    "environments": [
        *_key("env_id"),
        *_not_null("topic_id", "archetype", "kind", "source", "status", "code_sha256"),
        _in_set("kind", ENV_KINDS),
        _in_set("source", ENV_SOURCES),
        _in_set("status", ENV_STATUSES),
        # A quarantined environment may have no tools (its code did not parse): it is in the
        # table with its reason, and must not fail the gate that guards the accepted ones.
        _e(
            "ExpectColumnValuesToBeBetween",
            column="n_tools",
            min_value=1,
            **_where("status", "accepted"),
        ),
        _e("ExpectColumnValuesToMatchRegex", column="code_sha256", regex=SHA256_REGEX),
        _e("ExpectColumnValuesToBeBetween", column="audit_score", min_value=0, max_value=1),
        # An environment is kept only when its audit reaches the threshold (docs/architecture.md).
        _e(
            "ExpectColumnValuesToBeBetween",
            column="audit_score",
            min_value=AUDIT_THRESHOLD,
            **_where("status", "accepted"),
        ),
        _e("ExpectColumnValuesToNotBeNull", column="reason", **_where("status", "quarantined")),
    ],
    "tools": [
        *_not_null("env_id", "tool_name", "kind", "schema_json"),
        _e("ExpectCompoundColumnsToBeUnique", column_list=["env_id", "tool_name"]),
        _in_set("kind", TOOL_KINDS),
        _e("ExpectColumnValuesToMatchRegex", column="tool_name", regex=IDENTIFIER_REGEX),
        *_json("schema_json"),
        _e(
            "ExpectColumnValuesToMatchJsonSchema", column="schema_json", json_schema=FUNCTION_SCHEMA
        ),
    ],
    "scenarios": [
        *_key("scenario_id"),
        *_not_null("env_id", "status", "split", "kind", "chain_length"),
        _in_set("status", SCENARIO_STATUSES),
        _in_set("split", SPLITS),
        _in_set("kind", SCENARIO_KINDS),
        _e("ExpectColumnValuesToBeBetween", column="chain_length", min_value=0),
        # An infeasible task may be answered without a call; a feasible one needs at least one.
        _e(
            "ExpectColumnValuesToBeBetween",
            column="chain_length",
            min_value=1,
            **_where("kind", "feasible"),
        ),
        *_non_empty("task_text"),
        *_json("initial_state_json", "gold_chain_json"),
        _e("ExpectColumnValuesToNotBeNull", column="reason", **_where("status", "quarantined")),
    ],
    "checks": [
        *_key("check_id"),
        *_not_null("scenario_id", "env_id", "spec_json"),
        *_non_empty("description"),
        *_json("spec_json"),
    ],
    "check_selftests": [
        *_key("scenario_id"),
        *_not_null(
            "env_id",
            "gold_pass",
            "noop_fail",
            "deterministic",
            "shortcuts_fail",
            "alternatives_pass",
            "mutation_kill_rate",
        ),
        *_json("shortcut_rewards_json", "alternative_rewards_json"),
        _e("ExpectColumnValuesToBeBetween", column="mutation_kill_rate", min_value=0, max_value=1),
        _e("ExpectColumnValuesToBeBetween", column="n_mutants", min_value=0),
    ],
    "trajectories": [
        *_key("traj_id"),
        *_not_null("scenario_id", "policy", "reward", "success", "n_steps"),
        _e("ExpectColumnValuesToMatchRegex", column="policy", regex=POLICY_REGEX),
        _in_set("split", SPLITS),
        _e("ExpectColumnValuesToBeBetween", column="reward", min_value=0, max_value=1),
        _e("ExpectColumnValuesToBeBetween", column="n_steps", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="tokens_in", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="tokens_out", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="cost_usd", min_value=0),
        *_json("messages_json"),
        # Trajectories are played on published tasks only, whose checks are proven: the gold
        # replay must pass and earn 1, and every baseline must fail and earn 0.
        _in_set("success", [True], **_where("policy", "oracle")),
        _in_set("reward", [1.0], **_where("policy", "oracle")),
        *(_in_set("success", [False], **_where("policy", p)) for p in BASELINE_POLICIES),
        *(_in_set("reward", [0.0], **_where("policy", p)) for p in BASELINE_POLICIES),
        # A difficulty attempt without its seed could not be replayed or told apart.
        _e("ExpectColumnValuesToNotBeNull", column="attempt_seed", **_where("policy", "guesser")),
    ],
    "llm_calls": [
        *_key("call_id"),
        *_not_null("build_id", "stage", "model", "cache_hit", "attempt", "status"),
        _in_set("status", list(LLM_CALL_STATUSES)),
        _e("ExpectColumnValuesToBeBetween", column="attempt", min_value=0),
        # A call that did not end with an accepted answer says why.
        *(
            _e("ExpectColumnValuesToNotBeNull", column="reason", **_where("status", s))
            for s in ("rejected", "retried", "failed", "skipped", "hedged")
        ),
        _e("ExpectColumnValuesToBeBetween", column="tokens_in", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="tokens_out", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="cost_usd", min_value=0),
        _e("ExpectColumnValuesToBeBetween", column="latency_ms", min_value=0),
    ],
    "quarantine": [
        *_not_null("artifact_type", "artifact_id", "stage"),
        *_non_empty("reason"),
        _e(
            "ExpectCompoundColumnsToBeUnique", column_list=["artifact_type", "artifact_id", "stage"]
        ),
    ],
    "shards": [
        *_key("path"),
        _e("ExpectColumnValuesToMatchRegex", column="sha256", regex=SHA256_REGEX),
        _e("ExpectColumnValuesToNotBeNull", column="sha256"),
        _e("ExpectColumnValuesToBeBetween", column="rows", min_value=0),
        # Code, docs and plots are for every split.
        _in_set("split", [*SPLITS, "all"]),
        _in_set("format", SHARD_FORMATS),
        _in_set("kind", SHARD_KINDS),
        # Paths are relative to the manifest: no absolute paths, no escaping it.
        _e("ExpectColumnValuesToNotMatchRegex", column="path", regex=r"^/|(?:^|/)\.\.(?:/|$)"),
    ],
}


@dataclass(frozen=True)
class GateResult:
    """A suite's outcome in plain types: what failed, on which column, and a short why."""

    suite: str
    success: bool
    evaluated: int
    failed: list[dict[str, str]] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        if self.success:
            return f"{self.suite}: {self.evaluated} expectations passed on {self.rows} rows"
        heads = "; ".join(f"{f['expectation']}({f['column']})" for f in self.failed[:5])
        return (
            f"{self.suite}: {len(self.failed)}/{self.evaluated} failed on {self.rows} rows: {heads}"
        )

    def to_metadata(self) -> dict[str, Any]:
        """Values Dagster accepts as metadata (scalars, and a JSON list of failures)."""
        return {
            "suite": self.suite,
            "success": self.success,
            "rows": self.rows,
            "evaluated": self.evaluated,
            "failed": len(self.failed),
            "failures": list(self.failed),
            "summary": self.summary(),
            "seconds": round(self.seconds, 3),
        }


# --------------------------------------------------------------------------- running GE

# A few unexpected values are enough to name a defect; GE's default also counts them all.
_RESULT_FORMAT = {"result_format": "BASIC", "partial_unexpected_count": 5}
# Verdicts only: every expectation's success comes from the same counts (rows, nulls,
# unexpected) as under BASIC, without the metrics that only describe the unexpected values,
# about a quarter of a suite's time. A suite that fails runs again under BASIC for them.
_VERDICT_FORMAT = {"result_format": "BOOLEAN_ONLY"}
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def _context() -> Any:
    # One ephemeral context per process: creating contexts and data sources is the slow part
    # after the import, and nothing here needs to persist.
    if "context" not in _STATE:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig
        from great_expectations.execution_engine import pandas_execution_engine

        # GE fingerprints every pandas batch below this many bytes (1 GB) by hashing each of
        # its cells, for a batch marker that nothing here reads: half the gates' time on a
        # full build (py-spy). A threshold of 0 bytes leaves every batch unfingerprinted.
        pandas_execution_engine.HASH_THRESHOLD = 0
        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        _STATE["context"] = context
        # Every suite's asset in one go, as a config file would declare them: each asset or
        # batch definition added afterwards re-serialises the whole project config (~10 ms).
        _STATE["datasource"] = context.data_sources.add_pandas(
            "envfoundry_warehouse",
            assets=[
                {"name": name, "type": "dataframe", "batch_definitions": [{"name": "whole"}]}
                for name in SUITES
            ],
        )
    return _STATE["context"]


def _batch_definition(table_name: str) -> Any:
    _context()
    return _STATE["datasource"].get_asset(table_name).get_batch_definition("whole")


def _run(table_name: str, frame: Any, suite: Any, result_format: dict[str, Any]) -> Any:
    """The suite's outcome on `frame`. What `Batch.validate` does, without the batch it
    would be called on: getting one loads and fingerprints the frame, and the validator
    gets its own batch again anyway."""
    from great_expectations.validator.v1_validator import Validator

    validator = Validator(
        batch_definition=_batch_definition(table_name),
        batch_parameters={"dataframe": frame},
        result_format=result_format,
    )
    return validator.validate_expectation_suite(suite)


def _suite(name: str, specs: list[Spec]) -> Any:
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.expectations.row_conditions import Column

    def build(kind: str, kwargs: dict[str, Any]) -> Any:
        if "row_condition" in kwargs:
            column, value = kwargs["row_condition"]
            kwargs = {**kwargs, "row_condition": Column(column) == value}
        return getattr(gxe, kind)(**kwargs)

    return gx.ExpectationSuite(name=name, expectations=[build(k, kw) for k, kw in specs])


def _frame(data: Any) -> Any:
    import pandas as pd
    import pyarrow as pa

    if isinstance(data, pd.DataFrame):
        frame = data
    elif isinstance(data, pa.Table):
        frame = data.to_pandas()
    else:
        frame = pd.DataFrame(list(data))
    return _object_strings(frame)


def _object_strings(frame: Any) -> Any:
    """The frame with its text columns as Python objects, not pandas' Arrow-backed strings.

    GE filters the whole frame for every expectation with a row condition; with Arrow
    strings each filter copies every text column (on a full build, gigabytes of messages
    per expectation: most of the gates' time), with objects only pointers. The values, and
    so the verdicts, are the same.
    """
    import pandas as pd

    text = [c for c, dtype in frame.dtypes.items() if isinstance(dtype, pd.StringDtype)]
    if not text:
        return frame
    return frame.astype(dict.fromkeys(text, object))


# Expectations that look at given columns only: a frame without the columns none of them names
# gets the same verdicts. GE converts, copies and fingerprints whatever frame it is given (on a
# full build, the trajectories' message text alone is gigabytes), so the others are left out.
_COLUMN_EXPECTATIONS = frozenset(
    {
        "ExpectColumnValueLengthsToBeBetween",
        "ExpectColumnValuesToBeBetween",
        "ExpectColumnValuesToBeInSet",
        "ExpectColumnValuesToBeJsonParseable",
        "ExpectColumnValuesToBeUnique",
        "ExpectColumnValuesToMatchJsonSchema",
        "ExpectColumnValuesToMatchRegex",
        "ExpectColumnValuesToNotBeNull",
        "ExpectColumnValuesToNotMatchRegex",
        "ExpectCompoundColumnsToBeUnique",
    }
)


def _checked_columns(table_name: str) -> frozenset[str] | None:
    """Every column the table's suite may name (None: it has a table-wide expectation, so the
    frame stays whole). The join key of `with_selftests` is kept."""
    specs = list(SUITES.get(table_name, ()))
    if table_name == "scenarios":
        specs += PROVEN_SCENARIO_SPECS
    if table_name == "trajectories":
        specs += SHORTCUT_PROOF_SPECS
    if any(kind not in _COLUMN_EXPECTATIONS for kind, _ in specs):
        return None
    columns = {"scenario_id"} if table_name in ("scenarios", "trajectories") else set()
    for _, kwargs in specs:
        if "column" in kwargs:
            columns.add(kwargs["column"])
        columns.update(kwargs.get("column_list", ()))
        if "row_condition" in kwargs:
            columns.add(kwargs["row_condition"][0])
    return frozenset(columns)


def _only(data: Any, columns: frozenset[str] | None) -> Any:
    """An Arrow table cut to `columns` before it is converted (the others never are)."""
    import pyarrow as pa

    if columns is None or not isinstance(data, pa.Table):
        return data
    return data.select([c for c in data.column_names if c in columns])


def with_selftests(scenarios: Any, check_selftests: Any) -> Any:
    """Scenarios (or trajectories) left-joined with their scenario's self-test outcome
    (missing self-test → nulls)."""
    frame = _frame(scenarios)
    tests = _frame(check_selftests)
    cols = [
        "scenario_id",
        "gold_pass",
        "noop_fail",
        "deterministic",
        "shortcuts_fail",
        "alternatives_pass",
    ]
    tests = tests[[c for c in cols if c in tests.columns]]
    frame = frame.drop(columns=[c for c in cols[1:] if c in frame.columns])
    return frame.merge(tests, on="scenario_id", how="left")


def _short(value: Any, limit: int = 160) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _condition_text(condition: Any) -> str:
    if hasattr(condition, "dict"):
        condition = condition.dict()
    if isinstance(condition, Mapping) and {"column", "operator", "parameter"} <= set(condition):
        column = condition["column"]
        name = column.get("name") if isinstance(column, Mapping) else column
        return f"{name} {condition['operator']} {condition['parameter']!r}"
    return str(condition)


def _failure(result: Any) -> dict[str, str]:
    config = result.expectation_config
    kwargs = config.kwargs
    column = kwargs.get("column") or ",".join(kwargs.get("column_list") or []) or ""
    info = result.exception_info or {}
    if info.get("raised_exception"):
        details = f"error: {info.get('exception_message')}"
    else:
        res = result.result or {}
        parts = []
        if res.get("unexpected_count") is not None:
            parts.append(f"{res['unexpected_count']} unexpected")
        if res.get("partial_unexpected_list"):
            parts.append("e.g. " + _short(res["partial_unexpected_list"][:3], 120))
        if res.get("observed_value") is not None:
            parts.append(f"observed {_short(res['observed_value'], 80)}")
        condition = kwargs.get("row_condition")
        if condition:
            parts.append(f"where {_condition_text(condition)}")
        details = "; ".join(parts) or "failed"
    return {"expectation": config.type, "column": column, "details": _short(details)}


def suite_specs(table_name: str, columns: list[str] | None = None) -> list[Spec]:
    """The expectations `validate` runs for a table (given the frame's columns)."""
    if table_name not in SUITES:
        raise KeyError(f"no suite for table {table_name!r}; suites: {sorted(SUITES)}")
    specs = list(SUITES[table_name])
    if table_name == "scenarios" and columns and "gold_pass" in columns:
        specs += PROVEN_SCENARIO_SPECS
    if table_name == "trajectories" and columns and "shortcuts_fail" in columns:
        specs += SHORTCUT_PROOF_SPECS
    return specs


def validate(table_name: str, data: Any, related: Mapping[str, Any] | None = None) -> GateResult:
    """Run the table's suite on `data` (pyarrow Table, pandas DataFrame or row dicts).

    `related` may carry other tables a suite checks against; for "scenarios", passing
    {"check_selftests": ...} adds "every published scenario is proven" (gold passes, no-op
    fails, deterministic), which a scenarios frame cannot show on its own.
    """
    start = time.perf_counter()
    checked = _checked_columns(table_name)
    frame = _frame(_only(data, checked))
    if table_name in ("scenarios", "trajectories") and related and "check_selftests" in related:
        frame = with_selftests(frame, related["check_selftests"])
    specs = suite_specs(table_name, list(frame.columns))
    if checked is not None:
        frame = frame[[c for c in frame.columns if c in checked]]
    with _LOCK:
        suite = _suite(table_name, specs)
        outcome = _run(table_name, frame, suite, _VERDICT_FORMAT)
        if not outcome.success:
            outcome = _run(table_name, frame, suite, _RESULT_FORMAT)
    failed = [_failure(r) for r in outcome.results if not r.success]
    return GateResult(
        suite=table_name,
        success=bool(outcome.success),
        evaluated=len(outcome.results),
        failed=failed,
        rows=len(frame),
        seconds=time.perf_counter() - start,
    )
