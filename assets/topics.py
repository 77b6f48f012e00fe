"""Topics: the catalogue entries this build manufactures environments for."""

import dagster as dg

from assets._util import code_version, md_table
from orchestration.resources import BuildSettings
from synthesis.environments.archetypes import known_archetypes, supported_archetypes
from synthesis.environments.topics import load_catalogue, select_topics, waiting_topics


@dg.asset(
    group_name="catalogue",
    code_version=code_version("synthesis.environments.topics"),
    description="Topics taken from data/topics.json (or your own catalogue) for the profile, "
    "round-robin over the archetypes that have a generator; entries naming a `source` "
    "are existing environment classes, always taken.",
)
def topics(context: dg.AssetExecutionContext, settings: BuildSettings) -> list[dict]:
    path = settings.catalogue_path
    catalogue = load_catalogue(path, known=known_archetypes()) if path is not None else []
    supported = supported_archetypes()
    chosen = select_topics(catalogue, supported, settings.profile_obj.max_topics)
    waiting = waiting_topics(catalogue, supported)
    context.add_output_metadata(
        {
            "catalogue": dg.MetadataValue.path(str(path)) if path else "none",
            "catalogue_topics": len(catalogue),
            "selected": len(chosen),
            "waiting_for_an_archetype": dg.MetadataValue.json(
                {t.topic_id: t.archetype for t in waiting}
            ),
            "preview": md_table(
                [t.model_dump() for t in chosen], ["topic_id", "archetype", "source", "title"]
            ),
        }
    )
    return [t.model_dump(mode="json") for t in chosen]
