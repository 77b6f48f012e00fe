"""Sessions end to end on every available backend: calls, batches, errors, limits, state."""

from __future__ import annotations

import os
import textwrap

import pytest
from sandbox_helpers import FAST, fake, open_fds, processes_of

from sandboxes import (
    CallResult,
    EnvSource,
    Limits,
    SandboxError,
    open_session,
    run_episode,
)
from sandboxes.limits import MESSAGE_MB_VARIABLE

COUNTER = fake("sandbox_envs.py", "Counter")
CLUMSY = fake("sandbox_envs.py", "Clumsy")


def test_calls_round_trip_and_state_loads_into_attributes(backend):
    with open_session(COUNTER, {"count": 40, "log": [40]}, backend=backend) as session:
        assert session.status == "ok"
        assert session.info["class"] == "Counter"
        assert session.info["loader"] == "attributes"
        assert session.tools == ["fail", "get_count", "increment"]
        assert session.call("increment", {"by": 2}) == CallResult(
            "increment", True, {"success": True, "data": 42}, None
        )
        assert session.call("get_count", {}).result == {"success": True, "data": 42}
        assert session.final_state() == {"count": 42, "log": [40, 2]}


def test_none_state_means_class_defaults(backend):
    with open_session(COUNTER, None, backend=backend) as session:
        assert session.final_state() == {"count": 0, "log": []}


def test_exceptions_unknown_tools_and_bad_arguments_are_error_records(backend):
    with open_session(COUNTER, {}, backend=backend) as session:
        raised = session.call("fail", {"message": "no such order"})
        assert raised == CallResult("fail", False, None, "ValueError: no such order")
        assert session.call("delete_everything", {}).error == "unknown tool: 'delete_everything'"
        assert session.call("_private", {}).error == "unknown tool: '_private'"
        assert session.call("increment", {"nope": 1}).error.startswith("TypeError: ")
        assert session.call("increment", ["not", "a", "dict"]).error == (
            "TypeError: arguments must be a JSON object"
        )
        assert not session.call("increment", {"by": object()}).ok
        assert session.status == "ok"
        assert session.call("increment", {"by": 1}).result == {"success": True, "data": 1}


def test_batch_is_one_message_and_keeps_order(backend):
    calls = [
        ("increment", {"by": 1}),
        {"tool": "fail", "args": {}},
        ("get_count", {}),
        {"tool": "nope"},
        ("increment", {"by": 10}),
    ]
    with open_session(COUNTER, {}, backend=backend) as session:
        results = session.call_batch(calls)
        assert [r.tool for r in results] == ["increment", "fail", "get_count", "nope", "increment"]
        assert [r.ok for r in results] == [True, False, True, False, True]
        assert results[2].result["data"] == 1
        assert results[4].result["data"] == 11
        assert results[1].error == "ValueError: boom"
        big = session.call_batch([("increment", {})] * 2000)
        assert [r.result["data"] for r in big] == list(range(12, 2012))
        assert session.call_batch([]) == []


def test_batch_reports_malformed_items_without_sending_them(backend):
    with open_session(COUNTER, {}, backend=backend) as session:
        results = session.call_batch(
            [
                ("increment", {}),
                ("increment",),
                42,
                ("increment", {"by": {1, 2}}),
                ("increment", {}),
            ]
        )
        assert [r.ok for r in results] == [True, False, False, False, True]
        assert results[3].error.startswith("invalid arguments")
        assert results[4].result["data"] == 2


def test_timeout_kills_the_worker_and_later_calls_are_not_run(backend):
    with open_session(CLUMSY, {}, backend=backend, limits=FAST) as session:
        results = session.call_batch(
            [("sleep", {"seconds": 0}), ("sleep", {"seconds": 30}), ("chatty", {})]
        )
        assert results[0].ok
        assert results[1].error == "timeout after 1s (worker killed)"
        assert results[2].error.startswith("not run: session killed: timeout after 1s")
        assert session.status == "killed"
        assert session.reason == "timeout after 1s (worker killed) during call 'sleep'"
        assert session.call("chatty", {}).error.startswith("not run")
        assert session.final_state() is None


def test_a_batch_sent_result_by_result_loses_none_to_a_call_that_kills_the_worker(backend):
    """With `each`, a batch ends at a call that kills the worker exactly as the same calls
    made one at a time do: the earlier results kept, that call blamed, the rest not run. (In
    chunks, the default, results the worker had not sent yet die with it: the self-test's
    mutant runs only need to know that the run failed.)"""
    calls = [("chatty", {}), ("sleep", {"seconds": 0}), ("dies", {}), ("chatty", {})]
    with open_session(CLUMSY, {}, backend=backend) as session:
        one_by_one = [session.call(tool, args) for tool, args in calls]
    with open_session(CLUMSY, {}, backend=backend) as session:
        each = session.call_batch(calls, each=True)
        reason = session.reason
    assert each == one_by_one
    assert [r.ok for r in each] == [True, True, False, False]
    assert "exited with status 3" in each[2].error and each[3].error.startswith("not run")
    assert reason.endswith("during call 'dies'")


def test_timeout_is_per_call_inside_a_batch(backend):
    limits = Limits(call_timeout_s=1.0)
    with open_session(CLUMSY, {}, backend=backend, limits=limits) as session:
        # Three calls of 0.6 s: 1.8 s in all, but each within its own 1 s.
        results = session.call_batch([("sleep", {"seconds": 0.6})] * 3)
        assert all(r.ok for r in results), results
        assert session.status == "ok"


def test_prints_never_reach_the_protocol(backend):
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert session.call_batch([("chatty", {})] * 3)[2].result == {
            "success": True,
            "data": "said a lot",
        }
        assert session.final_state() == {"calls": 3}


RICH = {
    "set": [1, 2, 3],
    "tuple": [1, "a"],
    "point": [1, 2],
    "when": "2026-03-02T09:30:00",
    "day": "2026-03-02",
    "clock": "09:30:00",
    "span": 5400.0,
    "price": 2.5,
    "ratio": 0.25,
    "colour": "red",
    "seat": {"row": 4, "tags": ["aisle"]},
    "id": "00000000-0000-0000-0000-000000000001",
    "nan": None,
}


def test_json_like_results_arrive_as_json(backend):
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert session.call("returns_set", {}).result == {"success": True, "data": [1, 2, 3]}
        assert session.call("returns_rich", {}).result == RICH
        assert session.call("returns_nan", {}).result == {"success": True, "data": None}
        assert session.call("returns_int_keys", {}).result["data"] == {"1": "one", "2": "two"}
        assert session.call_batch([("returns_rich", {})] * 2)[1].result == RICH


def test_results_that_are_not_json_are_error_records(backend):
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert session.call("returns_object", {}).error == (
            "result is not JSON-serialisable: TypeError: "
            "Object of type object is not JSON serializable"
        )
        assert session.call("returns_cycle", {}).error == (
            "result is not JSON-serialisable: ValueError: circular reference"
        )
        assert session.status == "ok"


def test_oversized_result_is_an_error_record_not_a_kill(backend):
    limits = Limits(max_message_bytes=100_000)
    with open_session(CLUMSY, {}, backend=backend, limits=limits) as session:
        assert session.call("returns_big", {"size": 50_000}).ok
        too_big = session.call("returns_big", {"size": 200_000})
        assert too_big.error.startswith("result too large: ")
        batch = session.call_batch(
            [("returns_big", {"size": 60_000})] * 3 + [("returns_big", {"size": 500_000})]
        )
        assert [r.ok for r in batch] == [True, True, True, False]
        assert session.status == "ok"


def test_the_message_limit_is_the_machines_setting(backend, monkeypatch):
    # ENVFOUNDRY_SANDBOX_MESSAGE_MB sets every session's limit whose caller gives none: a
    # 1.5 MB result is refused at 1 MB, naming the setting, and returned at 2 MB.
    monkeypatch.setenv(MESSAGE_MB_VARIABLE, "1")
    assert Limits().max_message_bytes == 1_000_000
    assert Limits().max_total_output_bytes == 4_000_000
    with open_session(CLUMSY, {}, backend=backend) as session:
        refused = session.call("returns_big", {"size": 1_500_000})
        assert "ENVFOUNDRY_SANDBOX_MESSAGE_MB raises it" in refused.error
    monkeypatch.setenv(MESSAGE_MB_VARIABLE, "2")
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert len(session.call("returns_big", {"size": 1_500_000}).result["data"]) == 1_500_000
    for bad in ("0", "lots", "2000"):
        monkeypatch.setenv(MESSAGE_MB_VARIABLE, bad)
        with pytest.raises(SandboxError, match="ENVFOUNDRY_SANDBOX_MESSAGE_MB=.*whole number"):
            Limits()


def test_total_output_budget_turns_results_into_errors(backend):
    limits = Limits(max_total_output_bytes=300_000)
    with open_session(CLUMSY, {}, backend=backend, limits=limits) as session:
        results = session.call_batch([("returns_big", {"size": 100_000})] * 5)
        assert [r.ok for r in results] == [True, True, False, False, False]
        assert results[2].error.startswith("output budget exhausted")
        assert session.call("returns_big", {"size": 100_000}).error.startswith(
            "output budget exhausted"
        )
        assert session.call("returns_big", {"size": 10}).ok  # what is left is still usable
        assert session.status == "ok"


def test_system_exit_and_keyboard_interrupt_are_contained(backend):
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert session.call("calls_exit", {}).error == "SystemExit: 3"
        assert session.call("keyboard_interrupt", {}).error == "KeyboardInterrupt"
        assert session.call("chatty", {}).ok


def test_environment_that_fails_to_load_is_a_status_not_an_exception(backend):
    broken = fake("sandbox_envs.py", "Broken")
    with open_session(broken, {}, backend=backend) as session:
        assert session.status == "error"
        assert session.reason == "environment failed to load: RuntimeError: cannot construct"
        assert session.call("tool", {}).error.startswith("not run: session error")
    for source in (
        EnvSource(code="class A:\n  def f(self) -> dict:\n    return {"),
        fake("sandbox_envs.py", "Missing"),
        fake("sandbox_envs.py", None),
    ):
        episode = run_episode(source, {}, [("f", {})], backend=backend)
        assert episode.status == "error"
        assert episode.final_state is None
        assert episode.results[0].error.startswith("not run")
    assert (
        "SyntaxError"
        in run_episode(EnvSource(code="class A:\n  def f(:"), {}, [], backend=backend).reason
    )


def test_single_public_class_is_found_without_a_name(backend):
    code = textwrap.dedent("""
        import json

        class _Helper:
            pass

        class Only:
            def __init__(self):
                self.items = {"a": 1}

            def get(self, key: str) -> dict:
                return {"success": True, "data": self.items.get(key)}
    """)
    episode = run_episode(
        EnvSource(code=code), {"items": {"b": 2}}, [("get", {"key": "b"})], backend=backend
    )
    assert episode.status == "ok"
    assert episode.results[0].result == {"success": True, "data": 2}
    assert episode.final_state == {"items": {"b": 2}}


def test_run_episode_collects_results_and_final_state(backend):
    episode = run_episode(
        COUNTER, {"count": 1}, [("increment", {"by": 2}), ("fail", {})], backend=backend
    )
    assert episode.status == "ok" and episode.reason is None
    assert [r.ok for r in episode.results] == [True, False]
    assert episode.final_state == {"count": 3, "log": [2]}
    assert episode.to_json()["results"][0] == {
        "tool": "increment",
        "ok": True,
        "result": {"success": True, "data": 3},
        "error": None,
    }


def test_close_releases_every_resource(backend):
    fds = open_fds()
    for _ in range(5):
        with open_session(COUNTER, {}, backend=backend) as session:
            uid = session.info["uid"]
            session.call("increment", {})
        session.close()  # twice is fine
    assert open_fds() == fds
    if backend == "bwrap" and uid != 0:
        assert processes_of(uid) == []


def test_misuse_raises_sandbox_error():
    with pytest.raises(SandboxError, match="exactly one of code, path, module"):
        EnvSource(code="x", path="y.py")
    with pytest.raises(SandboxError, match="loader"):
        EnvSource(code="x", loader="pickle")
    with pytest.raises(SandboxError, match="unknown sandbox backend"):
        open_session(COUNTER, {}, backend="vm")
    with pytest.raises(SandboxError, match="state must be a dict"):
        open_session(COUNTER, [1, 2])
    with pytest.raises(SandboxError, match="not JSON-serialisable"):
        open_session(COUNTER, {"when": object()})
    with pytest.raises(SandboxError, match="cannot read environment source"):
        open_session(EnvSource(path="/nonexistent/env.py"), {})
    with pytest.raises(SandboxError, match="positive"):
        Limits(call_timeout_s=0)


def test_a_hang_inside_a_batch_is_blamed_on_the_right_call(backend):
    spin = EnvSource(
        code=textwrap.dedent("""
        class Spin:
            def __init__(self):
                self.n = 0

            def fast(self) -> dict:
                self.n += 1
                return {"success": True, "data": self.n}

            def spin(self) -> dict:
                while True:
                    pass
    """)
    )
    with open_session(spin, {}, backend=backend, limits=FAST) as session:
        results = session.call_batch([("fast", {})] * 50 + [("spin", {}), ("fast", {})])
    # Replies are buffered inside the worker, yet all 50 arrive before the hang is blamed.
    assert [r.result["data"] for r in results[:50]] == list(range(1, 51))
    assert results[50].error == "timeout after 1s (worker killed)"
    assert results[51].error.startswith("not run")
    assert session.reason == "timeout after 1s (worker killed) during call 'spin'"


def test_worker_falls_back_to_stdlib_json_without_orjson(backend, monkeypatch):
    from sandboxes import launch as launch_module
    from sandboxes import layout

    worker_only = ((layout.Mount(str(layout.HOST_WORKER_DIR), layout.WORKER_DIR),), ())
    monkeypatch.setattr(launch_module, "runtime_mounts", lambda: worker_only)
    with open_session(COUNTER, {"count": 1}, backend=backend) as session:
        assert session.info["codec"] == "json"
        assert session.call("increment", {"by": 1}).result == {"success": True, "data": 2}
        assert [r.ok for r in session.call_batch([("increment", {}), ("fail", {})])] == [
            True,
            False,
        ]
        assert session.final_state() == {"count": 3, "log": [1, 1]}
    with open_session(CLUMSY, {}, backend=backend) as session:
        assert session.call("returns_rich", {}).result == RICH
        assert session.call("returns_object", {}).error.startswith("result is not JSON")


@pytest.mark.parametrize("ask_libc", [True, False], ids=["sched_getcpu", "proc"])
def test_the_cpu_a_session_reports_is_the_one_this_thread_runs_on(monkeypatch, ask_libc):
    """Each session tells its worker which CPU the caller is on (the worker moves off it);
    asked of the C library or read from /proc, the answer is the CPU this thread is held to."""
    from sandboxes import session as session_module

    if not ask_libc:
        monkeypatch.setattr(session_module, "_SCHED_GETCPU", None)
    else:
        assert session_module._SCHED_GETCPU is not None  # glibc has it on every Linux we run
    allowed = os.sched_getaffinity(0)
    try:
        for cpu in sorted(allowed):
            os.sched_setaffinity(0, {cpu})  # this thread only
            assert session_module._current_cpu() == cpu
    finally:
        os.sched_setaffinity(0, allowed)
