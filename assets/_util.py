"""Small pieces every asset module uses: code versions, quarantine rows, markdown previews."""

import functools
import inspect
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import dagster as dg

from assets._staleness import latest_partition_versions, staleness
from synthesis import code_versions
from synthesis.export.warehouse import reason_kind
from synthesis.hashing import content_hash

# Data versions and observable source assets (incremental builds) are beta in Dagster 1.13;
# the pinned version is the one tests/test_build_incremental.py holds to its behaviour.
warnings.filterwarnings(
    "ignore", message=".*(data_version|observable_source_asset)", category=dg.BetaWarning
)


def artifact_sources(
    context: dg.AssetExecutionContext, stage: str, code: str, env_ids: Iterable[str]
) -> dict[str, str]:
    """env id → what a publish makes of its `stage` artifact is made from: the artifact's data
    version (its content and settings) and `code`, the code that reads it. What a publish
    keeps per environment (warehouse rows, screening's features and attempts) is taken back
    only for the same source. An environment without a recorded version gets a source no
    later publish matches: it is always read."""
    versions = latest_partition_versions(context.instance, dg.AssetKey(stage))
    return {
        env_id: f"{code}:{versions[env_id]}"
        if env_id in versions
        else f"unversioned:{context.run_id}"
        for env_id in env_ids
    }


def code_version(*modules: str) -> str:
    """The code version of engine `modules` and everything they can run: their import
    closure and the files it runs in the sandbox or ships (synthesis/code_versions.py). For
    what a stage keeps between publishes; a stage's own version comes from `stage_asset`."""
    return code_versions.code_version(*modules)


def stage_code_version(stage: Callable[..., Any]) -> str:
    """The code version of what asset function `stage` runs: the engine modules its body (and
    the helpers of `assets/` it calls) uses, with their import closures. Nothing is listed by
    hand, so a module added to a stage's code cannot be left out of its version."""
    function = inspect.unwrap(stage)
    entries = code_versions.function_entries(
        function.__module__, function.__name__, follow=("assets",)
    )
    return code_versions.code_version(*entries)


def stage_asset(**asset_args: Any) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """`dg.asset` whose code version is `stage_code_version` of the decorated function."""

    def decorate(stage: Callable[..., Any]) -> dg.AssetsDefinition:
        return dg.asset(code_version=stage_code_version(stage), **asset_args)(stage)

    return decorate


def stage_multi_asset(**asset_args: Any) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """`dg.multi_asset` whose outputs share `stage_code_version` of the decorated function."""

    def decorate(stage: Callable[..., Any]) -> dg.AssetsDefinition:
        version = stage_code_version(stage)
        specs = [spec.replace_attributes(code_version=version) for spec in asset_args.pop("specs")]
        return dg.multi_asset(specs=specs, **asset_args)(stage)

    return decorate


def versioned(value: Any, fingerprint: str, tags: dict[str, str] | None = None) -> dg.Output:
    """`value` with a data version from its content and the settings fingerprint it was made
    under (`BuildSettings.run_fingerprint`): a stage whose output did not change leaves the
    stages after it fresh, and changed settings reach every stage (assets/_staleness.py
    compares these versions to decide what a build redoes)."""
    version = dg.DataVersion(content_hash([fingerprint, value])[:32])
    return dg.Output(value, data_version=version, tags=tags)


def per_environment(stage: Callable[..., Any]) -> Callable[..., dg.Output]:
    """A per-environment asset's body, its output data-versioned (see `versioned`)."""

    @functools.wraps(stage)
    def versioned_stage(*args: Any, **kwargs: Any) -> dg.Output:
        return versioned(stage(*args, **kwargs), kwargs["settings"].run_fingerprint)

    # Dagster takes an Output only from a function annotated to return one.
    returns = stage.__annotations__.get("return", Any)
    versioned_stage.__annotations__ = {**stage.__annotations__, "return": dg.Output[returns]}
    return versioned_stage


def build_wide(value: Any, fingerprint: str) -> dg.Output:
    """A catalogue artifact every environment's run reads whole (all specs, all sources): its
    data version is the settings fingerprint alone. What one environment takes from it is
    versioned per partition by the `topic_catalogue` source, so editing one topic leaves
    every other environment fresh instead of making all of them stale."""
    return dg.Output(value, data_version=dg.DataVersion(fingerprint))


def quarantine_row(artifact_type: str, artifact_id: str, stage: str, reason: str) -> dict:
    return {
        "artifact_type": artifact_type,
        "artifact_id": artifact_id,
        "stage": stage,
        "reason": reason,
    }


def top_reasons(reasons: Iterable[str], n: int = 5) -> dg.MetadataValue:
    # Grouped exactly as the warehouse groups them (quarantine.reason_kind).
    counts = Counter(reason_kind(r) for r in reasons)
    if not counts:
        return dg.MetadataValue.md("_none_")
    rows = "\n".join(f"| {count} | {reason} |" for reason, count in counts.most_common(n))
    return dg.MetadataValue.md(f"| count | reason |\n|---:|---|\n{rows}")


def md_table(rows: list[dict], columns: list[str], limit: int = 20) -> dg.MetadataValue:
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "\n".join(
        "| " + " | ".join(str(r.get(c, "")).replace("|", "/")[:80] for c in columns) + " |"
        for r in rows[:limit]
    )
    more = f"\n\n_{len(rows) - limit} more_" if len(rows) > limit else ""
    return dg.MetadataValue.md(head + body + more)


# Every per-environment asset: an environment is this build's only when all of them are.
PER_ENVIRONMENT_ASSETS = (
    "environments",
    "initial_states",
    "env_models",
    "env_audit",
    "env_judgement",
    "scenarios",
    "checks",
    "trajectories",
)


def made_by_this_build(
    context: dg.AssetExecutionContext, env_ids: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(kept, excluded): environments whose every per-environment stage is what this build
    would make: made by it, or reused because nothing it is made from changed (its
    definition, the settings, the stages' code; assets/_staleness.py).

    An environment whose run failed in this build still has files from an older build (of
    another seed, maybe); publishing those would mix two datasets. Runs launched from the UI
    carry no build id: they publish what the artifacts hold, as the user asked.
    """
    env_ids = sorted(env_ids)
    if not context.run.tags.get(BUILD_TAG, ""):
        return env_ids, []
    # Asked by several publish steps (~0.15 s each): answered once per run, so that they
    # all publish the same environments even if a run from the UI remakes one meanwhile.
    key = (context.run_id, tuple(env_ids))
    if key not in _MADE_BY_THIS_BUILD:
        found = staleness(
            context.instance, context.repository_def.asset_graph, PER_ENVIRONMENT_ASSETS, env_ids
        )
        stale = set(found.stale_partitions())
        _MADE_BY_THIS_BUILD[key] = (
            [e for e in env_ids if e not in stale],
            [e for e in env_ids if e in stale],
        )
    kept, excluded = _MADE_BY_THIS_BUILD[key]
    return list(kept), list(excluded)


_MADE_BY_THIS_BUILD: dict[tuple[str, tuple[str, ...]], tuple[list[str], list[str]]] = {}


BUILD_TAG = "envfoundry/build"
# On a build's publish run: what it publishes from (orchestration/reuse.py).
PUBLISH_INPUTS_TAG = "envfoundry/publish_inputs"


def provenance_of(settings: Any) -> Any:
    """How this build was made (profile, seed, inputs, catalogue, sources), as the report's
    header and the dataset card both say it."""
    from quality.report import build_provenance

    return build_provenance(
        profile=settings.profile,
        seed=settings.seed,
        inputs_sha256=settings.inputs_sha256,
        catalogue=settings.catalogue_path,
        envs=settings.envs,
    )
