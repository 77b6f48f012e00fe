"""The ledger spool: every asset run appends its LLM attempts to its own file under the home,
and the warehouse merges a build's files into the append-only `llm_calls` table.

The runs are real Dagster materializations of a small asset that asks the loopback fake
server through `assets._llm.llm_run`, as the `scenarios` and `trajectories` assets do."""

import duckdb
import pytest
from dagster import (
    AssetExecutionContext,
    DagsterInstance,
    StaticPartitionsDefinition,
    asset,
    materialize,
)

from assets._llm import llm_run, spooled_calls
from assets._resources import BuildSettings
from assets._util import BUILD_TAG
from quality import expectations as qe
from synthesis import codec
from synthesis.export import warehouse as wh
from synthesis.llm import spool
from synthesis.llm.client import LLMError
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error

KEY = "sk-spool-secret-4242"
PARTS = StaticPartitionsDefinition(["env_a", "env_b"])


@asset(partitions_def=PARTS)
def asker(context: AssetExecutionContext, settings: BuildSettings) -> int:
    """Asks the model once per run; an answer `raise` makes the run fail after its call."""
    with llm_run(context, settings) as client:
        if client is None:  # offline
            return 0
        try:
            answer = client.chat(
                [{"role": "user", "content": "hi"}], stage="probe", artifact_id="a1"
            ).message["content"]
        except LLMError:
            answer = "failed"
        if answer == "raise":
            raise RuntimeError("the stage broke after asking")
        return len(client.calls)


@asset
def catalogue_asker(context: AssetExecutionContext, settings: BuildSettings) -> int:
    """An unpartitioned stage that asks (as `mined_topics` does): its spool file is `_all`."""
    with llm_run(context, settings) as client:
        if client is None:
            return 0
        client.chat([{"role": "user", "content": "topics?"}], stage="topic", artifact_id="r1")
        return len(client.calls)


@asset
def reader(context: AssetExecutionContext, settings: BuildSettings) -> list:
    return spooled_calls(context, settings, ("asker",), ["env_a", "env_b"], ("catalogue_asker",))


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ENVFOUNDRY_LLM_RETRIES", "1")
    return tmp_path / "home"


def _run(instance, home, partition, build_id=None, raise_on_error=True):
    return materialize(
        [asker],
        partition_key=partition,
        instance=instance,
        resources={"settings": BuildSettings(home=str(home))},
        tags={BUILD_TAG: build_id} if build_id else None,
        raise_on_error=raise_on_error,
    )


def _read(instance, home, build_id=None) -> list[dict]:
    result = materialize(
        [reader],
        instance=instance,
        resources={"settings": BuildSettings(home=str(home))},
        tags={BUILD_TAG: build_id} if build_id else None,
    )
    return result.output_for_node("reader")


def test_two_runs_of_one_asset_append_to_its_file(home, monkeypatch):
    instance = DagsterInstance.ephemeral()
    with FakeOpenAIServer(lambda request: final_answer("ok")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        first = _run(instance, home, "env_a", "b1")
        second = _run(instance, home, "env_a", "b1")  # a re-executed run keeps its build tag
    path = spool.spool_file(home, "b1", "asker", "env_a")
    assert path == home / "ledger" / "b1" / "asker" / "env_a.jsonl"
    lines = [codec.loads(line) for line in path.read_bytes().splitlines()]
    # The second run's answer came from the cache; both runs' rows are there, apart.
    assert [r["status"] for r in lines] == ["accepted", "cached"]
    assert len({r["call_id"] for r in lines}) == 2
    assert first.run_id != second.run_id
    assert spool.read_rows(spool.build_files(home, "b1")) == sorted(
        lines, key=lambda r: r["call_id"]
    )


def test_a_failed_run_spools_its_failed_attempts_and_never_the_key(home, monkeypatch):
    instance = DagsterInstance.ephemeral()
    # Servers quote the key they refuse: the row's reason would carry it.
    with FakeOpenAIServer(lambda request: http_error(500, f"bad key {KEY}")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        _run(instance, home, "env_a", "b1")
    with FakeOpenAIServer(lambda request: final_answer("raise")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        failed = _run(instance, home, "env_b", "b1", raise_on_error=False)
    assert not failed.success
    rows = spool.read_rows(spool.build_files(home, "b1"))
    assert sorted(r["status"] for r in rows) == ["accepted", "failed", "retried"]
    assert {r["stage"] for r in rows} == {"probe"}
    for path in (home / "ledger").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text()
    assert any(spool.REDACTED in (r["reason"] or "") for r in rows)
    assert qe.validate("llm_calls", wh.llm_call_rows(rows)).success


def test_the_warehouse_reads_its_build_and_a_rebuild_appends(home, monkeypatch, tmp_path):
    instance = DagsterInstance.ephemeral()
    path = tmp_path / "w.duckdb"
    modes = wh.build_write_modes(["llm_calls"])
    with FakeOpenAIServer(lambda request: final_answer("ok")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        for build in ("b1", "b2"):
            for partition in ("env_a", "env_b"):
                _run(instance, home, partition, build)
            materialize(
                [catalogue_asker],
                instance=instance,
                resources={"settings": BuildSettings(home=str(home))},
                tags={BUILD_TAG: build},
            )
            rows = _read(instance, home, build)
            assert {r["build_id"] for r in rows} == {build} and len(rows) == 3
            # The publish run may be retried: the same rows merge, never double.
            for _ in range(2):
                wh.write_tables(path, {"llm_calls": wh.llm_call_rows(rows)}, mode=modes)
        # A run launched from the UI has no build: it reads the runs behind the artifacts.
        ui = _read(instance, home)
    with duckdb.connect(str(path)) as con:
        counts = con.execute(
            "SELECT build_id, string_agg(status, ',' ORDER BY status) FROM llm_calls "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert counts == [("b1", "accepted,accepted,cached"), ("b2", "cached,cached,cached")]
    # ...the unpartitioned stage's file (`_all`) among them.
    assert {r["build_id"] for r in ui} == {"b2"} and len(ui) == 3
    assert sorted(r["stage"] for r in ui) == ["probe", "probe", "topic"]


def test_offline_runs_write_no_spool(home, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert _run(DagsterInstance.ephemeral(), home, "env_a", "b1").output_for_node("asker") == 0
    assert not (home / "ledger").exists()


@pytest.mark.parametrize("name", ["..", "a/b", "."])
def test_a_name_that_would_leave_the_spool_is_refused(tmp_path, name):
    for parts in (("b1", "asker", name), (name, "asker", "env_a"), ("b1", name, "env_a")):
        with pytest.raises(ValueError, match="cannot name a file"):
            spool.spool_file(tmp_path, *parts)
    with pytest.raises(ValueError, match="cannot name a file"):
        spool.build_dir(tmp_path, "")


def test_a_row_cut_short_by_a_kill_is_left_out(tmp_path):
    path = spool.spool_file(tmp_path, "b1", "asker", None)
    assert path.name == "_all.jsonl"
    spool.append_rows(path, [{"call_id": "c1", "status": "accepted"}])
    with open(path, "ab") as out:
        out.write(b'{"call_id": "c2", "sta')
    assert [r["call_id"] for r in spool.read_rows([path])] == ["c1"]
