"""Topics: the catalogue entries this build manufactures environments for, and (with an LLM
endpoint) the topics mined from a task corpus."""

import dagster as dg

from assets import _settings
from assets._llm import llm_run
from assets._resources import BuildSettings
from assets._util import md_table, stage_asset, top_reasons
from synthesis.environments.archetypes import known_archetypes, supported_archetypes
from synthesis.environments.topics import (
    CATALOGUE_PATH,
    load_catalogue,
    select_topics,
    waiting_topics,
)
from synthesis.llm.topic_mining import MinedTopics, mine_corpus
from synthesis.models import Topic


@stage_asset(
    group_name="catalogue",
    description="Topics mined by the `topic` LLM stage from a task corpus (JSONL of user "
    "requests; data/task_corpus.jsonl or your own): stateful requests only, deduplicated, "
    "ranked by usefulness, the profile's `llm_mined_topics` taken. A `project` topic's "
    "folder (ledger, fields, groups, items, statuses) is written by the `project_topic` "
    "stage and kept only when its folder is made and its tasks planned. Every other request "
    "is listed with why. Offline (no endpoint) nothing is mined.",
)
def mined_topics(context: dg.AssetExecutionContext, settings: BuildSettings) -> dict:
    refuse_bad_inputs(settings)
    with llm_run(context, settings) as client:
        if client is None:
            context.add_output_metadata({"mode": "offline: no endpoint", "kept": 0, "dropped": 0})
            return {"topics": [], "dropped": []}
        path = settings.corpus_path
        if path is None:
            context.add_output_metadata({"mode": "no corpus (corpus = none)", "kept": 0})
            return {"topics": [], "dropped": []}
        mined = mine_corpus(
            client,
            path,
            _vocabulary_sources(settings),
            settings.profile_obj.llm_mined_topics,
            seed=settings.seed,
        )
    context.add_output_metadata(_mined_metadata(mined, str(path)))
    return mined.artifact()


def refuse_bad_inputs(settings: BuildSettings) -> None:
    """The inputs' one check (the CLI's, before a build: assets/_settings.py), in the first
    steps of the catalogue run: a run launched from the UI or the daemon reads its settings
    from ENVFOUNDRY_* and the home's build-settings.json, and an empty or broken catalogue
    there stops it before anything is made of it, naming where the value came from."""
    problem = _settings.run_input_problem(settings.model_dump())
    if problem is not None:
        raise dg.Failure(f"refused before any work: {problem}")


def _vocabulary_sources(settings: BuildSettings) -> list[Topic]:
    """The catalogue mined topics borrow vocabularies from: the build's, or the shipped one
    when the build has none (its topics are then lent, not built)."""
    path = settings.catalogue_path or CATALOGUE_PATH
    return load_catalogue(path, known=known_archetypes())


def _mined_metadata(mined: MinedTopics, corpus: str) -> dict:
    return {
        "mode": "llm",
        "corpus": dg.MetadataValue.path(corpus),
        "kept": len(mined.kept),
        "dropped": len(mined.dropped),
        "llm_calls": len(mined.attempts),
        "drop_reasons": top_reasons(d.reason for d in mined.dropped),
        "kept_topics": md_table(
            [
                {
                    "topic_id": k.topic.topic_id,
                    "archetype": k.topic.archetype,
                    "request": k.request_id,
                    "usefulness": f"{k.usefulness:.2f}",
                    "vocabulary_from": k.vocabulary_from,
                }
                for k in mined.kept
            ],
            ["topic_id", "archetype", "request", "usefulness", "vocabulary_from"],
        ),
        "dropped_requests": md_table([d.row() for d in mined.dropped], ["id", "reason"], 50),
    }


@stage_asset(
    group_name="catalogue",
    description="Topics taken from data/topics.json (or your own catalogue) for the profile, "
    "round-robin over the archetypes that have a generator; entries naming a `source` "
    "are existing environment classes, always taken. Topics mined from the task corpus "
    "(`mined_topics`, LLM only) follow the catalogue's.",
)
def topics(
    context: dg.AssetExecutionContext, settings: BuildSettings, mined_topics: dict
) -> list[dict]:
    refuse_bad_inputs(settings)
    path = settings.catalogue_path
    catalogue = load_catalogue(path, known=known_archetypes()) if path is not None else []
    supported = supported_archetypes()
    chosen = select_topics(catalogue, supported, settings.profile_obj.max_topics)
    waiting = waiting_topics(catalogue, supported)
    # A catalogue of your own could name an id the miner chose: the catalogue's entry wins.
    taken = {t.topic_id for t in chosen}
    mined = [Topic.model_validate(t) for t in mined_topics["topics"]]
    mined = [t for t in mined if t.topic_id not in taken]
    context.add_output_metadata(
        {
            "catalogue": dg.MetadataValue.path(str(path)) if path else "none",
            "catalogue_topics": len(catalogue),
            "selected": len(chosen),
            "mined": len(mined),
            "waiting_for_an_archetype": dg.MetadataValue.json(
                {t.topic_id: t.archetype for t in waiting}
            ),
            "preview": md_table(
                [t.model_dump() for t in chosen + mined],
                ["topic_id", "archetype", "source", "title"],
            ),
        }
    )
    return [t.model_dump(mode="json") for t in chosen + mined]
