"""`eval_job`: a model evaluated on a home's published dataset as a partition of the
`evaluation` asset (one `eval_models` partition per model), in the home's own instance.

Materializing a partition plays the model with `envfoundry eval`'s engine against the
loopback endpoint and its scripted agents (tests/fakes/eval_agents.py), records the episodes
in HOME/evals/evals.duckdb and shows the scores as metadata, with lineage to the
`published_dataset` materialization it scored; the dataset is never made again nor changed.
`envfoundry eval` adds the model it evaluated as a partition. A stop by the budget succeeds
with a warning; an eval that cannot run, or recorded nothing but LLM errors, fails.

The home is a copy of the suite's shared tiny build (`tiny_home`), or of the built home
ENVFOUNDRY_EVAL_TEST_HOME names (as tests/synthesis/evaluation/ does, to run this alone).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import duckdb
import pytest

from orchestration import instance as home_instance
from synthesis.evaluation.dataset import current_dataset, published_tasks
from synthesis.evaluation.store import evals_path
from synthesis.hashing import sha256_file
from tests.fakes.eval_agents import CAPABLE, WEAK, responder
from tests.fakes.openai_server import FakeOpenAIServer, Fault, final_answer, http_error

HOME_VARIABLE = "ENVFOUNDRY_EVAL_TEST_HOME"
KEY = "sk-eval-job-test-4711"
EVALUATION = dg.AssetKey("evaluation")
DATASET = dg.AssetKey("published_dataset")
# Scripted here, by the model a request names: every answer costs 100,000 tokens; every
# request fails with a 500.
BUDGETED = "budgeted-agent"
FAILING = "failing-agent"
# What the endpoint settings are read from (LLMSettings.from_env), cleared around each run.
LLM_VARIABLES = (
    "ENVFOUNDRY_LLM_CONCURRENCY",
    "ENVFOUNDRY_LLM_MAX_TOKENS",
    "ENVFOUNDRY_BUDGET_TOKENS",
    "ENVFOUNDRY_BUDGET_USD",
    "ENVFOUNDRY_LLM_RETRIES",
)


def test_the_code_location_has_the_eval_job(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    from orchestration.definitions import build_definitions

    defs = build_definitions()
    graph = defs.resolve_asset_graph()
    node = graph.get(EVALUATION)
    assert isinstance(node.partitions_def, dg.DynamicPartitionsDefinition)
    assert node.partitions_def.name == "eval_models"
    assert set(node.parent_keys) == {DATASET} and node.group_name == "evaluation"
    assert not node.child_keys
    # A group of its own, made by no build job; the job makes it alone.
    assert [
        k for k in graph.materializable_asset_keys if graph.get(k).group_name == "evaluation"
    ] == [EVALUATION]
    for name in ("catalogue_job", "environment_job", "publish_job"):
        assert EVALUATION not in defs.resolve_job_def(name).asset_layer.selected_asset_keys
    job = defs.resolve_job_def("eval_job")
    assert job.asset_layer.selected_asset_keys == {EVALUATION}
    assert job.partitions_def == node.partitions_def
    fields = job.run_config_schema.config_type.fields["ops"].config_type.fields
    assert set(fields["evaluation"].config_type.fields["config"].config_type.fields) == {
        "split",
        "attempts",
        "limit",
    }


def dataset_files(home: Path) -> dict[str, str]:
    """sha256 of every file of the home's published dataset, by path inside it."""
    root = current_dataset(home).path
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def query(home: Path, sql: str, params=()) -> list[tuple]:
    with duckdb.connect(str(evals_path(home)), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def respond_for(home: Path):
    base = responder(home / "warehouse.duckdb")
    costly = Fault(message=final_answer("Done."), completion_tokens=100_000)

    def respond(request):
        if request.get("model") == BUDGETED:
            return costly
        if request.get("model") == FAILING:
            return http_error(500)
        return base(request)

    return respond


@pytest.fixture(scope="module")
def eval_home(request, tmp_path_factory):
    """A copy of a built home with its own instance (its evaluations left behind), the
    endpoint serving the scripted agents, and the code location loaded on that home."""
    named = os.environ.get(HOME_VARIABLE)
    built = Path(named) if named else request.getfixturevalue("tiny_home")[0]
    home = tmp_path_factory.mktemp("eval-job") / "home"
    shutil.copytree(built, home, symlinks=True, ignore=shutil.ignore_patterns("evals"))
    home_instance.prepare(home)  # the copy's instance config names the copy
    with (
        pytest.MonkeyPatch.context() as mp,
        FakeOpenAIServer(respond_for(home)) as server,
        dg.DagsterInstance.from_config(str(home / "dagster")) as instance,
    ):
        mp.setenv("ENVFOUNDRY_HOME", str(home))
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("OPENAI_API_KEY", KEY)
        for variable in LLM_VARIABLES:
            mp.delenv(variable, raising=False)
        from orchestration.definitions import build_definitions

        published = latest(instance, DATASET)
        assert published is not None, "the built home has no published_dataset materialization"
        yield SimpleNamespace(
            home=home,
            server=server,
            instance=instance,
            job=build_definitions().resolve_job_def("eval_job"),
            tasks=published_tasks(current_dataset(home)),
            files=dataset_files(home),
            published=published,
        )


def latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> dg.EventLogRecord | None:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0] if records else None


def materialize(eval_home, model: str, **config) -> dg.ExecuteInProcessResult:
    from orchestration.evaluation import register_model

    assert register_model(eval_home.home, model)
    return eval_home.job.execute_in_process(
        instance=eval_home.instance,
        partition_key=model,
        run_config={"ops": {"evaluation": {"config": {"split": "all", **config}}}},
        raise_on_error=False,
    )


def metadata_of(result: dg.ExecuteInProcessResult) -> dict:
    (event,) = result.get_asset_materialization_events()
    return {k: getattr(v, "value", v) for k, v in event.materialization.metadata.items()}


def failure_of(result: dg.ExecuteInProcessResult) -> tuple[str, dict]:
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    data = failure.step_failure_data
    metadata = data.user_failure_data.metadata if data.user_failure_data else {}
    return data.error.message, {k: getattr(v, "value", v) for k, v in metadata.items()}


@pytest.fixture(scope="module")
def capable(eval_home):
    """The capable agent's partition, materialized once for the tests that read it."""
    return materialize(eval_home, CAPABLE)


@pytest.mark.slow
def test_a_partition_plays_the_model_and_shows_its_scores(eval_home, capable):
    assert capable.success
    n = len(eval_home.tasks)
    meta = metadata_of(capable)
    dataset = current_dataset(eval_home.home)
    assert (meta["model"], meta["status"]) == (CAPABLE, "finished")
    assert (meta["episodes_asked"], meta["episodes_played"], meta["episodes_skipped"]) == (n, n, 0)
    assert (meta["success_rate"], meta["mean_reward"], meta["successes"]) == (1.0, 1.0, n)
    assert (meta["dataset_id"], meta["manifest_sha256"]) == (
        dataset.dataset_id,
        dataset.manifest_sha256,
    )
    assert meta["evals_db"] == str(evals_path(eval_home.home))
    table = meta["success_by_archetype"]
    assert table.startswith("| archetype | episodes | successes | success rate | mean reward |")
    for archetype in {t.archetype for t in eval_home.tasks}:
        assert f"| {archetype} |" in table
    assert "100.0%" in table and "| none | " + str(n) + " |" in meta["failures"]
    assert "stop_reason" not in meta and "warning" not in meta
    # Every episode is in the evaluations database, under the run the metadata names.
    rows = query(
        eval_home.home,
        "SELECT count(*), count(DISTINCT scenario_id), min(run_id), bool_and(success) "
        "FROM eval_episodes WHERE model = ?",
        [CAPABLE],
    )
    assert rows == [(n, n, meta["eval_run_id"], True)]
    assert query(eval_home.home, "SELECT status FROM eval_runs WHERE run_id = ?", [rows[0][2]]) == [
        ("finished",)
    ]


@pytest.mark.slow
def test_the_materialization_points_at_the_dataset_it_scored(eval_home, capable):
    record = latest(eval_home.instance, EVALUATION)
    assert (record.run_id, record.partition_key) == (capable.run_id, CAPABLE)
    tags = record.asset_materialization.tags
    assert tags["dagster/input_event_pointer/published_dataset"] == str(
        eval_home.published.storage_id
    )
    # The dataset was read, not made again.
    assert latest(eval_home.instance, DATASET).storage_id == eval_home.published.storage_id
    assert [e.asset_key for e in capable.get_asset_materialization_events()] == [EVALUATION]


@pytest.mark.slow
def test_the_command_adds_its_model_and_a_second_model_gets_its_own_partition(
    eval_home, capable, capsys
):
    from orchestration.cli import main

    assert main(["eval", "--home", str(eval_home.home), "--model", WEAK, "--split", "all"]) == 0
    assert f"{WEAK!r} is a partition of asset `evaluation`" in capsys.readouterr().out
    partitions = eval_home.instance.get_dynamic_partitions("eval_models")
    assert partitions == [CAPABLE, WEAK]
    # The job scores what the command recorded, playing none of it again.
    asked = len(eval_home.server.requests)
    result = materialize(eval_home, WEAK)
    assert result.success and len(eval_home.server.requests) == asked
    meta = metadata_of(result)
    n = len(eval_home.tasks)
    assert (meta["episodes_played"], meta["episodes_skipped"], meta["success_rate"]) == (0, n, 0.0)
    assert f"| no_action | {n} |" in meta["failures"]
    assert eval_home.instance.get_materialized_partitions(EVALUATION) == {CAPABLE, WEAK}
    assert eval_home.instance.get_dynamic_partitions("eval_models") == partitions
    # An eval that cannot run adds no partition.
    assert (
        main(["eval", "--home", str(eval_home.home), "--model", "no-such", "--tasks", "/no"]) == 1
    )
    assert "no-such" not in eval_home.instance.get_dynamic_partitions("eval_models")


@pytest.mark.slow
def test_a_budget_stop_succeeds_with_its_reason_as_a_warning(eval_home, monkeypatch):
    # Each request reserves 100,000 tokens: a cap of 250,000 takes two episodes, never three.
    monkeypatch.setenv("ENVFOUNDRY_LLM_CONCURRENCY", "1")
    monkeypatch.setenv("ENVFOUNDRY_LLM_MAX_TOKENS", "100000")
    monkeypatch.setenv("ENVFOUNDRY_BUDGET_TOKENS", "250000")
    result = materialize(eval_home, BUDGETED)
    assert result.success
    meta = metadata_of(result)
    assert (meta["status"], meta["episodes_played"], meta["episodes_recorded"]) == ("stopped", 2, 2)
    assert meta["stop_reason"].startswith("budget_exhausted")
    assert meta["warning"].startswith(f"stopped early ({meta['stop_reason']}): 2 of ")
    assert query(eval_home.home, "SELECT count(*) FROM eval_episodes WHERE model = ?", [BUDGETED])[
        0
    ] == (2,)


@pytest.mark.slow
def test_an_eval_that_cannot_run_or_scores_nothing_fails(eval_home, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")
    result = materialize(eval_home, "offline-agent")
    message, _ = failure_of(result)
    assert not result.success and "set OPENAI_BASE_URL" in message
    monkeypatch.setenv("OPENAI_BASE_URL", eval_home.server.base_url)
    # Every request fails: the breaker stops it with nothing but LLM errors recorded.
    monkeypatch.setenv("ENVFOUNDRY_LLM_RETRIES", "0")
    monkeypatch.setenv("ENVFOUNDRY_LLM_CONCURRENCY", "1")
    result = materialize(eval_home, FAILING)
    message, meta = failure_of(result)
    assert not result.success and "no episode of failing-agent was recorded" in message
    assert meta["stop_reason"].startswith("circuit_open") and meta["episodes_llm_errors"] >= 1
    materialized = eval_home.instance.get_materialized_partitions(EVALUATION)
    assert not {"offline-agent", FAILING} & materialized


@pytest.mark.slow
def test_the_published_dataset_is_unchanged(eval_home):
    """Last of the module's tests on its home, after every evaluation above."""
    assert dataset_files(eval_home.home) == eval_home.files
    assert KEY.encode() not in evals_path(eval_home.home).read_bytes()


@pytest.mark.slow
def test_while_one_eval_writes_a_second_is_refused_naming_it(eval_home, capsys):
    """One writer of a home's evaluations at a time (the queue keeps eval_job runs launched
    from the UI apart; an eval started another way is refused by the lock, not by DuckDB)."""
    from orchestration.cli import main
    from synthesis.evaluation.store import EvalStore, evals_path

    with EvalStore(evals_path(eval_home.home)):
        result = materialize(eval_home, "second-agent")
        message, _ = failure_of(result)
        assert "being written by another eval" in message and f"pid {os.getpid()}" in message
        code = main(
            ["eval", "--home", str(eval_home.home), "--model", "third-agent", "--split", "all"]
        )
        assert code == 1
        assert "being written by another eval" in capsys.readouterr().err
    assert "third-agent" not in eval_home.instance.get_dynamic_partitions("eval_models")
    assert "second-agent" not in eval_home.instance.get_materialized_partitions(EVALUATION)
