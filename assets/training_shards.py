"""Training shards: fine-tuning JSONL, parquet and an RL task manifest, with a sha256 manifest."""

import shutil

import dagster as dg

from assets._util import code_version
from orchestration.resources import BuildSettings
from quality.expectations import validate
from synthesis.export import datasets, warehouse
from synthesis.export.shards import verify_manifest, write_shards_from_warehouse


@dg.asset(
    group_name="export",
    code_version=code_version(
        "synthesis.export.shards", "synthesis.export.warehouse", "synthesis.tasks.difficulty"
    ),
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
    description="Successful oracle trajectories of published scenarios (screened across "
    "environments), split by program shape, as OpenAI fine-tuning JSONL and parquet; "
    "manifest.json lists every file with its sha256.",
)
def training_shards(context: dg.AssetExecutionContext, settings: BuildSettings):
    staged = settings.staged(context.run_id)
    shards_dir = staged / datasets.PARTS["shards"]
    # The folder is this build's own: files of an earlier build must not linger unlisted.
    shutil.rmtree(shards_dir, ignore_errors=True)
    manifest = write_shards_from_warehouse(
        staged / datasets.PARTS["warehouse"],
        shards_dir,
        seed=settings.seed,
        inputs_sha256=settings.inputs_sha256,
    )
    datasets.fault_point("shards")
    manifest_path = shards_dir / "manifest.json"
    problems = verify_manifest(
        manifest_path, seed=settings.seed, inputs_sha256=settings.inputs_sha256
    )
    if problems:
        raise dg.Failure("shard manifest does not verify: " + "; ".join(problems))
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
            "rows": sum(f["rows"] for f in manifest["files"]),
        },
    )
