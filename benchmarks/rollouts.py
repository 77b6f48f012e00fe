"""LLM agent rollouts: real sandboxed episodes against an endpoint that takes 200 ms a request.

    python benchmarks/rollouts.py [--episodes 64] [--seconds 30] [--latency-ms 200] [--envs 3]

Real environments of the catalogue, compiled, with planned and gold-executed tasks and their
checks (as benchmarks/pipeline.py makes them, about a hundred tasks each like the full
profile); each episode is `synthesis.rollouts.attempts.llm_attempt` (the LLM agent policy,
a multi-turn task's user played by the LLM from the second attempt, a real sandbox session,
graded by the checks), k attempts per task as the trajectories asset runs them. The endpoint
is benchmarks/loopback_endpoint.py in its own process, holding every request `--latency-ms`:
its agent makes TOOL_TURNS read calls of the environment's own tools, then asks whether
there is anything else (a multi-turn task's user gives what it held back), then answers; as
the user it says the offline answer it is given.

Three configurations, each run over the environments in turn (one call per environment, as
one partition of the asset makes it, a fresh answer cache each) until `--seconds` passed:

- `previous`: what the asset did before: a thread per episode in flight (the client's
  concurrency), their sessions from the run's sandbox pool of SANDBOX_WORKERS (whose
  zygote cache keeps that many idle: a thread gives its zygote back and takes it again for
  its next episode, so it too starts about one per episode in flight, not one per episode);
- `in-flight`: `llm_attempts` (what the asset does now): the episodes on the threads of a
  sandbox pool as wide as the client's concurrency, whose zygotes start once per environment
  and stay warm;
- `achat-loop`: the same, but every request through `LLMClient.achat` on one event loop
  thread (the episode threads wait on its answers): whether the async client gets more.

The episodes' Python (the client's work per request, mostly; the sandboxes and the endpoint
are other processes) shares one GIL: `CPU ms/req` is this process's, and `GIL ceiling`
(1000 / it) the rate one free core would allow; `endpoint ms` is the endpoint process's CPU
per request (the cores are shared with it and the sandboxes). A machine busy with other work
starves the process, and no configuration keeps the rate: the load average is printed with
the figures.

Issue 9's goal: 64 concurrent episodes against a 200 ms endpoint complete at least 256
requests/s (80 % of 64 / 0.2 s) over at least 30 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assets._resources import SANDBOX_WORKERS  # noqa: E402
from benchmarks.loopback_endpoint import Endpoint  # noqa: E402
from sandboxes import WorkerPool  # noqa: E402
from synthesis.config import LLMSettings, get_profile, llm_budget_path, llm_cache_dir  # noqa: E402
from synthesis.environments.archetypes import supported_archetypes  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.model import EnvModel, model_of  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.states import build_initial_state  # noqa: E402
from synthesis.environments.topics import load_catalogue, select_topics  # noqa: E402
from synthesis.llm.client import LLMClient, LLMError, budget_for  # noqa: E402
from synthesis.models import Environment  # noqa: E402
from synthesis.rollouts.attempts import Job, llm_attempt, llm_attempts  # noqa: E402
from synthesis.tasks.checks import derive_checks  # noqa: E402
from synthesis.tasks.gold import execute_gold  # noqa: E402
from synthesis.tasks.scenarios import plan_scenarios  # noqa: E402

GOAL_SHARE = 0.8  # of the ideal rate, episodes / latency
GOAL_SECONDS = 30.0
TOOL_TURNS = 4  # read calls the agent makes before its final answer
STATES, CANDIDATES_PER_STATE = 2, 60  # ~100 published tasks per environment
PROFILE = get_profile("full")  # records per entity, chain length, k attempts

# --- the endpoint's answers (run in the endpoint's process) ---------------------------------

_READ = ("list_", "find_", "get_", "search_")
_DUMMY = {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}
_ANSWER = "What you answer: "


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The model: the simulated user's answer to a user_sim request, else the agent's turn."""
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") == "user_sim":
        return _user_answer(request)
    return _agent_turn(request)


def _user_answer(request: dict[str, Any]) -> dict[str, Any]:
    """The offline answer the prompt gives, in a few words of the user's own (what user_sim
    accepts: every value it states, nothing else)."""
    prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
    offline = next(
        (line.removeprefix(_ANSWER) for line in prompt.splitlines() if line.startswith(_ANSWER)),
        "",
    )
    return {"role": "assistant", "content": json.dumps({"text": f"Of course. {offline}"})}


def _agent_turn(request: dict[str, Any]) -> dict[str, Any]:
    """TOOL_TURNS read calls, then a reply that asks whether there is anything else (a
    multi-turn task's user then gives what it held back), then, once answered, done."""
    made = sum(1 for m in request["messages"] if m["role"] == "tool")
    said = sum(1 for m in request["messages"] if m["role"] == "assistant" and m.get("content"))
    if made >= TOOL_TURNS and said:
        return {"role": "assistant", "content": "Done, thank you."}
    if made >= TOOL_TURNS:
        text = f"I looked it up in {made} calls. Is there anything else I should know?"
        return {"role": "assistant", "content": text}
    tools = [t["function"] for t in request["tools"]]
    reads = [t for t in tools if t["name"].startswith(_READ)] or tools
    tool = reads[made % len(reads)]
    properties = tool.get("parameters", {}).get("properties", {})
    args = {
        name: _DUMMY.get(properties.get(name, {}).get("type"), "x")
        for name in tool.get("parameters", {}).get("required", [])
    }
    call = {
        "id": f"call_{made}",
        "type": "function",
        "function": {"name": tool["name"], "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# --- the environments and their tasks ---------------------------------------------------------


@dataclass
class Prepared:
    env: Environment
    model: EnvModel
    jobs: list[Job]


def prepare(topic, seed: int) -> Prepared:
    """A compiled environment and its published tasks with checks, k attempts each."""
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    planned = []
    for index in range(STATES):
        state = build_initial_state(
            env, seed=seed, index=index, records_per_entity=PROFILE.records_per_entity
        )
        planned += plan_scenarios(
            env,
            state,
            seed=seed,
            count=CANDIDATES_PER_STATE,
            max_chain_length=PROFILE.max_chain_length,
        )
    published = [s for s in execute_gold(env, planned) if s.status == "published"]
    jobs = [
        (scenario, derive_checks(scenario, model=model), attempt)
        for scenario in published
        for attempt in range(PROFILE.llm_agent_attempts)
    ]
    return Prepared(env, model, jobs)


# --- the two configurations -------------------------------------------------------------------


def previous(prepared: Prepared, client: LLMClient) -> list:
    """What the asset did before: threads as wide as the client's concurrency, their
    sessions from the run's SANDBOX_WORKERS-wide pool."""

    def play(job: Job):
        scenario, checks, attempt = job
        try:
            return llm_attempt(
                prepared.env, scenario, checks, client, attempt, model=prepared.model, pool=pool
            )
        except LLMError as exc:
            return exc

    with (
        WorkerPool(size=SANDBOX_WORKERS) as pool,
        ThreadPoolExecutor(max_workers=client.settings.concurrency) as threads,
    ):
        return list(threads.map(play, prepared.jobs))


def in_flight(prepared: Prepared, client: LLMClient) -> list:
    """What the asset does now (synthesis.rollouts.attempts.llm_attempts): threads."""
    return llm_attempts(prepared.env, prepared.jobs, client, model=prepared.model)


class LoopClient:
    """`client` whose `chat` is its `achat` on an event loop: the episodes' threads block on
    the answer while the loop does the HTTP (the async transport, its small pools)."""

    def __init__(self, client: LLMClient, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        call = self._client.achat(messages, **kwargs)
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()


def on_loop(prepared: Prepared, client: LLMClient) -> list:
    """`in_flight` with every request through `achat`, on one event loop thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        bridged: Any = LoopClient(client, loop)
        return llm_attempts(prepared.env, prepared.jobs, bridged, model=prepared.model)
    finally:
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


CONFIGURATIONS = {"previous": previous, "in-flight": in_flight, "achat-loop": on_loop}


# --- measuring ----------------------------------------------------------------------------------


def make_client(base_url: str, home: Path, name: str, concurrency: int) -> LLMClient:
    """A client as assets/_llm.py opens one: answer cache and budget file under the home."""
    settings = LLMSettings(
        base_url=base_url, api_key="sk-bench", model="bench-model", concurrency=concurrency
    )
    return LLMClient(
        settings,
        cache_dir=llm_cache_dir(home),
        build_id=name,
        budget=budget_for(settings, llm_budget_path(home, name)),
        run_id=name,
    )


def measure(
    kind: str, envs: list[Prepared], endpoint: Endpoint, home: Path, args: argparse.Namespace
) -> dict:
    """One configuration, run environment after environment until `--seconds` passed."""
    endpoint.take_counts()  # count this run's requests only
    episodes = failed = requests = runs = 0
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < args.seconds:
        prepared = envs[runs % len(envs)]
        # A fresh answer cache per run: every episode asks the endpoint, as a first build does.
        client = make_client(endpoint.base_url, home / kind / str(runs), kind, args.episodes)
        results = CONFIGURATIONS[kind](prepared, client)
        episodes += len(results)
        failed += sum(isinstance(r, LLMError) for r in results)
        requests += sum(c.status not in ("cached", "skipped") for c in client.calls)
        runs += 1
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    served, most, endpoint_cpu = endpoint.take_counts()
    return {
        "kind": kind,
        "runs": runs,
        "episodes": episodes,
        "failed": failed,
        "requests": requests,
        "served": served,
        "max_in_flight": most,
        "elapsed_s": elapsed,
        "rps": requests / elapsed,
        "eps": episodes / elapsed,
        # This process's CPU (all its threads: one GIL) per request; the sandboxes and the
        # endpoint are other processes. 1000 / this is the most one free core allows.
        "cpu_ms": cpu * 1000 / max(1, requests),
        # The endpoint's process shares the cores (as the sandboxes do): its CPU per request.
        "endpoint_cpu_ms": endpoint_cpu * 1000 / max(1, served),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64, help="episodes in flight")
    parser.add_argument("--seconds", type=float, default=GOAL_SECONDS)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--envs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ideal = args.episodes / (args.latency_ms / 1000)
    goal = GOAL_SHARE * ideal

    clock = time.perf_counter()
    topics = select_topics(load_catalogue(), supported_archetypes(), args.envs)
    envs = [prepare(topic, args.seed) for topic in topics]
    print(
        f"{len(envs)} environments ({', '.join(t.topic_id for t in topics)}), "
        f"{sum(len(p.jobs) for p in envs)} LLM attempts "
        f"({PROFILE.llm_agent_attempts} per task), prepared in {time.perf_counter() - clock:.0f} s"
    )
    print(
        f"{args.episodes} episodes in flight, >= {args.seconds:g} s per configuration, "
        f"endpoint latency {args.latency_ms:g} ms: ideal {ideal:.0f} requests/s, "
        f"goal {goal:.0f} requests/s"
    )
    import httpx2  # noqa: F401 - the async transport's import is not the first run's to pay

    load_before = os.getloadavg()[0]
    with (
        Endpoint(args.latency_ms / 1000, answer) as endpoint,
        tempfile.TemporaryDirectory(prefix="rollouts-bench-") as home,
    ):
        results = [measure(kind, envs, endpoint, Path(home), args) for kind in CONFIGURATIONS]
    report(results, ideal, goal, args)
    # The figures depend on what else runs: episodes starved of CPU cannot keep their rate.
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


def report(results: list[dict], ideal: float, goal: float, args: argparse.Namespace) -> None:
    print(
        f"{'config':10} {'runs':>4} {'episodes':>8} {'requests':>8} {'seconds':>7} "
        f"{'req/s':>7} {'episodes/s':>10} {'of goal':>7} {'in flight':>9} "
        f"{'CPU ms/req':>10} {'GIL ceiling':>11} {'endpoint ms':>11} {'failed':>6}"
    )
    for r in results:
        print(
            f"{r['kind']:10} {r['runs']:4d} {r['episodes']:8d} {r['requests']:8d} "
            f"{r['elapsed_s']:7.1f} {r['rps']:7.1f} {r['eps']:10.1f} {r['rps'] / goal:6.2f}x "
            f"{r['max_in_flight']:9d} {r['cpu_ms']:10.2f} {1000 / r['cpu_ms']:11.0f} "
            f"{r['endpoint_cpu_ms']:11.2f} {r['failed']:6d}"
        )
    by_kind = {r["kind"]: r for r in results}
    old, new, loop = by_kind["previous"], by_kind["in-flight"], by_kind["achat-loop"]
    print(
        f"requests served by the endpoint: {', '.join(str(r['served']) for r in results)}; "
        f"in-flight / previous: {new['rps'] / old['rps']:.2f}x requests/s, "
        f"{new['eps'] / old['eps']:.2f}x episodes/s; "
        f"achat-loop / in-flight: {loop['rps'] / new['rps']:.2f}x requests/s"
    )
    met = new["rps"] >= goal and new["elapsed_s"] >= GOAL_SECONDS
    print(
        f"goal: {args.episodes} LLM episodes in flight >= {goal:.0f} requests/s over "
        f">= {GOAL_SECONDS:g} s: {new['rps']:.1f} requests/s over {new['elapsed_s']:.1f} s "
        f"({new['rps'] / ideal:.0%} of ideal): {'met' if met else 'NOT MET'}"
    )


if __name__ == "__main__":
    sys.exit(main())
