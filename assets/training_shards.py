"""Training shards: fine-tuning JSONL, TRL parquet, self-contained RL tasks and a dataset card,
with a sha256 manifest."""

import shutil

import dagster as dg

from assets._resources import BuildSettings
from assets._util import provenance_of, stage_asset
from quality.expectations import validate
from synthesis.export import datasets, warehouse
from synthesis.export.shards import write_shards_from_warehouse


@stage_asset(
    group_name="export",
    check_specs=[
        dg.AssetCheckSpec(
            "great_expectations",
            asset="training_shards",
            blocking=True,
            description="Great Expectations suite for the manifest",
        )
    ],
    # The shards are made from the warehouse tables this run wrote (behind their gates):
    # they hold every trajectory and check of this build's environments, and the scenarios
    # with the screening applied, as canonical JSON, so nothing is parsed twice. Screening
    # decides which scenarios ship: an edge of its own.
    deps=[
        dg.AssetKey("task_screening"),
        dg.AssetKey(["warehouse", "trajectories"]),
        dg.AssetKey(["warehouse", "scenarios"]),
        dg.AssetKey(["warehouse", "checks"]),
    ],
    description="Published scenarios (screened across environments), split by program shape: "
    "successful oracle runs as OpenAI fine-tuning JSONL and TRL parquet, self-contained RL "
    "tasks with their environments' code and the reward module, the training policies' "
    "successful trajectories and a dataset card; manifest.json lists every file with its "
    "sha256.",
)
def training_shards(context: dg.AssetExecutionContext, settings: BuildSettings):
    staged = settings.staged(context.run_id)
    shards_dir = staged / datasets.PARTS["shards"]
    # The folder is this build's own: files of an earlier build must not linger unlisted.
    shutil.rmtree(shards_dir, ignore_errors=True)
    # The dataset card says how the build was made, as the report does (no time, no host).
    provenance = provenance_of(settings)
    manifest = write_shards_from_warehouse(
        staged / datasets.PARTS["warehouse"],
        shards_dir,
        seed=settings.seed,
        inputs_sha256=settings.inputs_sha256,
        provenance={label: value for label, value, _ in provenance.lines()},
    )
    datasets.fault_point("shards")
    manifest_path = shards_dir / "manifest.json"
    # Each file's sha256 in the manifest is of the bytes written: the files are verified
    # against it once, by `published_dataset`, the last step before they publish (reading
    # them back here too cost a full build's publish another second).
    rows = warehouse.shard_rows(manifest)
    gate = validate("shards", rows)
    yield dg.AssetCheckResult(
        check_name="great_expectations", passed=gate.success, metadata=gate.to_metadata()
    )
    if not gate.success:
        raise dg.Failure(f"shard manifest failed its gate: {gate.summary()}")
    warehouse.write_table(staged / datasets.PARTS["warehouse"], "shards", rows)
    yield dg.Output(
        manifest,
        metadata={
            "manifest": dg.MetadataValue.path(str(manifest_path)),
            "files": dg.MetadataValue.json(manifest["files"]),
            "rows": sum(f["rows"] or 0 for f in manifest["files"]),
        },
    )
