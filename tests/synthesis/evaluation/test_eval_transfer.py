"""Transfer beside the in-distribution score: a tiny build with one foreign class brought with
`--envs` (tests/fakes/foreign/library_loans.py), evaluated with the scripted capable and
weak agents (tests/fakes/eval_agents.py) against the loopback endpoint. Every episode
records its origin, and the marts, the summary and the leaderboard set the foreign
environment's score beside the synthesized ones'.

Slow tier: one build of its own (about 20 s on two cores) and two evaluations.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from synthesis.config import LLMSettings
from synthesis.evaluation.command import eval_main
from synthesis.evaluation.dataset import current_dataset, published_tasks
from synthesis.evaluation.leaderboard import leaderboard_path
from synthesis.evaluation.runner import EvalOptions, run_eval
from synthesis.evaluation.store import evals_path
from synthesis.evaluation.summary import format_summary
from tests.build_support import REPO, run_build
from tests.fakes.eval_agents import CAPABLE, WEAK, responder
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow

FOREIGN = REPO / "tests" / "fakes" / "foreign" / "library_loans.py"


def query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(evals_path(home)), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    home = tmp_path_factory.mktemp("transfer") / "home"
    built = run_build(home, extra=["--envs", str(FOREIGN), "--no-warm"])
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    tasks = published_tasks(current_dataset(home))
    with FakeOpenAIServer(responder(home / "warehouse.duckdb")) as server:
        llm = LLMSettings(base_url=server.base_url, api_key="sk-transfer", timeout_s=10.0)
        outcomes = {
            model: run_eval(home, llm, EvalOptions(model=model, split="all"), out=lambda _: None)
            for model in (CAPABLE, WEAK)
        }
    lines: list[str] = []
    code = eval_main(["--home", str(home), "--leaderboard"], out=lines.append)
    assert code == 0, "\n".join(lines)
    return SimpleNamespace(home=home, tasks=tasks, outcomes=outcomes, lines=lines)


def test_the_build_publishes_tasks_of_both_origins(evaluated):
    origins = {(t.origin, t.archetype == "foreign") for t in evaluated.tasks}
    assert origins == {("synthesized", False), ("foreign", True)}


def test_every_episode_records_the_origin_of_its_environment(evaluated):
    found = query(
        evaluated.home,
        "SELECT DISTINCT env_id, origin FROM eval_episodes ORDER BY env_id",
    )
    expected = sorted({(t.env_id, t.origin) for t in evaluated.tasks})
    assert found == expected
    assert ("library_loans", "foreign") in found


def test_the_transfer_mart_and_the_leaderboard_set_foreign_beside_synthesized(evaluated):
    found = query(
        evaluated.home,
        "SELECT model, origin, n_environments, n_tasks, n_successes, success_rate, "
        "success_rate_gap FROM mart_eval_transfer ORDER BY model, origin DESC",
    )
    per_origin: dict[str, int] = {}
    envs: dict[str, set[str]] = {}
    for t in evaluated.tasks:
        per_origin[t.origin] = per_origin.get(t.origin, 0) + 1
        envs.setdefault(t.origin, set()).add(t.env_id)
    n_syn, n_for = per_origin["synthesized"], per_origin["foreign"]
    # The capable agent replays the oracle: every task of both origins; the weak one none.
    assert found == [
        (CAPABLE, "synthesized", len(envs["synthesized"]), n_syn, n_syn, 1.0, None),
        (CAPABLE, "foreign", 1, n_for, n_for, 1.0, 0.0),
        (WEAK, "synthesized", len(envs["synthesized"]), n_syn, 0, 0.0, None),
        (WEAK, "foreign", 1, n_for, 0, 0.0, 0.0),
    ]
    board = query(
        evaluated.home,
        "SELECT model, synthesized_success_rate, foreign_success_rate FROM "
        "mart_eval_leaderboard ORDER BY model",
    )
    assert board == [(CAPABLE, 1.0, 1.0), (WEAK, 0.0, 0.0)]
    (benchmark,) = query(
        evaluated.home,
        "SELECT count(*) FROM mart_eval_benchmark WHERE origin = 'foreign' "
        "AND archetype <> 'foreign'",
    )
    assert benchmark == (0,)
    transfer = [line for line in evaluated.lines if "points" in line]
    assert [line.split()[0] for line in transfer] == [CAPABLE, WEAK]
    assert all("+0.0 points" in line for line in transfer)
    assert "Transfer to foreign environments" in leaderboard_path(evaluated.home).read_text()


def test_the_eval_summary_prints_both_origins(evaluated):
    lines = format_summary(evaluated.outcomes[WEAK].summary)
    at = lines.index("  by origin (foreign: environments brought with --envs):")
    assert [line.split()[0] for line in lines[at + 1 : at + 3]] == ["synthesized", "foreign"]
    assert all("0.0%" in line for line in lines[at + 1 : at + 3])
