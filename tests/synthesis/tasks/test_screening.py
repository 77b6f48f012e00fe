"""Screening across environments: near-duplicates and benchmark contamination quarantined."""

from __future__ import annotations

import json
import random

from synthesis.export.shards import write_shards
from synthesis.models import ToolCall, Trajectory
from synthesis.tasks.contamination import (
    benchmark_from_questions,
    bfcl_multi_turn,
    carries_content,
    contamination_reasons,
    installed_benchmarks,
)
from synthesis.tasks.dedup import duplicate_reasons, shingles
from synthesis.tasks.screening import STAGE, apply_screening, screen_tasks
from tests.fakes.forks import record_forks
from tests.fakes.screened_scenarios import TEXT
from tests.fakes.screened_scenarios import scenario as _scenario
from tests.fakes.shard_envs import shard_environment


def _other_text(i: int) -> str:
    rng = random.Random(i)
    words = [
        "cancel",
        "booking",
        "slot",
        "tuesday",
        "refund",
        "member",
        "court",
        "lesson",
        "invoice",
        "balance",
        "transfer",
        "ticket",
        "escalate",
        "agent",
        "room",
        "stock",
    ]
    return " ".join(rng.choice(words) for _ in range(25))


def test_a_planted_chain_duplicate_is_quarantined_and_the_first_kept():
    chain = [
        ToolCall(tool="find_reader_by_email", args={"email": "s@x.org"}),
        ToolCall(tool="pay_order", args={"order_id": "ORD-0005"}),
    ]
    first = _scenario("zz1", env_id="env-a", chain=chain, text=_other_text(1))
    copy = _scenario("aa2", env_id="env-b", chain=chain, text=_other_text(2))
    other_records = _scenario(
        "bb3", env_id="env-b", chain=chain, text=_other_text(3), results=[{"id": "other"}]
    )
    # Given in any order, the first by (environment, scenario id) is kept.
    reasons = duplicate_reasons([copy, other_records, first])
    assert set(reasons) == {"aa2"}
    assert reasons["aa2"].startswith("duplicate:") and "zz1" in reasons["aa2"]


def test_near_identical_text_is_a_duplicate_and_different_text_is_not():
    a = _scenario("s1", env_id="env-a")
    b = _scenario("s2", env_id="env-b", text=TEXT.replace("home address", "office address"))
    c = _scenario("s3", env_id="env-c", text=_other_text(4))
    assert len(shingles(TEXT)) > 20
    reasons = duplicate_reasons([c, b, a])
    assert set(reasons) == {"s2"}
    assert reasons["s2"].startswith("near_duplicate:") and "s1 (env-a)" in reasons["s2"]


def test_text_below_the_similarity_bar_is_kept():
    a = _scenario("s1")
    # Every fourth word changed: similar wording, a different task.
    words = TEXT.split()
    changed = " ".join(w if i % 4 else f"x{i}" for i, w in enumerate(words))
    assert duplicate_reasons([a, _scenario("s2", text=changed)]) == {}


def _bfcl_question() -> tuple[str, str]:
    benchmark = bfcl_multi_turn()
    assert benchmark is not None, "bfcl-eval is installed by make install"
    from importlib.util import find_spec
    from pathlib import Path

    data = Path(next(iter(find_spec("bfcl_eval").submodule_search_locations))) / "data"
    entry = json.loads((data / "BFCL_v4_multi_turn_base.json").read_text().splitlines()[0])
    return entry["id"], entry["question"][0][0]["content"]


def test_a_task_holding_a_bfcl_question_is_contaminated():
    question_id, question = _bfcl_question()
    planted = _scenario("p1", text=f"Hi team! {question.upper()} Thanks a lot.")
    clean = _scenario("c1")
    reasons = contamination_reasons([planted, clean], installed_benchmarks())
    assert set(reasons) == {"p1"}
    assert "BFCL multi-turn (bfcl-eval" in reasons["p1"] and question_id in reasons["p1"]
    assert reasons["p1"].startswith("contaminated:")


def test_contamination_needs_a_whole_passage():
    bench = benchmark_from_questions("B", [("q1", "one two three four five six seven eight")])
    near = _scenario("n", text="one two three four five six seven nine")
    hit = _scenario("h", text="zero one two three four five six seven eight nine")
    assert set(contamination_reasons([near, hit], [bench])) == {"h"}


def test_a_passage_of_our_own_stock_wording_is_not_contamination():
    # BFCL's "could you kindly show me the list of files" is made of words our phrasing
    # writes; the same run of words with a name in it is the benchmark's content.
    stock = "could you kindly show me the list of"
    assert not carries_content(stock)
    bench = benchmark_from_questions(
        "B", [("q1", f"{stock} files"), ("q2", "give jesse pinkman the list of his files")]
    )
    ours = _scenario("o", text=f"Hi! {stock} tickets, thanks.")
    theirs = _scenario("t", text="Please give Jesse Pinkman the list of his files today.")
    assert set(contamination_reasons([ours, theirs], [bench])) == {"t"}


def test_screening_is_deterministic_and_quarantines_with_reasons():
    _, question = _bfcl_question()
    scenarios = [
        _scenario("s1", env_id="env-a"),
        _scenario("s2", env_id="env-b", text=TEXT.replace("home", "office")),
        _scenario("s3", env_id="env-c", text=question),
        _scenario("s4", env_id="env-c", text=_other_text(9)),
        _scenario("s5", env_id="env-d", text=TEXT, status="quarantined", reason="gold_fails"),
    ]
    records = screen_tasks(scenarios, installed_benchmarks())
    shuffled = scenarios[:]
    random.Random(1).shuffle(shuffled)
    assert screen_tasks(shuffled, installed_benchmarks()) == records
    assert [(q.artifact_id, q.stage, q.reason.split(":")[0]) for q in records] == [
        ("s2", STAGE, "near_duplicate"),
        ("s3", STAGE, "contaminated"),
    ]
    screened = {s.scenario_id: s for s in apply_screening(scenarios, records)}
    assert screened["s2"].status == "quarantined" and screened["s2"].reason == records[0].reason
    assert screened["s1"].status == screened["s4"].status == "published"
    assert screened["s5"].reason == "gold_fails"  # already quarantined: left as it was


def test_shards_leave_screened_tasks_out(tmp_path):
    scenarios = [_scenario("s1"), _scenario("s2", env_id="env-b")]
    records = screen_tasks(scenarios, [])
    assert [q.artifact_id for q in records] == ["s2"]
    trajs = [
        Trajectory(
            traj_id=f"t-{s.scenario_id}",
            scenario_id=s.scenario_id,
            env_id=s.env_id,
            policy="oracle",
            reward=1.0,
            success=True,
            n_steps=1,
            messages=[],
        )
        for s in scenarios
    ]
    manifest = write_shards(
        trajs,
        tmp_path,
        seed=0,
        scenarios=apply_screening(scenarios, records),
        checks=[],
        environments=[shard_environment(e) for e in sorted({s.env_id for s in scenarios})],
    )
    rows = {f["path"]: f["rows"] for f in manifest["files"] if f["rows"] is not None}
    assert rows == {
        "sft/train.jsonl": 1,
        "sft/train.parquet": 1,
        "trajectories/train.parquet": 1,
        "rl/train.jsonl": 1,
    }
    assert "s2" not in (tmp_path / "rl/train.jsonl").read_text()


def test_distinct_tasks_are_all_kept():
    scenarios = [
        _scenario(f"s{i:04d}", env_id=f"env-{i % 7}", text=_other_text(i)) for i in range(200)
    ]
    assert duplicate_reasons(scenarios) == {}


def test_deduplicating_with_a_forked_child_finds_what_one_process_finds(monkeypatch):
    """The scenarios' sketches are made in two halves, one by a forked child; a duplicate
    pair split across the halves (and chained duplicates) must be judged as before."""
    from synthesis import forked

    scenarios = [
        _scenario(f"s{i:02d}", env_id=f"env-{i % 3}", text=_other_text(i)) for i in range(40)
    ]
    # A near copy of the first scenario at the end (the other half), a chain copy of
    # the 10th in the middle.
    scenarios.append(_scenario("t99", env_id="env-9", text=_other_text(0) + " please"))
    scenarios.append(_scenario("t50", env_id="env-5", chain=scenarios[10].gold_chain))
    children = record_forks(monkeypatch)
    with_child = duplicate_reasons(scenarios)
    assert len(children) == 1
    monkeypatch.setattr(forked, "fork", lambda work: None)  # no child: all done here
    alone = duplicate_reasons(scenarios)
    assert with_child == alone
    assert with_child["t99"].startswith("near_duplicate:") and "s00 (env-0)" in with_child["t99"]
    assert with_child["t50"].startswith("duplicate:") and "s10" in with_child["t50"]
