"""A build's answer latencies are the build's: every run's client reads and appends to one
file beside the build's budget account, so a run that asks a stage a few questions starts
with the timeouts the build's earlier runs earned, and a stage short of answers of its own
is timed by every stage's answers (scaled to how long its answers may be).

No network for the unit part: latencies are fed to the timeouts directly. One test sends
requests, to show a second client's first request cut at the timeout the first client's
answers gave; one runs processes appending at once, to show the file stays whole.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import threading
from pathlib import Path

import pytest

from synthesis.config import LLMSettings
from synthesis.llm.budget import locked_json, write_behind
from synthesis.llm.client import LLMClient, budget_for
from synthesis.llm.timeouts import MULTIPLE, AdaptiveTimeout, shared_path
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, hang, scripted

CEILING_S = 60.0
LATENCIES = [0.5 + 0.1 * (i % 10) for i in range(19)] + [1.0]  # p95 (nearest rank) 1.3 s


def _client(account: Path | None, base_url: str = "http://127.0.0.1:9/v1", **fields):
    settings = LLMSettings(
        base_url=base_url, api_key="sk-test", model="fake-model", timeout_s=CEILING_S, **fields
    )
    return LLMClient(settings, build_id="b1", budget=budget_for(settings, account))


def test_a_second_client_of_the_build_starts_with_the_first_clients_timeouts(tmp_path):
    account = tmp_path / "llm_budgets" / "b1.json"
    first = _client(account)
    assert first.timeouts.path == shared_path(account) != account
    for latency in LATENCIES:
        first.timeouts.observe("agent", latency, 1024)
    adapted = first.timeouts.timeout_s("agent")
    assert adapted == pytest.approx(MULTIPLE * 1.3)
    first.timeouts.flush()  # (otherwise SYNC_S later, or when the client is dropped)

    # The build's next run (another client, the same account file): adapted from its start.
    second = _client(account)
    assert second.timeouts.adapted("agent")
    assert second.timeouts.timeout_s("agent") == adapted
    assert second.timeouts.percentile_s("agent") == pytest.approx(1.3)
    # A client without an account file (tests, `envfoundry eval`) keeps its own windows.
    alone = _client(None)
    assert alone.timeouts.path is None
    assert alone.timeouts.timeout_s("agent") == CEILING_S and not alone.timeouts.adapted("agent")

    # The second client's answers join the build's: a third client sees both, in order.
    for _ in range(200):
        second.timeouts.observe("agent", 0.2, 1024)
    del second
    gc.collect()  # a dropped client writes what it has not written yet
    third = _client(account)
    assert third.timeouts.timeout_s("agent") == 1.5  # the last 200: all 0.2 s (the floor)
    saved = json.loads(shared_path(account).read_text())
    assert saved["stages"]["agent"] == [0.2] * 200 and len(saved["pool"]) == 200


def test_a_stage_short_of_answers_is_timed_by_every_stages_answers_scaled_to_its_own():
    timeouts = AdaptiveTimeout(ceiling_s=CEILING_S)
    for latency in LATENCIES[:19]:
        timeouts.observe("topic", latency, 1024)
    # 19 answers in the whole build: too few to tell anything, the ceiling for all.
    assert timeouts.timeout_s("task_plan", 1024) == CEILING_S
    assert timeouts.fallback_s(1024) is None
    timeouts.observe("topic", LATENCIES[19], 1024)
    # 20 answers of `topic`: a stage asked once (task_plan, env_code) takes them as its own,
    # times how much longer its answer may be (env_code: 8,192 tokens, 8 times 1,024).
    assert timeouts.timeout_s("task_plan", 1024) == pytest.approx(MULTIPLE * 1.3)
    assert timeouts.timeout_s("initial_state", 4096) == pytest.approx(MULTIPLE * 1.3 * 4)
    assert timeouts.timeout_s("env_code", 8192) == pytest.approx(MULTIPLE * 1.3 * 8)
    assert not timeouts.adapted("task_plan")
    # Never past the ceiling.
    low = AdaptiveTimeout(ceiling_s=30.0)
    for latency in LATENCIES:
        low.observe("topic", latency, 1024)
    assert low.timeout_s("env_code", 8192) == 30.0
    # Without the request's max_tokens, no stand-in: the ceiling.
    assert timeouts.timeout_s("task_plan") == CEILING_S
    # Once a stage has enough answers of its own, they decide.
    for _ in range(20):
        timeouts.observe("task_plan", 3.0, 1024)
    assert timeouts.timeout_s("task_plan", 1024) == pytest.approx(MULTIPLE * 3.0)
    # An answer whose request allowed more stands in for one allowed less unscaled (never
    # shorter than it took): 20 env_code answers of 2 s time a 1,024-token stage at 4 x 2 s.
    other = AdaptiveTimeout(ceiling_s=CEILING_S)
    for _ in range(20):
        other.observe("env_code", 2.0, 8192)
    assert other.timeout_s("task_text", 1024) == pytest.approx(MULTIPLE * 2.0)


def test_the_same_latencies_give_the_same_timeouts_whichever_client_reads_them(tmp_path):
    path = tmp_path / "b1.latencies.json"
    writer = AdaptiveTimeout(ceiling_s=CEILING_S, path=path)
    for i, latency in enumerate(LATENCIES * 3):
        writer.observe(("topic", "agent", "task_text")[i % 3], latency + i / 1000, 1024)
    writer.flush()
    readers = [AdaptiveTimeout(ceiling_s=CEILING_S, path=path) for _ in range(2)]
    # Latencies are kept to 0.1 ms, so what is read back is what the writer kept.
    for stage in ("topic", "agent", "task_text", "env_code"):
        for max_tokens in (None, 1024, 8192):
            expected = writer.timeout_s(stage, max_tokens)
            assert [r.timeout_s(stage, max_tokens) for r in readers] == [expected, expected]


def test_a_second_clients_first_request_is_cut_at_the_timeout_the_first_client_earned(tmp_path):
    account = tmp_path / "b1.json"
    with FakeOpenAIServer(lambda request: final_answer("ok")) as server:
        first = _client(account, server.base_url)
        for i in range(20):
            first.chat([{"role": "user", "content": f"q{i}"}], stage="agent", artifact_id="a")
        first.timeouts.flush()
        earned = first.timeouts.timeout_s("agent")
    assert earned == 1.5  # the floor: a loopback answers in milliseconds

    # The next run's first request hangs, and so does its hedge (sent at the earned
    # timing, synthesis/llm/hedging.py): cut at the earned timeout, not the 60 s ceiling,
    # retried at once (no backoff) and answered.
    with FakeOpenAIServer(scripted(hang(), hang(), final_answer("late but fine"))) as server:
        second = _client(account, server.base_url, retries=1)
        answer = second.chat([{"role": "user", "content": "q"}], stage="agent", artifact_id="a")
    assert answer.message["content"] == "late but fine"
    assert (second._hedging.sent, second._hedging.won) == (1, 0)
    # The ledger counts every send: the hedge has a row of its own, before its attempt's.
    hedged, cut, answered = answer.attempts
    assert len(server.requests) == len(answer.attempts) == 3
    assert hedged.status == "hedged" and hedged.reason.endswith("neither send answered")
    assert hedged.call_id not in (cut.call_id, answered.call_id)
    assert cut.status == "retried" and cut.reason.startswith("timeout: no answer within 1.5s")
    assert "adaptive timeout" in cut.reason and cut.latency_ms < 10_000
    assert answered.status == "accepted"


def _append(path: str, worker: int, samples: int, ready, go) -> None:
    """One process of a build: answers of two stages, each written through at once (a
    round trip per answer, where a client writes at most every SYNC_S), reading the others'
    back each time."""
    timeouts = AdaptiveTimeout(ceiling_s=CEILING_S, window=10_000, path=Path(path))
    ready.put(worker)
    go.wait()
    for i in range(samples):
        stage = "agent" if i % 2 else "topic"
        timeouts.observe(stage, round(worker + i / 10_000, 4), 1024)
        timeouts.flush()


def test_processes_appending_at_once_leave_every_answer_in_the_file_once(tmp_path):
    path = tmp_path / "b1.latencies.json"
    workers, samples = 4, 150
    context = multiprocessing.get_context("fork")
    ready, go = context.Queue(), context.Event()
    processes = [
        context.Process(target=_append, args=(str(path), w, samples, ready, go))
        for w in range(workers)
    ]
    for p in processes:
        p.start()
    for _ in processes:
        ready.get(timeout=10)
    go.set()
    for p in processes:
        p.join(20)
    assert [p.exitcode for p in processes] == [0] * workers
    saved = json.loads(path.read_text())  # whole JSON, however the writes interleaved
    written = {
        stage: [round(w + i / 10_000, 4) for w in range(workers) for i in range(samples) if f(i)]
        for stage, f in (("agent", lambda i: i % 2), ("topic", lambda i: not i % 2))
    }
    for stage, latencies in written.items():
        assert sorted(saved["stages"][stage]) == sorted(latencies)  # each once, none lost
        for w in range(workers):  # each process's answers in the order it observed them
            own = [x for x in saved["stages"][stage] if int(x) == w]
            assert own == sorted(own)
    assert len(saved["pool"]) == workers * samples

    # The window keeps the build's last answers: a reader with the default window of 200.
    reader = AdaptiveTimeout(ceiling_s=CEILING_S, path=path)
    reader.observe("agent", 0.5, 1024)
    reader.flush()
    saved = json.loads(path.read_text())
    assert len(saved["stages"]["agent"]) == 200 and saved["stages"]["agent"][-1] == 0.5


def test_a_client_dropped_while_its_thread_holds_the_file_lock_does_not_wait_for_itself(
    tmp_path,
):
    """The garbage collector runs a dropped client's finalizer on whichever thread it
    interrupts, possibly one inside another client's round trip to the same file (a run
    host runs several runs of a build in one process): it hands its answers over."""
    path = tmp_path / "b1.latencies.json"
    dropped = AdaptiveTimeout(ceiling_s=CEILING_S, path=path)
    dropped.observe("agent", 0.25, 1024)  # within SYNC_S of its first read: not written yet
    dropped.cycle = dropped  # only the cyclic collector frees it: at a moment of its choice
    del dropped
    finished = threading.Event()

    def round_trip() -> None:
        with locked_json(path) as shared:
            gc.collect()  # the finalizer runs here, on the thread holding the lock
            assert "agent" not in shared.get("stages", {})
        finished.set()

    thread = threading.Thread(target=round_trip, daemon=True)
    thread.start()
    assert finished.wait(10), "the finalizer waited for the lock its own thread holds"
    # The round trip holding the lock wrote the handed-over answers with its own.
    assert json.loads(path.read_text())["stages"]["agent"] == [0.25]

    # A change written behind while no round trip holds the lock is written at once.
    write_behind(path, lambda shared: shared["stages"]["agent"].append(0.5))
    assert json.loads(path.read_text())["stages"]["agent"] == [0.25, 0.5]
