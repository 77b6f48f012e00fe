"""`envfoundry eval`: evaluate a model behind an OpenAI-compatible endpoint on a built dataset.

    envfoundry eval --home H --model NAME [--split test|train|all] [--attempts K]
                    [--limit N] [--tasks FILE] [--sandbox auto|bwrap|process|docker]

The endpoint is the one every LLM stage uses (OPENAI_BASE_URL, OPENAI_API_KEY; budgets,
deadline, concurrency, retries from the ENVFOUNDRY_* variables, synthesis.config.LLMSettings);
--model names the model to ask for. The budget caps and the deadline
(ENVFOUNDRY_BUDGET_USD, ENVFOUNDRY_BUDGET_TOKENS, ENVFOUNDRY_LLM_DEADLINE_S, default 1800 s)
bound one invocation. Results go to H/evals/evals.duckdb (synthesis/evaluation/store.py);
run the same command again to go on after a stop: what is recorded is not played again.
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
        "eval goes on where it was when run again.",
    )
    p.add_argument(
        "--home",
        type=Path,
        default=None,
        help="the built home (default: $ENVFOUNDRY_HOME or ./var)",
    )
    p.add_argument("--model", required=True, help="the model to evaluate, as the endpoint names it")
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
    return p


def eval_main(argv: list[str], *, out: Callable[[str], None] = print) -> int:
    """Exit status: 0 when every episode asked for is recorded, 1 when the eval stopped
    (budget, deadline, breaker) or cannot run, 130 when interrupted."""
    args = parser().parse_args(argv)
    home = (args.home or envfoundry_home()).resolve()
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
    return 0 if outcome.status == "finished" else 1


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
