"""A trainer grades a workspace rollout with the shipped reward module's own snapshot of the
final workspace; the build graded the same tasks on the sandbox worker's snapshot. Two views
of one tree would score one rollout two ways, so the two must agree on every kind of entry."""

from __future__ import annotations

import os

from sandboxes.inside.workspace_tools import SNAPSHOT_BUDGET_BYTES, snapshot
from sandboxes.limits import Limits
from synthesis.tasks import envfoundry_reward


def test_the_reward_modules_snapshot_is_the_sandboxes(tmp_path):
    root = tmp_path / "workspace"
    (root / "docs" / "deep" / "deeper").mkdir(parents=True)
    (root / "empty").mkdir()
    (root / "notes.md").write_text("# Notes\nsecond line\n")
    (root / "docs" / "café ünïcode.txt").write_text("naïve text\n")
    (root / "docs" / "deep" / "deeper" / "data.csv").write_text("a,b\n1,2\n")
    (root / "image.bin").write_bytes(bytes(range(256)))
    (root / "huge.log").write_text("x" * (256 * 1024 + 1))  # over the per-file limit
    for n in range(5):  # together over the snapshot's budget: the later ones are skipped
        (root / f"part{n}.txt").write_text("y" * 150_000)
    (root / "link-inside").symlink_to("notes.md")
    (root / "link-outside").symlink_to("/etc/passwd")  # recorded, never followed
    (root / "dangling").symlink_to("no/such/file")
    os.mkfifo(root / "pipe")  # not a regular file: never opened

    shipped = envfoundry_reward._snapshot_workspace(str(root))
    sandbox = snapshot(str(root), SNAPSHOT_BUDGET_BYTES)
    assert shipped == sandbox
    # The tree has every case the snapshot distinguishes, so the equality is not trivial.
    reasons = set(sandbox["skipped"].values())
    assert {"not a regular file", "snapshot size budget exhausted"} <= reasons
    assert any(r.startswith("too large") for r in reasons)
    assert any(r.startswith("binary") for r in reasons)
    assert sandbox["symlinks"]["link-outside"] == "/etc/passwd"
    assert "docs/deep/deeper/data.csv" in sandbox["files"] and "empty" in sandbox["dirs"]


def test_the_budget_the_reward_module_assumes_is_the_sandboxes():
    assert envfoundry_reward._SNAPSHOT_BUDGET_BYTES == SNAPSHOT_BUDGET_BYTES
    assert SNAPSHOT_BUDGET_BYTES <= Limits().max_message_bytes // 2
