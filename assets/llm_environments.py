"""Environments written by a model (when OPENAI_BASE_URL is set): an EnvSpec our compiler
turns into a class (`llm_env_specs`), or a class written outright (`llm_env_code`).

Each takes the profile's share of the build's first generated topics. Offline both are
empty and touch nothing. What they make joins the build in `env_sources` as extra
environments (their own partitions): an authored spec compiles like a generated one, a
written class is judged like any foreign one (sandboxed loading, probing, audit). A topic
the model could not serve is a quarantine row with the reason.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import dagster as dg

from assets._llm import llm_run
from assets._resources import BuildSettings
from assets._util import build_wide, md_table, quarantine_row, stage_asset, top_reasons
from synthesis.llm.client import LLMClient
from synthesis.llm.env_code import write_env
from synthesis.llm.env_spec import author_spec, program_shapes
from synthesis.models import EnvSpec, Topic

T = TypeVar("T")
# A workspace or project spec is a file tree, not records and tools: the stages' prompts teach the
# latter only.
SKIPPED_ARCHETYPES = frozenset({"workspace", "project"})


def generated_topics(topics: list[dict], count: int) -> list[Topic]:
    """The first `count` topics with a generated archetype (not an existing class)."""
    chosen = [Topic.model_validate(t) for t in topics]
    return [t for t in chosen if t.archetype and t.archetype not in SKIPPED_ARCHETYPES][:count]


def _each(client: LLMClient, topics: list[Topic], ask: Callable[[Topic], T]) -> list[T]:
    """`ask` per topic, as many at once as the client allows (they wait on the network)."""
    with ThreadPoolExecutor(max_workers=client.settings.concurrency) as threads:
        return list(threads.map(ask, topics))


def _metadata(made: list[dict], quarantine: list[dict], client: LLMClient | None) -> dict:
    return {
        "made": len(made),
        "quarantined": len(quarantine),
        "quarantine_reasons": top_reasons(q["reason"] for q in quarantine),
        "llm_calls": len(client.calls) if client is not None else 0,
        "preview": md_table(
            [{"env_id": m["env_id"], "class": m["class_name"]} for m in made],
            ["env_id", "class"],
        ),
    }


def _authored_specs(
    client: LLMClient, topics: list[Topic], seed: int, generated: list[dict]
) -> tuple[list, list]:
    """Each chosen topic's authored spec, or its quarantine row. None may copy a generated
    spec's program, nor (the later by topic order) another authored one's."""
    taken = program_shapes(EnvSpec.model_validate(s) for s in generated)
    specs, quarantine = [], []
    asked = _each(client, topics, lambda t: author_spec(client, t, seed=seed, taken=taken))
    for authored in asked:
        if authored.spec is not None:
            shape = next(iter(program_shapes([authored.spec])), None)
            twin = taken.get(shape) if shape else None
            if twin is None:
                if shape:
                    taken[shape] = authored.env_id
                specs.append(authored.spec.model_dump(mode="json"))
                continue
            authored.reason = f"env_spec: duplicate: the same program as environment {twin}"
        reason = authored.reason or ""
        quarantine.append(quarantine_row("env_spec", authored.env_id, "llm_env_specs", reason))
    return specs, quarantine


def _written_sources(
    client: LLMClient, topics: list[Topic], home: Path, seed: int
) -> tuple[list, list]:
    sources, quarantine = [], []
    for written in _each(client, topics, lambda t: write_env(client, t, home, seed=seed)):
        if written.source is not None:
            sources.append(written.source.to_json())
        else:
            reason = written.reason or ""
            quarantine.append(quarantine_row("environment", written.env_id, "llm_env_code", reason))
    return sources, quarantine


@stage_asset(
    group_name="catalogue",
    description="With OPENAI_BASE_URL set: a model authors an EnvSpec for each of the "
    "profile's first `llm_authored_specs` generated topics (env id `<topic>-llm-spec`), kept "
    "when it validates and compiles, quarantined with the problems otherwise. Offline: empty.",
)
def llm_env_specs(
    context: dg.AssetExecutionContext, settings: BuildSettings, topics: list[dict], env_specs: dict
) -> dg.Output[dict]:
    specs, quarantine = [], []
    with llm_run(context, settings) as client:
        if client is not None:
            chosen = generated_topics(topics, settings.profile_obj.llm_authored_specs)
            specs, quarantine = _authored_specs(client, chosen, settings.seed, env_specs["specs"])
        context.add_output_metadata(_metadata(specs, quarantine, client))
    return build_wide({"specs": specs, "quarantine": quarantine}, settings.run_fingerprint)


@stage_asset(
    group_name="catalogue",
    description="With OPENAI_BASE_URL set: a model writes an environment class for each of "
    "the profile's first `llm_written_envs` generated topics (env id `<topic>-llm-code`), "
    "checked statically, written to `<home>/llm_envs/` and built as a foreign source (run "
    "only in the sandbox). Offline: empty, and no file is written.",
)
def llm_env_code(
    context: dg.AssetExecutionContext, settings: BuildSettings, topics: list[dict]
) -> dict:
    sources, quarantine = [], []
    with llm_run(context, settings) as client:
        if client is not None:
            chosen = generated_topics(topics, settings.profile_obj.llm_written_envs)
            sources, quarantine = _written_sources(
                client, chosen, settings.home_path, settings.seed
            )
        context.add_output_metadata(_metadata(sources, quarantine, client))
    return {"sources": sources, "quarantine": quarantine}
