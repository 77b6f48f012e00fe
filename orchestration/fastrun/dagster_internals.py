"""Every private Dagster name the project uses: the one module that imports `dagster._...`.

Dagster's public API does not reach what the fast-run code does (a run launched from a process
forked off a loaded code location, executed as `dagster api execute_run` executes it; a code
server spoken to over gRPC), nor submitting runs and backfills as the UI does, nor a storage
that keeps its SQLite engines. Private modules change between releases without notice, so
they are imported here and nowhere else: after an upgrade, tests/orchestration/
test_dagster_internals.py names each one that moved or went, and this file is the one to fix.

Importing it costs ~40 ms once Dagster and the instance's storage are loaded. What must start
without Dagster (the CLI until it knows something changed, a run host until it has bound its
socket) imports it inside the functions that need it.
"""

# Grouped by the code that needs them, not sorted: F401 (re-exported), I001 (sorting).
# ruff: noqa: F401, I001

# The run launcher (launcher.py): a ConfigurableClass the instance config names, launching
# each run of a module code location on the run host of its origin.
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.launcher import LaunchRunContext, RunLauncher
from dagster._core.origin import JobPythonOrigin
from dagster._core.workspace.load import location_origins_from_yaml_paths
from dagster._serdes import ConfigurableClass, ConfigurableClassData

# The run host (runhost.py): a forked child executes its run as `dagster api execute_run`.
from dagster._cli.api import _execute_run_command_body as execute_run_command_body
from dagster._core.instance import InstanceRef
from dagster._utils.interrupts import capture_interrupts

# Warm code servers (warm.py): whether one answers, and a build's heartbeats.
from dagster._grpc.client import DagsterGrpcClient

# Runs and backfills submitted through the instance as the UI submits them
# (orchestration/runs.py), and the run keys of automation's requests (orchestration/automation.py).
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import RemotePartitionSetOrigin
from dagster._core.remote_representation.external_data import PARTITION_SET_SNAP_NAME_SUFFIX
from dagster._core.storage.dagster_run import FINISHED_STATUSES
from dagster._core.storage.tags import RUN_KEY_TAG
from dagster._core.utils import make_new_backfill_id
from dagster._core.workspace.context import WorkspaceProcessContext, WorkspaceRequestContext
from dagster._core.workspace.load_target import GrpcServerTarget, WorkspaceFileTarget

# The instance's storage (orchestration/storage.py): Dagster's SQLite storages, subclassed.
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sql import create_engine, get_alembic_config
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS, create_db_conn_string
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._core.storage.sqlite_storage import _event_logs_directory as event_logs_directory
from dagster._core.storage.sqlite_storage import _runs_directory as runs_directory
from dagster._core.storage.sqlite_storage import _schedule_directory as schedule_directory

# The tags data and code versions are recorded under: assets/_staleness.py (below
# orchestration) names them itself, and the test holds its names to these.
from dagster._core.definitions.data_version import (
    CODE_VERSION_TAG,
    DATA_VERSION_TAG,
    get_input_data_version_tag,
)


def import_state_storage() -> None:
    """The instance's state storage, which Dagster imports when an instance is opened: a
    process that forks instance-opening children imports it once for them."""
    import dagster._core.storage.defs_state.blob_storage_state_storage
