"""The instance's SQLite storage: Dagster's files, with kept engines and connections.

Dagster's SQLite storages build a new engine for every connection they open, open a connection
for every use (the run's database, then the index for an asset or check event, then again for
its tags) and close it after: ~4.5 ms of engine set-up per connection, and each close of a WAL
database's last connection checkpoints it (writes the log back into the database and syncs
it). Storing an event cost far more than writing it: a publish run's `create_run` alone
stores ~175 "planned" events (about 6 s on a busy machine), and an environment run spent
about a third of its time in SQLite.

These subclasses keep what is stored and where (the same files, the same WAL journal) and
change how it gets there: one engine per database file, whose pool keeps its connections
open, so the log is checkpointed as SQLite does by itself (every 1,000 pages), not at every
event; and `synchronous=NORMAL`, which in WAL mode keeps the database consistent through any
crash and may lose only the last transactions on a power cut (Dagster's default syncs the log
at every commit). A forked child never uses its parent's connections: the pools are emptied in
it without closing them (they are the parent's). Engines of run databases are kept for the
last few runs only: a webserver reads many runs, a run writes to one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy.event
import sqlalchemy.exc
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.pool import QueuePool

from orchestration.fastrun.dagster_internals import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    DagsterSqliteStorage,
    DagsterStorage,
    SqlEventLogStorageMetadata,
    SqliteEventLogStorage,
    SqliteRunStorage,
    SqliteScheduleStorage,
    create_db_conn_string,
    create_engine,
    event_logs_directory,
    get_alembic_config,
    import_state_storage,
    runs_directory,
    schedule_directory,
    sqlite_event_log,
)


class StorageElsewhere(RuntimeError):
    """The home's dagster.yaml names another directory's storage."""


# Run databases whose engine is kept (a build writes to a few at once; the index is kept apart).
_RUN_ENGINES = 32


class _Engines:
    """Engines by connection string, the least recently used dropped beyond `capacity`."""

    def __init__(self, capacity: int, **connect_args: Any) -> None:
        self._engines: OrderedDict[str, Any] = OrderedDict()
        self._capacity = capacity
        self._connect_args = connect_args
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, conn_string: str) -> Any:
        with self._lock:
            engine = self._engines.get(conn_string)
            if engine is None:
                engine = create_engine(
                    conn_string, poolclass=QueuePool, connect_args=self._connect_args
                )
                sqlalchemy.event.listen(engine, "connect", _set_pragmas)
                self._engines[conn_string] = engine
                while len(self._engines) > self._capacity:
                    _, dropped = self._engines.popitem(last=False)
                    dropped.dispose()
            else:
                self._engines.move_to_end(conn_string)
            return engine

    def forget_connections(self) -> None:
        """In a forked child: let go of the parent's pooled connections without closing them."""
        self._lock = threading.Lock()  # a thread of the parent may have held it at the fork
        for engine in self._engines.values():
            engine.dispose(close=False)


def _set_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


@functools.cache
def _scripts() -> ScriptDirectory:
    # Reading the migration scripts and mapping their revisions is most of what creating a
    # run's database costs (~0.1 s): once per process.
    return ScriptDirectory.from_config(get_alembic_config(sqlite_event_log.__file__))


def _head_revision() -> str:
    return _scripts().as_revision_number("head")


def preload() -> None:
    """What every process that opens an instance on this storage reads or imports before its
    first query (~0.15 s): read once by a process that forks them (the run host)."""
    import upath  # noqa: F401 - the instance's state storage imports it when it is opened

    import_state_storage()

    _head_revision()


def _at_head(engine: Any) -> bool:
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision() == _head_revision()
    except sqlalchemy.exc.SQLAlchemyError:
        return False  # no such file or table yet: the parent creates it


def _created_at_head(engine: Any) -> bool:
    """Make a run's new database file as SqliteEventLogStorage._initdb makes it (its tables,
    the WAL journal, the alembic version stamped at the head), with the migration scripts
    read once per process. False, having changed nothing, when the file already has tables
    or another process is making it at the same time: the parent's way handles both."""
    try:
        with engine.connect() as conn:
            if sqlalchemy.inspect(conn).get_table_names():
                return False
            # The journal first: in WAL mode, with `synchronous=NORMAL`, the tables' statements
            # are not synced one by one to the disk.
            conn.execute(sqlalchemy.text("PRAGMA journal_mode=WAL;"))
            SqlEventLogStorageMetadata.create_all(conn, checkfirst=False)  # it has none
            MigrationContext.configure(conn).stamp(_scripts(), "head")
            conn.commit()
    except sqlalchemy.exc.OperationalError:  # "already exists", "database is locked"
        return False
    return True


def _file_made(path: str, tables: frozenset[str]) -> bool:
    """Whether the SQLite file at `path` is at the head revision and has `tables` (read with
    sqlite3: an engine for one look would cost more than the look)."""
    if not os.path.isfile(path):
        return False
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not tables | {"alembic_version"} <= {name for (name,) in rows}:
                return False
            versions = db.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error:
        return False
    return versions == [(_head_revision(),)]


_ALL: weakref.WeakSet[_Engines] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for engines in list(_ALL):
        engines.forget_connections()


os.register_at_fork(after_in_child=_after_fork_in_child)


class EventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage whose `_connect` reuses each database's engine. `home`: the
    Dagster directory it belongs to, checked against the instance that opens it."""

    def __init__(self, base_dir: str, inst_data: Any = None, home: str | None = None) -> None:
        # Set first: the parent's __init__ already connects.
        self._engines = _Engines(_RUN_ENGINES, timeout=SQLITE_BUSY_TIMEOUT_SECONDS)
        self._tables: set[str] = set()
        self._home = home
        super().__init__(base_dir, inst_data)

    def register_instance(self, instance: Any) -> None:
        # A home copied or moved still names its old directory in dagster.yaml: opening it
        # would read and write the other home's runs. Said, not done.
        if self._home is not None and not os.path.samefile(self._home, instance.root_directory):
            raise StorageElsewhere(
                f"the instance at {instance.root_directory} names its storage at {self._home} "
                "(a copied or moved home?): run a build on it, or fix base_dir in its "
                "dagster.yaml"
            )
        super().register_instance(instance)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> EventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _initdb(self, engine: Any, for_index_shard: bool = False) -> None:
        # The parent reads every migration script to find the head revision for each database
        # file a process opens, twice for a new one (its check, then alembic's stamp): ~0.13 s
        # per run, for the build that creates it. A file already at the head needs nothing, a
        # new run's file is made as the parent makes it; anything else goes the parent's way.
        if _at_head(engine) or (not for_index_shard and _created_at_head(engine)):
            return
        super()._initdb(engine, for_index_shard)

    def has_table(self, table_name: str) -> bool:
        # Asked before most queries (has_dynamic_partition: a few times per input a step
        # loads); the parent builds an engine for each answer. A table once there stays.
        if table_name in self._tables:
            return True
        engine = self._engines.get(self.conn_string_for_shard(INDEX_SHARD_NAME))
        with engine.connect() as conn:
            found = bool(engine.dialect.has_table(conn, table_name))
        if found:
            self._tables.add(table_name)
        return found

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Any]:
        # As the parent's, but with a kept engine (the parent builds and disposes one here).
        with self._db_lock:
            engine = self._engines.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn


class _OneDatabase:
    """For a storage of one database file (`_conn_string`): `connect` reuses its engine."""

    _conn_string: str
    _DATABASE: str  # the file's name, without ".db"
    _TABLES: frozenset[str]  # what the parent's `from_local` makes besides the schema's

    def __init__(self, conn_string: str, inst_data: Any = None) -> None:
        self._engines = _Engines(1)  # first: the parent's __init__ may connect
        super().__init__(conn_string, inst_data)  # type: ignore[call-arg]

    @classmethod
    def from_local(cls, base_dir: str, inst_data: Any = None) -> Any:
        # The parent compares the file's alembic revision with the head by reading every
        # migration script (~60 ms a database), in every process that opens the instance:
        # each run's too. A file at the head, with the tables it makes, needs none of that.
        if _file_made(os.path.join(base_dir, f"{cls._DATABASE}.db"), cls._TABLES):
            return cls(create_db_conn_string(base_dir, cls._DATABASE), inst_data)
        return super().from_local(base_dir, inst_data)  # type: ignore[misc]

    @contextmanager
    def connect(self) -> Iterator[Any]:
        with self._engines.get(self._conn_string).connect() as conn, conn.begin():
            yield conn


class RunStorage(_OneDatabase, SqliteRunStorage):
    """SqliteRunStorage whose `connect` reuses the runs database's engine."""

    _DATABASE = "runs"
    _TABLES = frozenset({"runs", "instance_info"})


class ScheduleStorage(_OneDatabase, SqliteScheduleStorage):
    """SqliteScheduleStorage whose `connect` reuses the schedules database's engine."""

    _DATABASE = "schedules"
    _TABLES = frozenset({"jobs", "job_ticks"})


class SqliteStorage(DagsterSqliteStorage):
    """DagsterSqliteStorage (the same files under `base_dir`) made of the storages above;
    named in the home's dagster.yaml as `storage: custom:`."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        # The parent's __init__ would open the stock storages first: its body, with ours.
        self.base_dir = base_dir
        self._run_storage = RunStorage.from_local(runs_directory(base_dir))
        self._event_log_storage = EventLogStorage(event_logs_directory(base_dir), home=base_dir)
        self._schedule_storage = ScheduleStorage.from_local(schedule_directory(base_dir))
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> SqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)
