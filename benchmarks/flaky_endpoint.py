"""A flaky endpoint costs little: the same batch of chat calls against a healthy endpoint and
against one that never answers one request in 15, side by side in one run.

    python benchmarks/flaky_endpoint.py [--calls 200] [--concurrency 8] [--latency-ms 200]
                                        [--hang-every 15] [--floor-s S] [--fixed-too]

Both endpoints are benchmarks/loopback_endpoint.py (its own process, HTTP/1.1 keep-alive),
answering every request after `--latency-ms`; the flaky one never answers one request of
every `--hang-every` it receives (a seeded place in each block of them). Each batch is
`--calls` distinct `LLMClient.chat` calls from `--concurrency` threads, through a client
as the assets open one (answer cache and budget file under a throwaway home, the settings'
defaults otherwise: ENVFOUNDRY_LLM_TIMEOUT_S is 60 s). A hung request costs its adaptive
timeout (synthesis/llm/timeouts.py) and is retried at once; `--floor-s` tries another
floor than its FLOOR_S. `--fixed-too` adds a third run against the flaky endpoint with the
timeout held at the configured 60 s (the client before adaptive timeouts; a minute or
more). Goal (issue "Flaky endpoints cost little"): the flaky batch takes at most 2x the
healthy one.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.loopback_endpoint import Endpoint  # noqa: E402
from benchmarks.rollouts import make_client  # noqa: E402 - a client as the build opens one
from synthesis.llm.client import LLMClient  # noqa: E402
from synthesis.llm.timeouts import FLOOR_S, AdaptiveTimeout  # noqa: E402

GOAL_RATIO = 2.0  # the flaky batch's time over the healthy one's, at most
STAGE = "task_text"


def answer(request: dict) -> dict:
    """The endpoint's answer: a short text (module-level: the endpoint's process is spawned)."""
    return {"role": "assistant", "content": "Reworded: " + request["messages"][-1]["content"]}


def batch(client: LLMClient, calls: int, concurrency: int) -> Counter:
    """`calls` distinct chat calls from `concurrency` threads: how many ended how (answered,
    or the failure's reason with its numbers left out)."""

    def one(i: int) -> bool:
        messages = [
            {"role": "system", "content": "Reword the user's request in a customer's voice."},
            {"role": "user", "content": f"Request {i}: cancel order o{i} and refund it."},
        ]
        try:
            client.chat(messages, stage=STAGE, artifact_id=f"t{i}")
        except Exception as exc:  # noqa: BLE001 - a benchmark counts failures, it goes on
            return re.sub(r"\d+(\.\d+)?", "N", str(exc))
        return "answered"

    with ThreadPoolExecutor(max_workers=concurrency) as threads:
        return Counter(threads.map(one, range(calls)))


def measure(kind: str, base_url: str, home: Path, args: argparse.Namespace) -> dict:
    client = make_client(base_url, home / kind, f"bench-{kind}", args.concurrency)
    if kind == "flaky, fixed 60 s":  # never adapts: every request is given the ceiling
        client.timeouts = AdaptiveTimeout(client.settings.timeout_s, min_samples=10**9)
    else:
        client.timeouts = AdaptiveTimeout(client.settings.timeout_s, floor_s=args.floor_s)
    started = time.perf_counter()
    ends = batch(client, args.calls, args.concurrency)
    elapsed = time.perf_counter() - started
    answered = ends.pop("answered", 0)
    calls = client.calls
    timeouts = [c for c in calls if (c.reason or "").startswith("timeout:")]
    latencies = sorted(c.latency_ms for c in calls if c.status == "accepted")
    return {
        "kind": kind,
        "elapsed_s": elapsed,
        "answered": answered,
        "attempts": len(calls),
        "timeouts": len(timeouts),
        "timeout_s": sorted({float(c.reason.split()[4].rstrip("s")) for c in timeouts}),
        "lost_s": sum(c.latency_ms for c in timeouts) / 1000,
        "p50_ms": statistics.median(latencies) if latencies else 0.0,
        "p95_ms": latencies[int(len(latencies) * 0.95)] if latencies else 0.0,
        "adaptive_s": client.timeouts.timeout_s(STAGE),
        "ceiling_s": client.settings.timeout_s,
        "failures": ends,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--hang-every", type=int, default=15)
    parser.add_argument("--floor-s", type=float, default=FLOOR_S, help="the timeout's floor")
    parser.add_argument("--fixed-too", action="store_true", help="also the fixed 60 s timeout")
    args = parser.parse_args()
    print(
        f"{args.calls} chat calls at concurrency {args.concurrency}, endpoint latency "
        f"{args.latency_ms:g} ms; the flaky endpoint never answers 1 request in "
        f"{args.hang_every}; timeout floor {args.floor_s:g} s"
    )
    load_before = os.getloadavg()[0]
    latency_s = args.latency_ms / 1000
    results = []
    with (
        Endpoint(latency_s, answer) as healthy,
        Endpoint(latency_s, answer, hang_every=args.hang_every) as flaky,
        tempfile.TemporaryDirectory(prefix="flaky-endpoint-") as home,
    ):
        results.append(measure("healthy", healthy.base_url, Path(home), args))
        results.append(measure("flaky", flaky.base_url, Path(home), args))
        if args.fixed_too:
            results.append(measure("flaky, fixed 60 s", flaky.base_url, Path(home), args))
    report(results)
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


def report(results: list[dict]) -> None:
    print(
        f"{'endpoint':18} {'seconds':>8} {'answered':>8} {'attempts':>8} {'timeouts':>8} "
        f"{'lost s':>7} {'p50 ms':>7} {'p95 ms':>7} {'timeout now':>11}"
    )
    for r in results:
        print(
            f"{r['kind']:18} {r['elapsed_s']:8.2f} {r['answered']:8d} {r['attempts']:8d} "
            f"{r['timeouts']:8d} {r['lost_s']:7.1f} {r['p50_ms']:7.0f} {r['p95_ms']:7.0f} "
            f"{r['adaptive_s']:9.1f} s"
        )
    for r in results:
        for reason, n in r["failures"].most_common():
            print(f"{r['kind']}: {n} calls failed: {reason}")
        if r["timeouts"]:
            given = ", ".join(f"{t:g}" for t in r["timeout_s"])
            print(f"{r['kind']}: hung requests were given {given} s (ceiling {r['ceiling_s']:g} s)")
    healthy, flaky = results[0], results[1]
    ratio = flaky["elapsed_s"] / healthy["elapsed_s"]
    print(
        f"flaky / healthy: {flaky['elapsed_s']:.2f} s / {healthy['elapsed_s']:.2f} s = "
        f"{ratio:.2f}x; goal <= {GOAL_RATIO:g}x: {'met' if ratio <= GOAL_RATIO else 'NOT MET'}"
    )
    if len(results) > 2:
        print(
            f"with the timeout fixed at {results[2]['ceiling_s']:g} s: "
            f"{results[2]['elapsed_s'] / healthy['elapsed_s']:.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
