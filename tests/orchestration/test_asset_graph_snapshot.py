"""The loaded asset graph matches its reviewed snapshot, so graph changes show up in review.

After an intended change, regenerate with: ENVFOUNDRY_UPDATE_SNAPSHOT=1 pytest <this file>
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("asset_graph.snapshot.txt")


def describe_graph(defs) -> str:
    graph = defs.resolve_asset_graph()
    lines = []
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        if not node.is_materializable:
            continue
        parts = node.partitions_def.name if node.partitions_def is not None else "-"
        parents = ",".join(sorted(p.to_user_string() for p in node.parent_keys)) or "-"
        lines.append(
            f"{key.to_user_string()} group={node.group_name} partitions={parts} parents={parents}"
        )
    for check in sorted(graph.asset_check_keys, key=lambda c: c.to_user_string()):
        blocking = graph.get_check_spec(check).blocking
        lines.append(f"check {check.to_user_string()} blocking={blocking}")
    return "\n".join(lines) + "\n"


def test_asset_graph_matches_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    from orchestration.definitions import build_definitions

    current = describe_graph(build_definitions())
    if os.environ.get("ENVFOUNDRY_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(current)
    if not SNAPSHOT.exists():
        pytest.fail(f"no snapshot yet: run with ENVFOUNDRY_UPDATE_SNAPSHOT=1 to write {SNAPSHOT}")
    assert current == SNAPSHOT.read_text(), "asset graph changed: review and update the snapshot"
