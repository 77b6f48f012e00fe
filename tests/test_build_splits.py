"""The shared tiny build's shapes, splits and screening, read back from its warehouse."""

from __future__ import annotations

import pytest

from synthesis import codec
from synthesis.tasks.screening import STAGE
from tests.build_support import query

pytestmark = pytest.mark.slow


def test_every_accepted_environment_has_a_shape_a_tool_graph_and_a_split(tiny_home):
    home, _ = tiny_home
    rows = query(
        home,
        "SELECT env_id, program_shape, tool_graph, split FROM environments "
        "WHERE status = 'accepted' ORDER BY env_id",
    )
    assert rows
    for env_id, shape, graph, split in rows:
        assert len(shape) == 16 and len(graph) == 16 and split in ("train", "test"), env_id
    # The closing figures are plain counts.
    (shapes, graphs) = query(
        home,
        "SELECT count(DISTINCT program_shape), count(DISTINCT tool_graph) FROM environments "
        "WHERE status = 'accepted'",
    )[0]
    assert 1 <= shapes <= len(rows) and 1 <= graphs <= len(rows)


def test_no_program_shape_is_on_both_sides_and_tasks_follow_their_environment(tiny_home):
    home, _ = tiny_home
    assert (
        query(
            home,
            "SELECT program_shape FROM environments WHERE status = 'accepted' "
            "GROUP BY program_shape HAVING count(DISTINCT split) > 1",
        )
        == []
    )
    mismatched = query(
        home,
        "SELECT s.scenario_id FROM scenarios AS s JOIN environments AS e USING (env_id) "
        "WHERE s.split <> e.split",
    )
    assert mismatched == []
    (n,) = query(home, "SELECT count(*) FROM scenarios")[0]
    assert n > 0


def test_screened_tasks_are_quarantined_with_reasons_and_left_out_of_the_shards(tiny_home):
    home, _ = tiny_home
    (path,) = (home / "artifacts" / "task_screening").glob("*.json")
    artifact = codec.read_json(path)
    screened = {q["artifact_id"]: q["reason"] for q in artifact["quarantine"]}
    rows = query(
        home,
        f"SELECT artifact_id, reason FROM quarantine WHERE stage = '{STAGE}' ORDER BY 1",
    )
    assert dict(rows) == screened
    for scenario_id, reason in screened.items():
        ((status, why),) = query(
            home, f"SELECT status, reason FROM scenarios WHERE scenario_id = '{scenario_id}'"
        )
        assert status == "quarantined" and why == reason
    shipped = set()
    for path in (home / "shards" / "rl").glob("*.jsonl"):
        shipped |= {codec.loads(line)["scenario_id"] for line in path.read_text().splitlines()}
    published = {
        r[0] for r in query(home, "SELECT scenario_id FROM scenarios WHERE status = 'published'")
    }
    assert shipped == published and not shipped & set(screened)
