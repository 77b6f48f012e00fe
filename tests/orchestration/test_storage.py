"""The home's instance storage: Dagster's SQLite files, with one engine per database file."""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import sqlite3
import threading

import dagster as dg
import pytest
import sqlalchemy.exc

from orchestration import instance as envfoundry_instance
from orchestration import storage
from orchestration.fastrun.dagster_internals import (
    SqliteEventLogStorage,
    SqliteRunStorage,
    SqliteScheduleStorage,
)


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["a", "b"]))
def numbers(context) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"partition": context.partition_key})


@pytest.fixture
def dagster_home(tmp_path, monkeypatch):
    home = envfoundry_instance.prepare(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def test_a_home_uses_it_and_the_stock_storage_reads_what_it_wrote(dagster_home, monkeypatch):
    built = []
    real = storage.create_engine

    def counted(conn_string, **kwargs):
        built.append(conn_string)
        return real(conn_string, **kwargs)

    monkeypatch.setattr(storage, "create_engine", counted)
    with dg.DagsterInstance.get() as inst:
        assert isinstance(inst.event_log_storage, storage.EventLogStorage)
        assert isinstance(inst.run_storage, storage.RunStorage)
        for key in ["a", "b", "a"]:
            assert dg.materialize([numbers], instance=inst, partition_key=key).success
        runs = [r.run_id for r in inst.get_runs()]
    # Three runs stored dozens of events each: an engine per database file, not per event.
    assert len(runs) == 3
    assert len(built) == len(set(built)) <= len(runs) + 3  # runs, the index, runs.db, schedules
    # Dagster's own SQLite storage (no storage block) reads the same files.
    (dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.get() as stock:
        assert not isinstance(stock.event_log_storage, storage.EventLogStorage)
        assert sorted(r.run_id for r in stock.get_runs()) == sorted(runs)
        record = stock.get_latest_materialization_event(dg.AssetKey("numbers"))
        assert record.asset_materialization.partition == "a"
        assert record.run_id == runs[0]  # get_runs lists the newest first


def test_a_copied_home_is_refused_until_prepared_again(dagster_home, tmp_path):
    with dg.DagsterInstance.from_config(str(dagster_home)) as inst:
        assert dg.materialize([numbers], instance=inst, partition_key="a").success
    copy = tmp_path / "copy"
    shutil.copytree(dagster_home.parent, copy)
    with pytest.raises(storage.StorageElsewhere, match="a copied or moved home"):
        dg.DagsterInstance.from_config(str(copy / "dagster"))
    envfoundry_instance.prepare(copy)  # what a build on it does first
    with dg.DagsterInstance.from_config(str(copy / "dagster")) as inst:
        assert len(inst.get_runs()) == 1
        assert dg.materialize([numbers], instance=inst, partition_key="b").success
    with dg.DagsterInstance.from_config(str(dagster_home)) as original:
        assert len(original.get_runs()) == 1  # the copy's run is the copy's


def test_a_forked_child_opens_its_own_connections(dagster_home):
    """The pools keep connections open; a child forked with them must not use its parent's
    (SQLite forbids carrying a connection across a fork): it empties its pools without closing
    the parent's connections, and both go on writing."""
    with dg.DagsterInstance.get() as inst:
        assert dg.materialize([numbers], instance=inst, partition_key="a").success
        index = inst.event_log_storage._engines.get(
            inst.event_log_storage.conn_string_for_shard("index")
        )
        inherited = index.pool.checkedin()
        assert inherited >= 1  # a connection kept open for the next use
        pid = os.fork()
        if pid == 0:  # the child: exit status says what it found
            ok = index.pool.checkedin() == 0
            ok = ok and dg.materialize([numbers], instance=inst, partition_key="b").success
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert index.pool.checkedin() == inherited  # the parent's connections are untouched
        assert dg.materialize([numbers], instance=inst, partition_key="a").success
        partitions = sorted(
            r.asset_materialization.partition
            for r in inst.fetch_materializations(dg.AssetKey("numbers"), limit=10).records
        )
    assert partitions == ["a", "a", "b"]


def test_databases_at_the_head_revision_skip_the_migration_check(dagster_home, monkeypatch):
    with dg.DagsterInstance.get() as inst:
        assert dg.materialize([numbers], instance=inst, partition_key="a").success
        (run,) = inst.get_runs()
    # Another process opening them (a fresh storage) finds them current: no alembic scripts.
    checked = []
    real = SqliteEventLogStorage._initdb

    def recorded(self, engine, *args):
        checked.append(str(engine.url))
        return real(self, engine, *args)

    monkeypatch.setattr(SqliteEventLogStorage, "_initdb", recorded)
    events = storage.EventLogStorage(str(dagster_home / "history" / "runs"))
    logs = events.get_logs_for_run(run.run_id)
    assert any(e.dagster_event_type == dg.DagsterEventType.ASSET_MATERIALIZATION for e in logs)
    assert checked == []


def test_an_instance_at_the_head_revision_opens_without_the_migration_scripts(
    dagster_home, monkeypatch
):
    with dg.DagsterInstance.get():
        pass  # the first opening makes the runs and schedules databases
    checked = []
    for stock in (SqliteRunStorage, SqliteScheduleStorage):
        module = importlib.import_module(stock.__module__)  # where Dagster defines it
        real = module.check_alembic_revision

        def recorded(config, connection, real=real):
            checked.append(str(connection.engine.url))
            return real(config, connection)

        monkeypatch.setattr(module, "check_alembic_revision", recorded)
    with dg.DagsterInstance.get() as inst:
        assert inst.get_runs() == []
    assert checked == []
    # A file without a table Dagster makes beside its schema goes Dagster's way, which adds it.
    with sqlite3.connect(dagster_home / "history" / "runs.db") as db:
        db.execute("DROP TABLE instance_info")
    with dg.DagsterInstance.get() as inst:
        assert inst.get_runs() == []
    assert [url.rpartition("/")[2] for url in checked] == ["runs.db"]
    with sqlite3.connect(dagster_home / "history" / "runs.db") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "instance_info" in tables


def _made(path) -> tuple:
    with sqlite3.connect(path) as db:
        return (
            sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall()),
            db.execute("SELECT version_num FROM alembic_version").fetchall(),
            db.execute("PRAGMA journal_mode").fetchall(),
        )


def test_a_new_run_database_is_made_as_dagster_makes_it(tmp_path, monkeypatch):
    stock = SqliteEventLogStorage(str(tmp_path / "stock"))
    stock.get_logs_for_run("a-run")
    ours = storage.EventLogStorage(str(tmp_path / "ours"))
    made_by_dagster = []
    real = SqliteEventLogStorage._initdb

    def recorded(self, engine, *args, **kwargs):
        made_by_dagster.append(str(engine.url))
        return real(self, engine, *args, **kwargs)

    monkeypatch.setattr(SqliteEventLogStorage, "_initdb", recorded)
    assert ours.get_logs_for_run("a-run") == []
    assert made_by_dagster == []
    assert _made(tmp_path / "ours" / "a-run.db") == _made(tmp_path / "stock" / "a-run.db")
    # A file with tables that is not at the head (an older Dagster's) goes Dagster's way.
    with sqlite3.connect(tmp_path / "ours" / "old-run.db") as db:
        db.execute("CREATE TABLE event_logs (id INTEGER PRIMARY KEY)")
    with pytest.raises(sqlalchemy.exc.OperationalError, match="no such column"):
        ours.get_logs_for_run("old-run")  # Dagster's way stamps it, then reads a bare table
    assert made_by_dagster == [ours.conn_string_for_shard("old-run")]


def test_the_latest_run_is_read_without_dagster_only_from_a_config_of_ours(dagster_home):
    with pytest.raises(envfoundry_instance.RunsUnknown, match="no runs database"):
        envfoundry_instance.latest_run_id(dagster_home)
    with dg.DagsterInstance.get() as inst:
        assert envfoundry_instance.latest_run_id(dagster_home) is None  # created, no runs
        for key in ["a", "b"]:
            assert dg.materialize([numbers], instance=inst, partition_key=key).success
        newest = inst.get_runs(limit=1)[0].run_id
    assert envfoundry_instance.latest_run_id(dagster_home) == newest
    # A user's own config may store runs anywhere: Dagster is asked then.
    config = dagster_home / "dagster.yaml"
    config.write_text(config.read_text() + "# mine\n")
    with pytest.raises(envfoundry_instance.RunsUnknown, match="not the one"):
        envfoundry_instance.latest_run_id(dagster_home)


def test_engines_of_the_least_recently_used_databases_are_dropped(tmp_path):
    engines = storage._Engines(2)
    first = engines.get(f"sqlite:///{tmp_path}/1.db")
    engines.get(f"sqlite:///{tmp_path}/2.db")
    assert engines.get(f"sqlite:///{tmp_path}/1.db") is first  # kept, and now the newest
    engines.get(f"sqlite:///{tmp_path}/3.db")
    assert engines.get(f"sqlite:///{tmp_path}/1.db") is first
    assert sorted(engines._engines) == [f"sqlite:///{tmp_path}/{n}.db" for n in (1, 3)]


def test_a_connection_opened_in_one_thread_is_closed_from_another(tmp_path, caplog):
    """A run's threads share the pools (a connection goes to one thread at a time); an engine
    dropped or a pool emptied in another thread closes connections it did not open."""
    engines = storage._Engines(1)
    first = f"sqlite:///{tmp_path}/1.db"
    opener = threading.Thread(target=lambda: engines.get(first).connect().close())
    opener.start()
    opener.join()
    assert engines.get(first).pool.checkedin() == 1
    engines.get(f"sqlite:///{tmp_path}/2.db")  # drops the first engine, closing its pool here
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert problems == [], [r.getMessage() for r in problems]
