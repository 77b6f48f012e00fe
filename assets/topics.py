"""Topics: the catalogue entries this build manufactures environments for."""

import dagster as dg

from assets._util import code_version, md_table
from orchestration.resources import BuildSettings
from synthesis.archetypes import supported_archetypes
from synthesis.topics import load_catalogue, select_topics


@dg.asset(
    group_name="topics",
    code_version=code_version("synthesis.topics"),
    description="Topics taken from data/topics.json for the profile, round-robin over "
    "the archetypes that have a generator.",
)
def topics(context: dg.AssetExecutionContext, settings: BuildSettings) -> list[dict]:
    catalogue = load_catalogue(settings.catalogue_path)
    chosen = select_topics(catalogue, supported_archetypes(), settings.profile_obj.max_topics)
    context.add_output_metadata(
        {
            "catalogue": dg.MetadataValue.path(str(settings.catalogue_path)),
            "catalogue_topics": len(catalogue),
            "selected": len(chosen),
            "preview": md_table(
                [t.model_dump() for t in chosen], ["topic_id", "archetype", "title"]
            ),
        }
    )
    return [t.model_dump(mode="json") for t in chosen]
