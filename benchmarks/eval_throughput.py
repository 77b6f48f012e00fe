"""`envfoundry eval` throughput against a 200 ms endpoint, healthy and flaky, side by side in
one run.

    python benchmarks/eval_throughput.py --home H [--limit 40] [--split all] [--attempts 1]
                                         [--latency-ms 200] [--hang-every 15]
                                         [--sandbox auto] [--keep DIR]

Each measurement is `synthesis.evaluation.runner.run_eval` (what `envfoundry eval --no-marts`
runs: no dbt, no page) on its own copy of the built home H (its `evals/` left out, so nothing
is skipped as already recorded; H itself is only read), with the client's defaults
(LLMSettings: concurrency, timeout, retries) and the eval's own sandboxes. The endpoint is
benchmarks/loopback_endpoint.py (its own process, HTTP/1.1 keep-alive), holding every request
`--latency-ms`; the flaky one never answers one request of every `--hang-every` it receives
(a seeded place in each block of them), so a hung request costs its adaptive timeout
(synthesis/llm/timeouts.py) and is retried.

The model is a capable scripted agent, `CapableAgent`: it plays the dataset's own oracle
episode of each task, each turn the one the oracle's transcript holds at the same place (the
gold chain's next call, the oracle's questions to a multi-turn task's user, then its grounded
reply), found by the task's system prompt and opening message in a table it loads once from
H's warehouse (as tests/fakes/eval_agents.py's capable agent does); a model-worded user
(sampled attempts) says the offline answer. So nearly every episode should succeed, and the
time is the endpoint's, the sandboxes' and the eval's own.

Printed per endpoint: episodes, successes, LLM errors, seconds, episodes/s, requests/s, the
endpoint's most requests held at once (what the eval really had in flight; a hung request is
not counted), and from the eval's ledger (H/evals/evals.duckdb, eval_llm_calls) the attempts
that timed out, the timeouts they were given and the seconds they cost; then where the wall
time went (the longest episode, which the eval waits for, and the rest).
Goal (issue "Flaky endpoints cost little"): the flaky eval takes at most 2x the healthy one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402

from benchmarks.loopback_endpoint import Endpoint  # noqa: E402
from synthesis.config import LLMSettings  # noqa: E402
from synthesis.evaluation.dataset import current_dataset  # noqa: E402
from synthesis.evaluation.runner import EvalOptions, EvalOutcome, run_eval  # noqa: E402
from synthesis.evaluation.store import EVALS_DIR, evals_path  # noqa: E402

GOAL_RATIO = 2.0  # the flaky eval's wall time over the healthy one's, at most
MODEL = "capable-agent"

# --- the endpoint's answers (run in the endpoint's process) ---------------------------------

_ANSWER = "What you answer: "


class CapableAgent:
    """The endpoint's answer: the oracle's turn at the request's place in its episode.

    Picklable by the warehouse's path alone (the endpoint's process is spawned, its answer
    sent by reference to this module-level class): the process loads the oracle's
    transcripts when it unpickles it, before it serves its first request, so no measured
    request waits for the table."""

    def __init__(self, warehouse: Path | str) -> None:
        self.warehouse = str(warehouse)
        self._by_key: dict[tuple[str, str], list[dict[str, Any]]] | None = None
        self._by_opening: dict[str, list[dict[str, Any]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"warehouse": self.warehouse}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["warehouse"])
        self._load()

    def _load(self) -> None:
        """(system prompt, opening message) → the oracle's messages, every published task."""
        con = duckdb.connect(self.warehouse, read_only=True)
        try:
            rows = con.execute(
                "SELECT t.messages_json FROM trajectories t JOIN scenarios s USING (scenario_id) "
                "WHERE t.policy = 'oracle' AND s.status = 'published'"
            ).fetchall()
        finally:
            con.close()
        by_key = {}
        for (text,) in rows:
            messages = json.loads(text)
            by_key[(messages[0]["content"], messages[1]["content"])] = messages
            self._by_opening[messages[1]["content"]] = messages
        self._by_key = by_key

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        fmt = (request.get("response_format") or {}).get("json_schema") or {}
        if fmt.get("name") == "user_sim":
            return _user_answer(request)
        if self._by_key is None:
            self._load()
        assert self._by_key is not None
        messages = request["messages"]
        if len(messages) < 2:
            return {"role": "assistant", "content": "Hello."}
        oracle = self._by_key.get((messages[0]["content"], messages[1]["content"]))
        if oracle is None:  # a system prompt worded otherwise: the opening alone
            oracle = self._by_opening.get(messages[1]["content"])
        if oracle is None or len(oracle) <= len(messages):
            return {"role": "assistant", "content": "I could not find this task."}
        turn = oracle[len(messages)]
        if turn.get("role") != "assistant":
            return {"role": "assistant", "content": "I lost my place in this task."}
        message = {"role": "assistant", "content": turn.get("content")}
        if turn.get("tool_calls"):
            message["tool_calls"] = turn["tool_calls"]
        return message


def _user_answer(request: dict[str, Any]) -> dict[str, Any]:
    """A model-worded user's turn: the offline answer its prompt gives, in a few words of its
    own (what synthesis.llm.user_sim accepts)."""
    prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
    offline = next(
        (line.removeprefix(_ANSWER) for line in prompt.splitlines() if line.startswith(_ANSWER)),
        "",
    )
    return {"role": "assistant", "content": json.dumps({"text": f"Of course. {offline}"})}


# --- the measurements -------------------------------------------------------------------------


def copy_home(home: Path, copy: Path) -> Path:
    """A copy of the home as a user makes one (its links kept as links), without its
    evaluations: every episode is played."""

    def skipped(folder: str, names: list[str]) -> list[str]:
        return [EVALS_DIR] if Path(folder) == home and EVALS_DIR in names else []

    shutil.copytree(home, copy, symlinks=True, ignore=skipped)
    return copy


def query(home: Path, sql: str, params: list[Any]) -> list[tuple]:
    con = duckdb.connect(str(evals_path(home)), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def warm_up(endpoint: Endpoint, home: Path, args: argparse.Namespace) -> None:
    """One task played and thrown away (its evals/ deleted): the imports, the sandboxes'
    first start and the files they read are not the first measured run's to pay."""
    settings = LLMSettings(base_url=endpoint.base_url, api_key="sk-bench")
    options = EvalOptions(model=MODEL, split=args.split, limit=1, backend=args.sandbox)
    run_eval(home, settings, options, out=lambda line: None)
    shutil.rmtree(home / EVALS_DIR)


def measure(kind: str, endpoint: Endpoint, home: Path, args: argparse.Namespace) -> dict:
    """One eval from a fresh copy of the home against `endpoint`, and what its ledger says."""
    settings = LLMSettings(base_url=endpoint.base_url, api_key="sk-bench")  # the defaults
    options = EvalOptions(
        model=MODEL,
        split=args.split,
        attempts=args.attempts,
        limit=args.limit,
        backend=args.sandbox,
    )
    endpoint.take_counts()  # counting from here
    started = time.perf_counter()
    outcome = run_eval(home, settings, options, out=lambda line: None)
    elapsed = time.perf_counter() - started
    served, most, _ = endpoint.take_counts()
    return {
        "kind": kind,
        "home": home,
        "outcome": outcome,
        "elapsed_s": elapsed,
        "served": served,
        "max_in_flight": most,
        "concurrency": settings.concurrency,
        "ceiling_s": settings.timeout_s,
        **episode_times(home, outcome),
        **ledger(home, outcome),
    }


def ledger(home: Path, outcome: EvalOutcome) -> dict:
    """The run's attempts at requests (eval_llm_calls): how they ended, the hung ones."""
    rows = query(
        home,
        "SELECT status, coalesce(reason, ''), latency_ms FROM eval_llm_calls WHERE run_id = ?",
        [outcome.run_id],
    )
    accepted = sorted(lat for status, _, lat in rows if status == "accepted")
    timeouts = [(reason, lat) for status, reason, lat in rows if reason.startswith("timeout:")]
    given = Counter()
    for reason, _ in timeouts:
        found = re.search(r"within ([\d.]+)s", reason)
        given[float(found.group(1)) if found else None] += 1
    other = Counter(
        re.sub(r"\d+(\.\d+)?", "N", reason.split(" (")[0])
        for status, reason, _ in rows
        if status != "accepted" and not reason.startswith("timeout:")
    )
    return {
        "attempts": len(rows),
        "accepted": len(accepted),
        "p50_ms": statistics.median(accepted) if accepted else 0.0,
        "p95_ms": accepted[int(len(accepted) * 0.95)] if accepted else 0.0,
        "timeouts": len(timeouts),
        "timeout_given": given,
        "lost_s": sum(lat for _, lat in timeouts) / 1000,
        "other_failures": other,
    }


def episode_times(home: Path, outcome: EvalOutcome) -> dict:
    """The run's episodes' own durations: the longest (every episode runs at once, up to the
    client's concurrency, so the eval waits for it) and the mean."""
    ((longest, mean),) = query(
        home,
        "SELECT max(seconds), avg(seconds) FROM eval_episodes WHERE run_id = ?",
        [outcome.run_id],
    )
    return {"longest_s": float(longest or 0.0), "mean_s": float(mean or 0.0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a built home (only read)")
    parser.add_argument("--limit", type=int, default=40, help="tasks (the eval's --limit)")
    parser.add_argument("--split", choices=["test", "train", "all"], default="all")
    parser.add_argument("--attempts", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--hang-every", type=int, default=15)
    parser.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "process", "docker"],
        default=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        metavar="DIR",
        help="make the home copies (with their evals/evals.duckdb) here and keep them",
    )
    args = parser.parse_args()
    home = args.home.resolve()
    dataset = current_dataset(home)
    latency_s = args.latency_ms / 1000
    defaults = LLMSettings()
    print(
        f"envfoundry eval (run_eval, no marts) of {MODEL} on dataset {dataset.dataset_id}, "
        f"split {args.split}, --limit {args.limit}, {args.attempts} attempt(s); endpoint "
        f"latency {args.latency_ms:g} ms; the flaky one never answers 1 request in "
        f"{args.hang_every}; client defaults: concurrency {defaults.concurrency}, timeout "
        f"{defaults.timeout_s:g} s (the adaptive timeout's ceiling), {defaults.retries} retries"
    )
    load_before = os.getloadavg()[0]
    agent = CapableAgent(dataset.warehouse)
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="eval-throughput-"))
    scratch.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        with (
            Endpoint(latency_s, agent) as healthy,
            Endpoint(latency_s, agent, hang_every=args.hang_every) as flaky,
        ):
            homes = {kind: copy_home(home, scratch / kind) for kind in ("healthy", "flaky")}
            warm_up(healthy, homes["healthy"], args)
            results.append(measure("healthy", healthy, homes["healthy"], args))
            results.append(measure("flaky", flaky, homes["flaky"], args))
        report(results)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"the homes and their evals/evals.duckdb are kept in {scratch}")
    # The figures depend on what else runs: sandboxes and the client starved of CPU are slower.
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


def report(results: list[dict]) -> None:
    print(
        f"{'endpoint':8} {'episodes':>8} {'success':>7} {'errors':>6} {'seconds':>7} "
        f"{'episodes/s':>10} {'req/s':>6} {'in flight':>9} {'attempts':>8} {'timeouts':>8} "
        f"{'lost s':>6} {'p50 ms':>6} {'p95 ms':>6}"
    )
    for r in results:
        o: EvalOutcome = r["outcome"]
        print(
            f"{r['kind']:8} {o.played:8d} {o.summary.overall.successes:7d} {o.errors:6d} "
            f"{r['elapsed_s']:7.1f} {o.played / r['elapsed_s']:10.2f} "
            f"{r['accepted'] / r['elapsed_s']:6.1f} {r['max_in_flight']:9d} {r['attempts']:8d} "
            f"{r['timeouts']:8d} {r['lost_s']:6.1f} {r['p50_ms']:6.0f} {r['p95_ms']:6.0f}"
        )
    for r in results:
        o = r["outcome"]
        if o.status != "finished":
            print(f"{r['kind']}: eval {o.status}: {o.stop_reason}")
        for note in o.notes:
            print(f"{r['kind']}: note: {note}")
        if r["timeouts"]:
            given = ", ".join(
                f"{n} x {'?' if t is None else f'{t:g} s'}"
                for t, n in sorted(r["timeout_given"].items(), key=lambda kv: kv[0] or 0.0)
            )
            print(
                f"{r['kind']}: {r['timeouts']} hung attempt(s) were given {given} "
                f"(ceiling {r['ceiling_s']:g} s) and cost {r['lost_s']:.1f} s of request slots"
            )
        for reason, n in r["other_failures"].most_common():
            print(f"{r['kind']}: {n} other attempt(s) not accepted: {reason}")
    print(
        "where the time went (every episode at once, up to the client's concurrency "
        f"{results[0]['concurrency']}; an episode's requests one after another): "
        + "; ".join(
            f"{r['kind']} longest episode {r['longest_s']:.1f} s, mean {r['mean_s']:.1f} s, "
            f"the rest (loading the environments, their sandboxes) "
            f"{r['elapsed_s'] - r['longest_s']:.1f} s"
            for r in results
        )
    )
    print(
        "most requests the endpoint held at once: "
        + ", ".join(f"{r['kind']} {r['max_in_flight']}" for r in results)
    )
    print(
        "requests the endpoints served (the flaky one's hung ones not counted): "
        + ", ".join(f"{r['kind']} {r['served']}" for r in results)
    )
    healthy, flaky = results[0], results[1]
    ratio = flaky["elapsed_s"] / healthy["elapsed_s"]
    print(
        f"flaky / healthy: {flaky['elapsed_s']:.1f} s / {healthy['elapsed_s']:.1f} s = "
        f"{ratio:.2f}x; goal <= {GOAL_RATIO:g}x: {'met' if ratio <= GOAL_RATIO else 'NOT MET'}"
    )


if __name__ == "__main__":
    sys.exit(main())
