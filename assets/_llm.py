"""The LLM client of one asset run, and the run's ledger spool: every LLM stage's one way in.

An asset that asks a model opens `llm_run(context, settings)`: offline it yields None and
nothing else happens (no file, no import of the SDK). With an endpoint it yields a client
whose rows carry the build id and the run id, whose budget and deadline are the build's
(one account file per build, shared by every process), and whose every attempt, however the
run ends (returned, raised, stopped by a budget), is appended to the run's own spool file
for the `warehouse` asset to read (synthesis/llm/spool.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from assets._resources import BuildSettings
from assets._util import BUILD_TAG
from synthesis.config import LLMSettings, llm_budget_path, llm_cache_dir
from synthesis.llm import spool
from synthesis.llm.client import LLMClient, budget_for


def build_id_of(context: dg.AssetExecutionContext) -> str:
    """The build a run belongs to: its build tag, or (a run launched from the UI) its own id."""
    return context.run.tags.get(BUILD_TAG) or context.run.run_id


def run_spool_file(context: dg.AssetExecutionContext, settings: BuildSettings):
    """This asset run's spool file."""
    partition = context.partition_key if context.has_partition_key else None
    return spool.spool_file(
        settings.home_path,
        build_id_of(context),
        context.asset_key.to_user_string(),
        partition,
    )


@contextmanager
def llm_run(
    context: dg.AssetExecutionContext, settings: BuildSettings
) -> Iterator[LLMClient | None]:
    llm = LLMSettings.from_env()
    if not llm.enabled:
        yield None
        return
    build_id = build_id_of(context)
    home = settings.home_path
    client = LLMClient(
        llm,
        cache_dir=llm_cache_dir(home),
        build_id=build_id,
        budget=budget_for(llm, llm_budget_path(home, build_id)),
        run_id=context.run.run_id,
    )
    try:
        yield client
    finally:
        # Failed and stopped attempts are spend too: they are spooled even when the run fails.
        written = spool.append_rows(
            run_spool_file(context, settings), client.ledger.rows(), secrets=[llm.api_key]
        )
        context.log.info(f"{written} LLM ledger rows spooled for the warehouse")


def spooled_calls(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    stages: tuple[str, ...],
    env_ids: list[str],
    catalogue_stages: tuple[str, ...] = (),
) -> list[dict]:
    """The ledger rows the warehouse takes in this run, from the spool.

    A build's run takes every file of its build: all it spent, the attempts of an
    environment whose run later failed included. A run launched from the UI carries no
    build: it takes the files of the runs that made the artifacts it publishes (the latest
    materialization of each per-environment ledger stage in `stages`, and of each
    unpartitioned one in `catalogue_stages`), as it publishes those artifacts. Rows read
    again are merged by call id, never doubled.
    """
    home = settings.home_path
    build_id = context.run.tags.get(BUILD_TAG)
    if build_id:
        return spool.read_rows(spool.build_files(home, build_id))
    wanted = [(stage, None) for stage in catalogue_stages] + [
        (stage, env_id) for stage in stages for env_id in env_ids
    ]
    files = []
    for stage, partition in wanted:
        records = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(stage),
                asset_partitions=[partition] if partition is not None else None,
            ),
            limit=1,
        ).records
        if not records:
            continue
        run_id = records[0].run_id
        run = context.instance.get_run_by_id(run_id)
        made_by = (run.tags.get(BUILD_TAG) if run is not None else None) or run_id
        files.append(spool.spool_file(home, made_by, stage, partition))
    return spool.read_rows(files)
