"""LLM client throughput: concurrent agent episodes against an endpoint that takes 200 ms per
request, through `LLMClient.achat` (asyncio) and, in the same run, `LLMClient.chat` (threads).

    python benchmarks/llm_throughput.py [--episodes 64] [--seconds 30] [--latency-ms 200]
                                        [--loops N]

The endpoint is benchmarks/loopback_endpoint.py (asyncio, HTTP/1.1 keep-alive, its own
process so its CPU does not compete with the client for the GIL): it holds every request
`--latency-ms` and answers like an agent: a tool call per turn, then a final answer after a
few. Each simulated episode makes its calls one after another, its
conversation growing by each call and result, and starts a new episode when one ends, until
`--seconds` have passed. Each client runs as the assets open it (answer cache and budget file
under a throwaway home, default concurrency). Issue 9's goal: 64 episodes against a 200 ms
endpoint complete at least 256 requests/s (80 % of the 64 / 0.2 s the endpoint allows).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.loopback_endpoint import Endpoint  # noqa: E402
from synthesis.config import LLMSettings, llm_budget_path, llm_cache_dir  # noqa: E402
from synthesis.llm.client import LLMClient, budget_for  # noqa: E402

GOAL_SHARE = 0.8  # of the ideal rate, episodes / latency
TURNS = 4  # tool calls per episode before its final answer
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ')} of the shop",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
    for name in ("get_order", "cancel_order", "list_orders")
]


def agent_turn(request: dict) -> dict:
    """The endpoint's answer: a tool call until the episode has made TURNS, then the end."""
    made = sum(1 for m in request["messages"] if m.get("role") == "tool")
    if made >= TURNS:
        return {"role": "assistant", "content": f"Done after {made} tool calls."}
    call = {
        "id": f"call_{made}",
        "type": "function",
        "function": {"name": "get_order", "arguments": json.dumps({"order_id": f"o{made}"})},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# --- the episodes -------------------------------------------------------------------------


def opening(episode: int) -> list[dict]:
    return [
        {"role": "system", "content": "You are a shop's support agent. Use the tools."},
        {"role": "user", "content": f"Episode {episode}: cancel my last order, please."},
    ]


def next_messages(messages: list[dict], answer: dict) -> list[dict] | None:
    """The conversation after `answer` and its tool results, or None when the episode ended."""
    calls = answer.get("tool_calls")
    if not calls:
        return None
    results = [
        {"role": "tool", "tool_call_id": c["id"], "content": json.dumps({"status": "open"})}
        for c in calls
    ]
    return [*messages, answer, *results]


def make_client(base_url: str, home: Path, name: str) -> LLMClient:
    """A client as assets/_llm.py opens one: answer cache and budget file under the home."""
    settings = LLMSettings(base_url=base_url, api_key="sk-bench", model="bench-model")
    return LLMClient(
        settings,
        cache_dir=llm_cache_dir(home),
        build_id=name,
        budget=budget_for(settings, llm_budget_path(home, name)),
        run_id=name,
    )


async def async_episodes(client: LLMClient, slots: range, episodes: int, end: float) -> None:
    async def worker(slot: int) -> None:
        episode = slot
        messages = opening(episode)
        while time.perf_counter() < end:
            answer = await client.achat(
                messages, stage="agent", artifact_id=f"e{episode}", tools=TOOLS
            )
            messages = next_messages(messages, answer.message)
            if messages is None:  # a new episode in this slot
                episode += episodes
                messages = opening(episode)

    try:
        await asyncio.gather(*(worker(slot) for slot in slots))
    finally:
        await client.aclose()


def looped_episodes(client: LLMClient, loops: int, episodes: int, end: float) -> None:
    """The episodes shared by `loops` event loops, one per thread, all on one client."""
    if loops == 1:
        asyncio.run(async_episodes(client, range(episodes), episodes, end))
        return
    with ThreadPoolExecutor(max_workers=loops) as threads:
        runs = [
            threads.submit(
                asyncio.run, async_episodes(client, range(i, episodes, loops), episodes, end)
            )
            for i in range(loops)
        ]
        for run in runs:
            run.result()


def threaded_episodes(client: LLMClient, episodes: int, end: float) -> None:
    def worker(slot: int) -> None:
        episode = slot
        messages = opening(episode)
        while time.perf_counter() < end:
            answer = client.chat(messages, stage="agent", artifact_id=f"e{episode}", tools=TOOLS)
            messages = next_messages(messages, answer.message)
            if messages is None:
                episode += episodes
                messages = opening(episode)

    with ThreadPoolExecutor(max_workers=episodes) as threads:
        list(threads.map(worker, range(episodes)))


def measure(kind: str, base_url: str, home: Path, episodes: int, seconds: float) -> dict:
    """One client's run: `threads`, or `async` / `async×N` (N event loops in N threads)."""
    # A home per kind: the second run must not be served from the first run's answer cache.
    client = make_client(base_url, home / kind, f"bench-{kind}")
    started, cpu = time.perf_counter(), time.process_time()
    end = started + seconds
    if kind == "threads":
        threaded_episodes(client, episodes, end)
    else:
        loops = int(kind.partition("×")[2] or 1)
        looped_episodes(client, loops, episodes, end)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    calls = client.calls
    latencies = sorted(c.latency_ms for c in calls if c.status == "accepted")
    return {
        "kind": kind,
        "requests": len(latencies),
        "not_accepted": len(calls) - len(latencies),
        "elapsed_s": elapsed,
        "rps": len(latencies) / elapsed,
        # The client's own CPU (the endpoint is another process): what a request costs
        # whatever else the machine runs; 1000 / this is the rate one free core could reach.
        "cpu_ms": cpu * 1000 / max(1, len(calls)),
        "p50_ms": statistics.median(latencies) if latencies else 0.0,
        "p95_ms": latencies[int(len(latencies) * 0.95)] if latencies else 0.0,
        "concurrency": client.settings.concurrency,
        "reasons": Counter(
            (c.reason or c.status).split(":")[0] for c in calls if c.status != "accepted"
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument(
        "--loops",
        type=int,
        default=0,
        help="also run the async client with the episodes shared by this many event loops",
    )
    args = parser.parse_args()
    ideal = args.episodes / (args.latency_ms / 1000)
    goal = GOAL_SHARE * ideal

    print(
        f"{args.episodes} episodes, {args.seconds:g} s per client, endpoint latency "
        f"{args.latency_ms:g} ms: ideal {ideal:.0f} requests/s, goal {goal:.0f} requests/s"
    )
    import openai  # noqa: F401 - the SDK's import (~1 s) is not the first client's to pay

    load_before = os.getloadavg()[0]

    results = []
    with (
        Endpoint(args.latency_ms / 1000, agent_turn) as endpoint,
        tempfile.TemporaryDirectory(prefix="llm-throughput-") as home,
    ):
        kinds = ["async", "threads"] + ([f"async×{args.loops}"] if args.loops > 1 else [])
        for kind in kinds:
            results.append(
                measure(kind, endpoint.base_url, Path(home), args.episodes, args.seconds)
            )
        served = endpoint.take_counts()[0]
    report(results, ideal, goal, served)
    # The figures depend on what else runs: a client starved of CPU cannot keep its rate.
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


def report(results: list[dict], ideal: float, goal: float, served: int | None) -> None:
    print(
        f"{'client':8} {'requests':>9} {'seconds':>8} {'req/s':>8} {'of ideal':>9} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'CPU ms/req':>10} {'failed':>7}"
    )
    for r in results:
        print(
            f"{r['kind']:8} {r['requests']:9d} {r['elapsed_s']:8.1f} {r['rps']:8.1f} "
            f"{r['rps'] / ideal:8.0%} {r['p50_ms']:7.0f} {r['p95_ms']:7.0f} {r['cpu_ms']:10.2f} "
            f"{r['not_accepted']:7d}"
        )
    for r in results:
        if r["reasons"]:
            print(f"{r['kind']} attempts not accepted, by kind: {dict(r['reasons'])}")
    by_kind = {r["kind"]: r for r in results}
    fast, threads = by_kind["async"], by_kind["threads"]
    print(f"requests served by the endpoint (both runs): {served}")
    print(
        f"async / threads: {fast['rps'] / threads['rps']:.2f}x; "
        f"async / goal: {fast['rps'] / goal:.2f}x; threads / goal: {threads['rps'] / goal:.2f}x"
    )
    print(
        f"goal: async client >= {goal:.0f} requests/s "
        f"(concurrency {fast['concurrency']}): {'met' if fast['rps'] >= goal else 'NOT MET'}"
    )


if __name__ == "__main__":
    sys.exit(main())
