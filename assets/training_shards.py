"""Training shards: fine-tuning JSONL, parquet and an RL task manifest, with a sha256 manifest."""

import shutil

import dagster as dg

from assets._util import code_version, made_by_this_build
from orchestration.resources import BuildSettings
from quality.expectations import validate
from synthesis.export import datasets, warehouse
from synthesis.export.shards import verify_manifest, write_shards
from synthesis.models import Check, QuarantineRecord, Scenario, Trajectory
from synthesis.tasks.screening import apply_screening


@dg.asset(
    group_name="export",
    code_version=code_version("synthesis.export.shards", "synthesis.tasks.difficulty"),
    check_specs=[
        dg.AssetCheckSpec(
            "great_expectations",
            asset="training_shards",
            blocking=True,
            description="Great Expectations suite for the manifest",
        )
    ],
    deps=[dg.AssetKey(["warehouse", "trajectories"]), dg.AssetKey(["warehouse", "scenarios"])],
    description="Successful oracle trajectories of published scenarios (screened across "
    "environments), split by program shape, as OpenAI fine-tuning JSONL and parquet; "
    "manifest.json lists every file with its sha256.",
)
def training_shards(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    trajectories: dict,
    checks: dict,
    task_screening: dict,
):
    kept, _ = made_by_this_build(context, checks)
    checks = {k: v for k, v in checks.items() if k in kept}
    trajectories = {k: v for k, v in trajectories.items() if k in kept}
    scenarios = apply_screening(
        [Scenario.model_validate(s) for part in checks.values() for s in part["scenarios"]],
        [QuarantineRecord.model_validate(q) for q in task_screening["quarantine"]],
    )
    scenario_checks = [Check.model_validate(c) for part in checks.values() for c in part["checks"]]
    trajs = [
        Trajectory.model_validate(t) for part in trajectories.values() for t in part["trajectories"]
    ]
    staged = settings.staged(context.run_id)
    shards_dir = staged / datasets.PARTS["shards"]
    # The folder is this build's own: files of an earlier build must not linger unlisted.
    shutil.rmtree(shards_dir, ignore_errors=True)
    manifest = write_shards(
        trajs,
        shards_dir,
        seed=settings.seed,
        scenarios=scenarios,
        checks=scenario_checks,
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
