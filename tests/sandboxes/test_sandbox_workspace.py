"""Workspace episodes: seeded files, the built-in file and shell tools, the final snapshot."""

from __future__ import annotations

import os

from sandbox_helpers import FAST, fake

from sandboxes import WORKSPACE_KEY, open_session, run_episode

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
