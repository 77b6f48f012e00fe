"""`envfoundry eval`: evaluate a model behind an OpenAI-compatible endpoint on a built dataset.

    envfoundry eval --home H --model NAME [--split test|train|all] [--attempts K]
                    [--limit N] [--tasks FILE] [--sandbox auto|bwrap|process|docker]
                    [--no-marts]
    envfoundry eval --home H --leaderboard
    envfoundry eval --home H --compare A B

The endpoint is the one every LLM stage uses (OPENAI_BASE_URL, OPENAI_API_KEY; budgets,
deadline, concurrency, retries from the ENVFOUNDRY_* variables, synthesis.config.LLMSettings);
--model names the model to ask for. The budget caps and the deadline
(ENVFOUNDRY_BUDGET_USD, ENVFOUNDRY_BUDGET_TOKENS, ENVFOUNDRY_LLM_DEADLINE_S, default 1800 s)
bound one invocation. Results go to H/evals/evals.duckdb (synthesis/evaluation/store.py);
run the same command again to go on after a stop: what is recorded is not played again.

After the episodes, the command builds the benchmark marts (dbt, marts.py) into the same file
and writes the leaderboard, H/evals/leaderboard.html, printing it as a table (leaderboard.py);
`--no-marts` skips both, `--leaderboard` builds them alone from what is recorded. `--compare A
B` plays nothing: it prints the two models' success rates per archetype and overall, B − A and
its 95% interval (compare.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from synthesis.config import LLMSettings, envfoundry_home
from synthesis.evaluation.dataset import SPLITS, EvalError, read_task_ids
from synthesis.evaluation.runner import EvalOptions, EvalOutcome, run_eval
from synthesis.evaluation.summary import format_summary


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="envfoundry eval",
        description="Play a model (OPENAI_BASE_URL, OPENAI_API_KEY) on the published tasks of "
        "a home's current dataset, with the dataset's sandbox, tools, simulated user and "
        "proven checks; every episode is recorded in HOME/evals/evals.duckdb, and a stopped "
        "eval goes on where it was when run again. Then the benchmark marts (dbt) are built "
        "into the same file and the leaderboard is written, HOME/evals/leaderboard.html "
        "(docs/evaluation.md).",
    )
    p.add_argument(
        "--home",
        type=Path,
        default=None,
        help="the built home (default: $ENVFOUNDRY_HOME or ./var)",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--model", help="the model to evaluate, as the endpoint names it")
    mode.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="play nothing: compare two models recorded on the home's current dataset "
        "(success rate per archetype and overall, B - A and its 95%% interval)",
    )
    mode.add_argument(
        "--leaderboard",
        action="store_true",
        help="play nothing: build the eval marts (dbt) from what is recorded and write the "
        "leaderboard, HOME/evals/leaderboard.html",
    )
    p.add_argument("--split", choices=SPLITS, default="test", help="which tasks (default: test)")
    p.add_argument(
        "--attempts",
        type=int,
        default=1,
        metavar="K",
        help="attempts per task (default 1): attempt 0 greedy, the others sampled; with K > 1 "
        "the summary gives pass^k and pass@k",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="only N tasks: the same sample every time, spread over the environments",
    )
    p.add_argument(
        "--tasks",
        type=Path,
        default=None,
        metavar="FILE",
        help="only these tasks: a file of scenario ids, one a line",
    )
    p.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "process", "docker"],
        default=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
        help="where environment code runs (default auto: bwrap when usable). Code we did not "
        "compile never runs on 'process' unless you pass it explicitly",
    )
    p.add_argument(
        "--no-marts",
        action="store_true",
        help="after the episodes, build neither the eval marts nor the leaderboard",
    )
    return p


def eval_main(argv: list[str], *, out: Callable[[str], None] = print) -> int:
    """Exit status: 0 when every episode asked for is recorded and the marts and the
    leaderboard are written, 1 when the eval stopped (budget, deadline, breaker), cannot run
    or its marts failed (its episodes recorded all the same), 130 when interrupted.
    `--compare` and `--leaderboard`: 0 when done, 1 when they cannot be."""
    args = parser().parse_args(argv)
    home = (args.home or envfoundry_home()).resolve()
    if args.compare:
        return compare_main(home, *args.compare, out=out)
    if args.leaderboard:
        return _published(home, out)
    try:
        task_ids = tuple(read_task_ids(args.tasks)) if args.tasks is not None else None
        options = EvalOptions(
            model=args.model,
            split=args.split,
            attempts=args.attempts,
            limit=args.limit,
            task_ids=task_ids,
            backend=args.sandbox,
        )
        outcome = run_eval(home, LLMSettings.from_env(), options, out=out)
    except EvalError as exc:
        sys.stderr.write(f"envfoundry eval: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(
            "envfoundry eval: interrupted; the finished episodes are recorded: run the same "
            "command again to go on\n"
        )
        return 130
    for line in report(outcome):
        out(line)
    code = 0 if outcome.status == "finished" else 1
    if not args.no_marts:
        code = max(code, _published(home, out))
    return code


def _published(home: Path, out: Callable[[str], None]) -> int:
    """`publish_results` as an exit status (130 when interrupted)."""
    try:
        return 0 if publish_results(home, out=out) else 1
    except KeyboardInterrupt:
        sys.stderr.write(
            "envfoundry eval: interrupted while building the eval marts; the episodes are "
            f"recorded: `envfoundry eval --leaderboard --home {home}` builds them\n"
        )
        return 130


def publish_results(home: Path, *, out: Callable[[str], None] = print) -> bool:
    """Build the eval marts, then write and print the leaderboard; False (said) when either
    cannot be done. The recorded episodes are never touched."""
    from synthesis.evaluation.leaderboard import format_leaderboard, write_leaderboard
    from synthesis.evaluation.marts import build_eval_marts, format_marts

    marts = build_eval_marts(home)
    for line in format_marts(marts, home):
        out(line)
    if not marts.ok:
        sys.stderr.write(
            "envfoundry eval: the eval marts were not built (see above); the episodes are "
            "recorded\n"
        )
        return False
    try:
        board, path = write_leaderboard(home)
    except EvalError as exc:
        sys.stderr.write(f"envfoundry eval: no leaderboard: {exc}\n")
        return False
    for line in format_leaderboard(board, path):
        out(line)
    return True


def compare_main(home: Path, model_a: str, model_b: str, *, out: Callable[[str], None]) -> int:
    """`--compare A B`: print the comparison of two recorded models; nothing is played."""
    from synthesis.evaluation.compare import compare_models, format_comparison

    try:
        records, rows = compare_models(home, model_a, model_b)
    except EvalError as exc:
        sys.stderr.write(f"envfoundry eval: {exc}\n")
        return 1
    for line in format_comparison(records, model_a, model_b, rows):
        out(line)
    return 0


def report(outcome: EvalOutcome) -> list[str]:
    """The lines printed at the end of an eval."""
    if outcome.status == "stopped":
        head = (
            f"Stopped: {outcome.stop_reason}. Recorded what finished; run the same command "
            "again to go on."
        )
    else:
        head = f"Eval {outcome.status}."
    lines = [
        head,
        f"Episodes: {outcome.selected} asked for, {outcome.played} played now, "
        f"{outcome.skipped} already recorded (skipped), {outcome.errors} ended in an LLM error",
        f"Results for model {outcome.model} on dataset {outcome.dataset.dataset_id} "
        f"({outcome.summary.tasks} task(s) recorded):",
        *format_summary(outcome.summary),
        f"Results: {outcome.db_path} (tables eval_runs, eval_episodes, eval_llm_calls), "
        f"run {outcome.run_id}",
        f"  e.g. SELECT archetype, avg(success::int) FROM eval_episodes WHERE model = "
        f"'{outcome.model}' GROUP BY 1",
    ]
    return lines
