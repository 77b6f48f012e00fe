"""Workspace episodes: seeded files, the built-in file and shell tools, the final snapshot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import FAST, fake

from sandboxes import WORKSPACE_KEY, open_session, run_episode
from sandboxes.inside import workspace_tools

REPO = Path(__file__).resolve().parents[2]

NOTES = fake("sandbox_envs.py", "Notes")
SEED = {
    WORKSPACE_KEY: {
        "files": {"todo.txt": "buy milk\nwrite tests\n", "docs/readme.md": "# hello world"},
        "dirs": ["empty"],
    }
}


def test_seeded_files_tools_and_snapshot(backend):
    with open_session(NOTES, SEED, backend=backend, limits=FAST) as session:
        assert {
            "list_files",
            "read_file",
            "write_file",
            "delete_file",
            "run_shell",
            "count_words",
        } <= set(session.tools)
        assert session.call("list_files", {}).result == {
            "success": True,
            "data": ["docs/readme.md", "todo.txt"],
        }
        assert session.call("read_file", {"path": "todo.txt"}).result["data"].startswith("buy")
        assert session.call("count_words", {"path": "todo.txt"}).result == {
            "success": True,
            "data": 4,
        }
        assert session.call("write_file", {"path": "out/report.txt", "content": "done"}).ok
        shell = session.call("run_shell", {"command": "cat out/report.txt; echo; ls | wc -l"})
        assert shell.result["data"]["output"] == "done\n4\n"
        assert shell.result["data"]["exit_code"] == 0
        assert session.call("delete_file", {"path": "todo.txt"}).result["success"]
        final = session.final_state()
    assert final["opened"] == 1
    assert final[WORKSPACE_KEY] == {
        "files": {"docs/readme.md": "# hello world", "out/report.txt": "done"},
        "dirs": ["docs", "empty", "out"],
        "symlinks": {},
        "skipped": {},
    }


def test_path_escapes_are_refused_by_the_tools(backend):
    with open_session(NOTES, SEED, backend=backend) as session:
        for path in ("/etc/passwd", "../outside.txt", "docs/../../x"):
            outcome = session.call("write_file", {"path": path, "content": "x"}).result
            assert outcome["success"] is False, path
        assert not session.call("read_file", {"path": "../../etc/shadow"}).result["success"]
        assert not session.call("delete_file", {"path": "."}).result["success"]


def test_shell_timeout_and_output_cap_are_contained(backend):
    with open_session(NOTES, SEED, backend=backend, limits=FAST) as session:
        slow = session.call("run_shell", {"command": "sleep 30", "timeout_s": 0.3}).result
        assert slow["success"] is False and slow["data"]["timed_out"]
        flood = session.call("run_shell", {"command": "yes"}).result
        assert flood["data"]["truncated"] and len(flood["data"]["output"]) == 64 * 1024
        assert session.status == "ok"


def test_binary_and_large_files_are_listed_as_skipped(backend):
    with open_session(NOTES, SEED, backend=backend) as session:
        session.call(
            "run_shell",
            {"command": "head -c 300000 /dev/zero > big.txt; printf '\\377\\376' > blob.bin"},
        )
        snapshot = session.final_state()[WORKSPACE_KEY]
    assert snapshot["skipped"] == {
        "big.txt": "too large (300000 bytes)",
        "blob.bin": "binary or unreadable (2 bytes)",
    }


def test_temporary_workspace_is_removed_and_given_workspace_is_returned(backend, tmp_path):
    with open_session(NOTES, SEED, backend=backend) as session:
        temporary = session.workspace_path
        assert session.has_workspace
        if backend == "docker":
            # A docker episode's own workspace is a tmpfs of its container, so that a step
            # process in a container can start it as a sibling: there is no host directory.
            assert temporary is None
        else:
            assert temporary.is_dir()
    assert temporary is None or not temporary.exists()

    given = tmp_path / "ws"
    given.mkdir()
    (given / "existing.txt").write_text("from the caller")
    episode = run_episode(
        NOTES,
        {},
        [
            ("write_file", {"path": "new.txt", "content": "hi"}),
            ("read_file", {"path": "existing.txt"}),
        ],
        backend=backend,
        workspace=given,
    )
    assert episode.results[1].result["data"] == "from the caller"
    assert episode.final_state[WORKSPACE_KEY]["files"] == {
        "existing.txt": "from the caller",
        "new.txt": "hi",
    }
    # Everything is handed back to its owner once the episode is over.
    owners = {os.lstat(p).st_uid for p in (given, given / "new.txt", given / "existing.txt")}
    assert owners == {os.getuid()}


# Seeding, in this process: the tree a state's __workspace__ describes, written at the start of
# every episode of a workspace environment (sandboxes/inside/workspace_tools.seed).

SPEC = {
    "dirs": ["empty", "deep/er/est", "./dotted/"],
    "files": {
        "top.txt": "top\r\nline two\n",
        "docs/a.md": "# a",
        "docs/b.md": "é ü 東京",
        "docs/sub/../c.md": "c",
        "./lead.txt": "",
        "x/y/z/w.txt": "w" * 70_000,  # more than one pipe-sized write
    },
}


def _tree(root) -> dict:
    """Every file's bytes and mode and every directory's mode, by relative path."""
    tree = {}
    for current, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(current, name)
            content = None if name in dirs else Path(path).read_bytes()
            tree[os.path.relpath(path, root)] = (os.lstat(path).st_mode, content)
    return tree


def test_seeding_makes_the_tree_the_workspace_tools_would(tmp_path):
    seeded, written = tmp_path / "seeded", tmp_path / "written"
    seeded.mkdir()
    written.mkdir()
    workspace_tools.seed(str(seeded), SPEC)
    tools = workspace_tools.WorkspaceTools(str(written), 1.0)
    for rel in SPEC["dirs"]:
        os.makedirs(tools._resolve(rel), exist_ok=True)
    for rel, content in SPEC["files"].items():
        assert tools.write_file(rel, content)["success"], rel
    assert _tree(seeded) == _tree(written)
    assert (seeded / "docs" / "c.md").read_text() == "c"
    assert workspace_tools.snapshot(str(seeded), 10**6)["dirs"] == [
        "deep", "deep/er", "deep/er/est", "docs", "dotted", "empty", "x", "x/y", "x/y/z",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"files": {"../out.txt": "x"}}, "cannot seed '../out.txt': path escapes the workspace"),
        ({"files": {"a/../../out.txt": "x"}}, "path escapes the workspace"),
        ({"files": {"/etc/out.txt": "x"}}, "path must be relative to the workspace"),
        ({"dirs": ["../d"]}, "cannot seed '../d': path escapes the workspace"),
        ({"files": {".": "x"}}, "cannot seed '.': it is the workspace itself"),
        ({"files": {"a.txt": 3}}, "cannot seed 'a.txt': content must be a string"),
        ({"files": {"a.txt": "\ud800"}}, "cannot seed 'a.txt': 'utf-8' codec can't encode"),
        ({"files": {"a/b.txt": "x", "a": "x"}}, "cannot seed 'a/b.txt': Not a directory"),
        ({"dirs": "abc"}, "__workspace__.dirs must list paths"),
    ],
)
def test_seeding_refuses_what_it_cannot_write_inside_the_workspace(tmp_path, spec, reason):
    root = tmp_path / "ws"
    root.mkdir()
    with pytest.raises(ValueError, match=re.escape(reason)):
        workspace_tools.seed(str(root), spec)
    assert not (tmp_path / "out.txt").exists() and not (tmp_path / "d").exists()


def test_seeding_never_follows_a_symlink_already_in_the_workspace(tmp_path):
    """A workspace the caller gives may hold links: a path through one, or onto one, fails
    and writes nothing where it points."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    (root / "door").symlink_to(outside)
    (root / "keep.txt").symlink_to(outside / "keep.txt")
    through = {"files": {"door/new.txt": "x"}}
    for spec in (through, {"files": {"keep.txt": "x"}}, {"dirs": ["door/d"]}):
        with pytest.raises(ValueError, match="cannot seed"):
            workspace_tools.seed(str(root), spec)
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "kept"


def test_seeding_a_wide_and_deep_tree_holds_few_descriptors(tmp_path):
    """A sandbox worker may have 64 open files (sandboxes/limits.py); seeding must not keep
    one per directory."""
    spec = {
        "dirs": [f"d{i:03}" for i in range(100)] + ["/".join(["n"] * 40)],
        "files": {f"d{i:03}/f.txt": str(i) for i in range(100)},
    }
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))\n"
        "from sandboxes.inside.workspace_tools import seed\n"
        f"seed(sys.argv[1], {spec!r})\n"
    )
    root = tmp_path / "ws"
    root.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert (root / "d099" / "f.txt").read_text() == "99"
    assert (root / "/".join(["n"] * 40)).is_dir()
