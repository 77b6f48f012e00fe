"""Training shards: fine-tuning JSONL, parquet and an RL task manifest, with a sha256 manifest."""

import dagster as dg

from assets._util import code_version
from orchestration.resources import BuildSettings
from synthesis import warehouse
from synthesis.models import Trajectory
from synthesis.shards import verify_manifest, write_shards


@dg.asset(
    group_name="training_shards",
    code_version=code_version("synthesis.shards"),
    deps=[dg.AssetKey(["warehouse", "trajectories"]), dg.AssetKey(["warehouse", "scenarios"])],
    description="Successful oracle trajectories of published scenarios, split by "
    "environment, as OpenAI fine-tuning JSONL and parquet; manifest.json "
    "lists every file with its sha256.",
)
def training_shards(
    context: dg.AssetExecutionContext, settings: BuildSettings, trajectories: dict, checks: dict
) -> dict:
    published = {
        s["scenario_id"]
        for part in checks.values()
        for s in part["scenarios"]
        if s["status"] == "published"
    }
    trajs = [
        Trajectory.model_validate(t)
        for part in trajectories.values()
        for t in part
        if t["scenario_id"] in published
    ]
    manifest = write_shards(trajs, settings.shards_dir, seed=settings.seed)
    manifest_path = settings.shards_dir / "manifest.json"
    problems = verify_manifest(manifest_path)
    if problems:
        raise dg.Failure("shard manifest does not verify: " + "; ".join(problems))
    warehouse.write_table(settings.warehouse_path, "shards", warehouse.shard_rows(manifest))
    context.add_output_metadata(
        {
            "manifest": dg.MetadataValue.path(str(manifest_path)),
            "files": dg.MetadataValue.json(manifest["files"]),
            "rows": sum(f["rows"] for f in manifest["files"]),
        }
    )
    return manifest
