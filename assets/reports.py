"""Reports: the self-contained data-quality and dataset report built from the warehouse."""

import dagster as dg

from orchestration.resources import BuildSettings
from quality.report import write_report


@dg.asset(
    group_name="reports",
    deps=[dg.AssetKey(["dbt", "mart_funnel"])],
    description="Markdown + standalone HTML report (funnel, environment quality, task "
    "difficulty, quarantine reasons) with inline SVG plots; no CDN needed.",
)
def quality_report(context: dg.AssetExecutionContext, settings: BuildSettings) -> None:
    paths = write_report(settings.warehouse_path, settings.reports_dir, None)
    markdown = paths.get("markdown")
    context.add_output_metadata(
        {
            **{name: dg.MetadataValue.path(str(p)) for name, p in paths.items()},
            **({"report": dg.MetadataValue.md(markdown.read_text()[:20000])} if markdown else {}),
        }
    )
