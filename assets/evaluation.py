"""Evaluations: a model played on the home's published dataset, one partition per model.

Not a stage of a build (no build job selects it, and it makes nothing the dataset is made
of): materializing partition MODEL of `evaluation` (the `eval_job`) does what `envfoundry eval
--model MODEL` does (synthesis.evaluation.runner.run_eval) on the home's current dataset,
with the endpoint of every LLM stage (OPENAI_BASE_URL, OPENAI_API_KEY) and the split, attempts
and limit of the run's config, then builds the eval marts and the leaderboard again (shown
in the UI). Every episode goes to `HOME/evals/evals.duckdb`; the dataset is only read. Its
edge from `published_dataset` is lineage: which dataset a model was scored on, and (once
another is published) that its score is of an older one.
"""

from pathlib import Path

import dagster as dg
from pydantic import Field

from assets._resources import BuildSettings
from assets._util import stage_asset
from synthesis.config import LLMSettings
from synthesis.evaluation.dataset import EvalError
from synthesis.evaluation.leaderboard import format_leaderboard, write_leaderboard
from synthesis.evaluation.marts import build_eval_marts, format_marts
from synthesis.evaluation.runner import EvalOptions, EvalOutcome, public_url, run_eval
from synthesis.evaluation.summary import Group

# One partition per evaluated model, named as the endpoint names it; `envfoundry eval` adds
# the model it evaluated (orchestration/evaluation.py), the UI's "add partition" adds others.
eval_model_partitions = dg.DynamicPartitionsDefinition(name="eval_models")


class EvalConfig(dg.Config):
    """Which published tasks, and how many attempts at each (`envfoundry eval`'s options)."""

    split: str = Field(default="test", description="test, train or all")
    attempts: int = Field(
        default=1,
        description="attempts per task: attempt 0 greedy, the others sampled; with more than "
        "one, pass^k and pass@k are recorded",
    )
    limit: int | None = Field(
        default=None,
        description="only this many tasks (the same sample every time, spread over the "
        "environments); none: every task of the split",
    )


@stage_asset(
    group_name="evaluation",
    partitions_def=eval_model_partitions,
    # Lineage only: the dataset this evaluation scored. It is read, never made again here.
    deps=[dg.AssetKey("published_dataset")],
    description="A model (the partition: its name at the endpoint, OPENAI_BASE_URL) played "
    "on the published tasks of the home's current dataset with the dataset's sandbox, tools, "
    "simulated user and proven checks, as `envfoundry eval` plays it. Every episode is "
    "recorded in HOME/evals/evals.duckdb; what is already recorded for the same model, "
    "dataset and settings is not played again. The dataset's files are never written.",
)
def evaluation(
    context: dg.AssetExecutionContext, config: EvalConfig, settings: BuildSettings
) -> dg.MaterializeResult:
    llm = LLMSettings.from_env()
    options = EvalOptions(
        model=context.partition_key,
        split=config.split,
        attempts=config.attempts,
        limit=config.limit,
        backend=settings.sandbox_backend,
    )
    try:
        outcome = run_eval(settings.home_path, llm, options, out=context.log.info)
    except EvalError as exc:
        raise dg.Failure(f"the evaluation of {options.model} cannot run: {exc}") from None
    metadata = eval_metadata(outcome, options, public_url(llm.base_url))
    recorded = outcome.summary.overall.episodes - outcome.summary.errors
    if recorded == 0:
        # Nothing to score: the endpoint failed every episode, or a limit stopped it first.
        why = outcome.stop_reason or "every episode ended in an LLM error"
        raise dg.Failure(
            f"no episode of {options.model} was recorded without an LLM error: {why}",
            metadata=metadata,
        )
    if outcome.status == "stopped":
        context.log.warning(str(metadata["warning"]))
    metadata.update(_leaderboard(settings.home_path, context))
    return dg.MaterializeResult(metadata=metadata)


def _leaderboard(home: Path, context: dg.AssetExecutionContext) -> dict[str, object]:
    """The eval marts built again and the leaderboard of every model scored on the dataset,
    as `envfoundry eval` ends: the table in the UI, the page's path. A failure of either is
    a warning: the episodes are recorded whatever dbt does."""
    marts = build_eval_marts(home)
    for line in format_marts(marts, home):
        context.log.info(line)
    if not marts.ok:
        context.log.warning("the eval marts were not built: " + "; ".join(marts.problems))
        return {"eval_marts": "not built: " + "; ".join(marts.problems)}
    try:
        board, path = write_leaderboard(home)
    except EvalError as exc:
        context.log.warning(f"no leaderboard: {exc}")
        return {"eval_marts": dg.MetadataValue.path(str(marts.db_path))}
    table = "\n".join(format_leaderboard(board))
    return {
        "eval_marts": dg.MetadataValue.path(str(marts.db_path)),
        "leaderboard": dg.MetadataValue.md(f"```text\n{table}\n```"),
        "leaderboard_page": dg.MetadataValue.path(str(path)),
    }


def eval_metadata(
    outcome: EvalOutcome, options: EvalOptions, endpoint: str | None
) -> dict[str, object]:
    """What the UI shows of an evaluation: what was played, what it scored, on which dataset,
    and where the episodes are."""
    summary = outcome.summary
    overall = summary.overall
    metadata: dict[str, object] = {
        "model": options.model,
        "status": outcome.status,
        "dataset_id": outcome.dataset.dataset_id,
        "manifest_sha256": outcome.dataset.manifest_sha256 or "none (a dataset without shards)",
        "split": options.split,
        "attempts": options.attempts,
        "limit": options.limit if options.limit is not None else "none",
        "endpoint": endpoint or "none",
        "episodes_asked": outcome.selected,
        "episodes_played": outcome.played,
        "episodes_skipped": outcome.skipped,
        "episodes_llm_errors": outcome.errors,
        "episodes_recorded": overall.episodes,
        "tasks": summary.tasks,
        "success_rate": dg.MetadataValue.float(round(overall.success_rate, 4)),
        "mean_reward": dg.MetadataValue.float(round(overall.mean_reward, 4)),
        "successes": overall.successes,
        "success_by_archetype": _groups_table("archetype", summary.by_archetype),
        "success_by_kind": _groups_table("kind", summary.by_kind),
        "failures": _counts_table("failure", summary.failures),
        "agent_tokens_in": summary.tokens[0],
        "agent_tokens_out": summary.tokens[1],
        "cost_usd": dg.MetadataValue.float(round(summary.cost_usd, 6)),
        "evals_db": dg.MetadataValue.path(str(outcome.db_path)),
        "eval_run_id": outcome.run_id,
    }
    if summary.pass_hat_k:
        metadata["pass_hat_k"] = dg.MetadataValue.json(
            {str(k): round(v, 4) for k, v in summary.pass_hat_k.items()}
        )
        metadata["pass_at_k"] = dg.MetadataValue.json(
            {str(k): round(v, 4) for k, v in summary.pass_at_k.items()}
        )
    if outcome.stop_reason is not None:
        metadata["stop_reason"] = outcome.stop_reason
    if outcome.status == "stopped":
        metadata["warning"] = (
            f"stopped early ({outcome.stop_reason}): {overall.episodes} of "
            f"{outcome.selected} episodes recorded, the scores are of those; materialize the "
            "partition again to go on (recorded episodes are not played again)"
        )
    if outcome.notes:
        metadata["notes"] = dg.MetadataValue.md("\n".join(f"* {n}" for n in outcome.notes))
    return metadata


def _groups_table(label: str, groups: dict[str, Group]) -> dg.MetadataValue:
    if not groups:
        return dg.MetadataValue.md("_no episode recorded_")
    rows = "\n".join(
        f"| {name} | {g.episodes} | {g.successes} | {100 * g.success_rate:.1f}% | "
        f"{g.mean_reward:.3f} |"
        for name, g in groups.items()
    )
    head = f"| {label} | episodes | successes | success rate | mean reward |\n|---|--:|--:|--:|--:|"
    return dg.MetadataValue.md(f"{head}\n{rows}")


def _counts_table(label: str, counts: dict[str, int]) -> dg.MetadataValue:
    if not counts:
        return dg.MetadataValue.md("_no episode recorded_")
    rows = "\n".join(f"| {name} | {n} |" for name, n in counts.items())
    return dg.MetadataValue.md(f"| {label} | episodes |\n|---|--:|\n{rows}")
