"""Reports and publishing: the data-quality report, then the dataset swapped in as current."""

from datetime import UTC, datetime

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._util import PUBLISH_INPUTS_TAG, made_by_this_build, provenance_of, stage_asset
from quality.report import write_report
from synthesis.export import datasets, losses
from synthesis.export.shards import verify_manifest

REPORTED_MARTS = (
    "mart_funnel",
    "mart_env_quality",
    "mart_task_difficulty",
    "mart_kill_rates",
    "mart_quarantine_reasons",
    "mart_policy_benchmark",
    "mart_token_cost",
)


@stage_asset(
    group_name="export",
    # What the report reads: every mart it renders and the gate verdicts.
    deps=[
        *(dg.AssetKey(["dbt", mart]) for mart in REPORTED_MARTS),
        dg.AssetKey(["warehouse", "quality_gates"]),
    ],
    description="Markdown + standalone HTML report (funnel, environment quality, task "
    "difficulty and tiers, kill rates by answer kind, quarantine reasons) with inline SVG "
    "plots; no CDN needed.",
)
def quality_report(context: dg.AssetExecutionContext, settings: BuildSettings) -> None:
    staged = settings.staged(context.run_id)
    provenance = provenance_of(settings)
    paths = write_report(
        staged / datasets.PARTS["warehouse"],
        staged / datasets.PARTS["reports"],
        None,
        provenance=provenance,
    )
    datasets.fault_point("report")
    markdown = paths.get("markdown")
    context.add_output_metadata(
        {
            # The build's time lives here (when this run wrote the report) and in the CLI
            # summary, never in the report, which stays byte-identical for the same inputs.
            "built_at": dg.MetadataValue.timestamp(datetime.now(UTC)),
            "profile": provenance.profile,
            "seed": provenance.seed,
            "generator": provenance.generator,
            "catalogue": provenance.catalogue,
            "foreign_sources": ", ".join(provenance.foreign_sources) or "none",
            "llm": provenance.llm,
            "inputs_sha256": provenance.inputs_sha256,
            **{name: dg.MetadataValue.path(str(p)) for name, p in paths.items()},
            **({"report": dg.MetadataValue.md(markdown.read_text()[:20000])} if markdown else {}),
        }
    )


@stage_asset(
    group_name="export",
    deps=[quality_report],
    description="The dataset this run built (warehouse, shards, marts, report) made the "
    "home's current one in one atomic swap, once every gate before it passed; a failed or "
    "killed run leaves the last good dataset as it was.",
)
def published_dataset(context: dg.AssetExecutionContext, settings: BuildSettings) -> None:
    staged = settings.staged(context.run_id)
    manifest = staged / datasets.PARTS["shards"] / "manifest.json"
    problems = verify_manifest(manifest, seed=settings.seed, inputs_sha256=settings.inputs_sha256)
    if problems:
        raise dg.Failure("the dataset does not verify, nothing published: " + "; ".join(problems))
    warehouse_file = staged / datasets.PARTS["warehouse"]
    floor, floor_source = settings.publish_floor(losses.asked_environments(warehouse_file))
    loss: list[losses.Loss | None] = []

    def why_short(tasks: int) -> str:
        loss.append(losses.lost_where(warehouse_file, settings.profile_obj.scenarios_per_env))
        return loss[0].text() if loss[0] is not None else "the funnel could not be read"

    try:
        datasets.publish(settings.home_path, staged, floor=floor, why_short=why_short)
    except datasets.BelowFloor as exc:
        current = datasets.current_dir(settings.home_path)
        kept = f"the current dataset stays {current}" if current else "no dataset is published"
        raise dg.Failure(
            description=f"nothing published: {exc.tasks} task(s), under the publish floor of "
            f"{exc.floor} ({floor_source}); lost at {exc.why or 'an unknown stage'}; {kept}, "
            f"and this build's is left unpublished in {staged}; --allow-empty (or "
            "--min-published 0) publishes it anyway",
            metadata={
                "publish_floor": floor,
                "floor_set_by": floor_source,
                "published_tasks": exc.tasks,
                "lost_at": loss[0].stage if loss and loss[0] is not None else "unknown",
                "unpublished_dataset": dg.MetadataValue.path(str(staged)),
            },
        ) from None
    context.add_output_metadata(
        {
            "dataset": dg.MetadataValue.path(str(staged)),
            "published_tasks": datasets.published_tasks(staged),
            "publish_floor": floor,
            "current": dg.MetadataValue.path(str(settings.home_path / datasets.CURRENT)),
            "seed": settings.seed,
            "inputs_sha256": settings.inputs_sha256,
            # What a later build compares to decide whether to publish again
            # (orchestration/reuse.py). Not recorded when an environment was left out as not
            # current: the next build must publish again, not keep a dataset without it. Runs
            # launched from the UI record none.
            **(
                {"publish_inputs": context.run.tags[PUBLISH_INPUTS_TAG]}
                if PUBLISH_INPUTS_TAG in context.run.tags and not _left_out(context)
                else {}
            ),
        }
    )


def _left_out(context: dg.AssetExecutionContext) -> list[str]:
    """The environments this build's publish left out because a stage of theirs is stale."""
    env_ids = context.instance.get_dynamic_partitions(environment_partitions.name)
    return made_by_this_build(context, env_ids)[1]
