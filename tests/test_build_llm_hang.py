"""A tiny build against an endpoint that accepts connections and never answers ends in
bounded time, with the offline artifacts intact and every LLM attempt recorded as failed
or skipped with its reason.

ENVFOUNDRY_LLM_DEADLINE_S bounds the LLM stages of the whole build (the budget account file
keeps the build's start, shared by every process): a request is sent with at most the time
left, and after the deadline every call is skipped at once (the deadline is checked before
the build-wide breaker, so it is the reason here). So the hang costs at most the deadline on
top of an offline build. The wall bound is the issue's 5 minutes; the load-independent bound
is asserted from the ledger: no request waited past the deadline.

With default settings (no deadline set, 60 s request timeout) the same tiny build with the
whole shipped catalogue ended ok in 178 s on a quiet 2-core machine against an offline tiny
build's ~50 s: the first two unanswered requests open the build-wide breaker and every
stage stops (measured with this test's build, default settings and no --catalogue).
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from tests.build_support import query, run_build, small_catalogue
from tests.fakes.llm_build import STAGES
from tests.fakes.silent_server import SilentServer

pytestmark = pytest.mark.slow

DEADLINE_S = 10
# One catalogue topic keeps the offline part of the build short (CI budget); the mined topic
# and the model-written environments never come, the endpoint answering nothing.
CATALOGUE = ("audio_gear",)
WALL_BOUND_S = 300  # the 5 minutes; offline tiny build measured at 161 s
SLACK_S = 10  # a request's own timeout is cut at the deadline; scheduling may add a little


def test_a_hanging_endpoint_costs_at_most_the_deadline(tmp_path):
    home = tmp_path / "home"
    with SilentServer() as server:
        started = time.monotonic()
        proc = run_build(
            home,
            extra=["--catalogue", str(small_catalogue(tmp_path / "catalogue.json", CATALOGUE))],
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "sk-hang",
                "ENVFOUNDRY_LLM_DEADLINE_S": str(DEADLINE_S),
            },
        )
        seconds = time.monotonic() - started
        assert server.accepted > 0  # requests really went out and hung
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert seconds < WALL_BOUND_S, f"build took {seconds:.0f}s"

    # Offline artifacts intact: tasks published with their offline text and the reason.
    texts = query(home, "SELECT status, provenance_json FROM scenarios")
    assert texts and any(status == "published" for status, _ in texts)
    for _, provenance in texts:
        provenance = json.loads(provenance)
        assert provenance["text_source"] == "offline"
        assert provenance["text_fallback_reason"].startswith("task_text: ")
    assert query(home, "SELECT count(*) FROM trajectories WHERE policy LIKE 'llm:%'") == [(0,)]
    (oracle,) = query(home, "SELECT bool_and(success) FROM trajectories WHERE policy = 'oracle'")[0]
    assert oracle

    # Every attempt is a ledger row that failed or was skipped, with its reason.
    calls = query(home, "SELECT stage, status, reason, created_at FROM llm_calls")
    # Every stage asked, or was stopped before it could; the simulated user speaks only
    # after an agent's turn, and no agent turn was ever answered.
    stopped = {stage for stage, *_ in calls}
    # project_topic writes the folder of a mined project topic: a hanging endpoint mines none.
    assert stopped == STAGES - {"user_sim", "project_topic"}
    assert {status for _, status, *_ in calls} <= {"retried", "failed", "skipped"}
    assert all(reason for _, _, reason, _ in calls)
    assert any(reason.startswith("deadline:") for _, _, reason, _ in calls)
    # Load-independent: nothing was waiting on the endpoint past the deadline.
    first = min(at for *_, at in calls)
    waited = [at for _, status, _, at in calls if status != "skipped"]
    assert max(waited) - first <= timedelta(seconds=DEADLINE_S + SLACK_S)

    # The summary says which stages stopped and why.
    for stage in stopped:
        line = f"LLM: {stage} stopped at the deadline (ENVFOUNDRY_LLM_DEADLINE_S={DEADLINE_S})"
        assert line in proc.stdout
