"""Checks that read the final workspace: the file tree the sandbox snapshots as "__workspace__".

What the gold run changed in the tree becomes one check per file or folder (this file now
holds exactly this text, that one is gone, this folder exists), plus a guard that every
other file and folder is as it was. Evaluated by the shipped module, like every check.

`file_table`, `file_json` and `file_ini` read an output file by its format (a table's rows,
a JSON value, an INI file's sections and values) rather than its bytes; they are not derived
from a gold run: a task that asks for a report or a changed setting states them itself (its
provenance's `outputs`), and they take the place of that file's byte-for-byte check. An
output `judged_by` the state has no check of its own.
"""

from __future__ import annotations

from typing import Any

from synthesis.tasks.envfoundry_reward import workspace_tree as _tree

WORKSPACE_CHECK_TYPES = (
    "file_content",
    "file_absent",
    "folder_present",
    "folder_absent",
    "no_other_file_changes",
    "file_table",
    "file_json",
    "file_ini",
)


def workspace_check_specs(
    initial: dict[str, Any], final: dict[str, Any], outputs: list[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Check specs for what changed in the workspace from `initial` to `final` (none when
    neither state has a workspace); `outputs`, the reports a task asks for, are read by
    their format (`_read_by_format`)."""
    before, after = _tree(initial), _tree(final)
    if before is None or after is None:
        return []
    (old_files, old_dirs), (new_files, new_dirs) = before, after
    specs: list[dict[str, Any]] = []
    touched: list[str] = []
    for path in sorted(set(old_files) | set(new_files)):
        if path not in new_files:
            specs.append({"type": "file_absent", "path": path})
            touched.append(path)
        elif old_files.get(path) != new_files[path]:
            specs.append({"type": "file_content", "path": path, "text": new_files[path]})
            touched.append(path)
    folders: list[str] = []
    for path in sorted(new_dirs - old_dirs):
        specs.append({"type": "folder_present", "path": path})
        folders.append(path)
    for path in sorted(old_dirs - new_dirs):
        specs.append({"type": "folder_absent", "path": path})
        folders.append(path)
    specs.append({"type": "no_other_file_changes", "files": touched, "folders": folders})
    return _read_by_format(specs, outputs) if outputs else specs


def _read_by_format(specs: list[dict[str, Any]], outputs: list[dict[str, Any]]):
    """The workspace checks with each planned output (a report the task asks for) read by
    its format instead of byte for byte: an agent's right report in its own layout earns.
    The gold run must still have written every output (the self-test proves the checks on
    it); the guard keeps allowing exactly the files the gold run changed."""
    # A file judged by what the environment reports of it (`"judged_by": "state"`: code by
    # its tests passing, the state check the gold run's diff derives) keeps no check of its
    # text, so another right fix earns too; the guard still allows it to change.
    judged = {o["path"] for o in outputs if o.get("judged_by") == "state"}
    specs = [s for s in specs if not (s["type"] == "file_content" and s["path"] in judged)]
    by_path = {o["path"]: o for o in outputs if o["path"] not in judged}
    read = [
        dict(by_path[s["path"]]) if s["type"] == "file_content" and s["path"] in by_path else s
        for s in specs
    ]
    written = {s["path"] for s in specs if s["type"] == "file_content"}
    # An output the gold run left unwritten cannot be proven: checked as planned, it fails
    # the self-test and the task is not published.
    return read + [dict(o) for path, o in sorted(by_path.items()) if path not in written]


def describe_workspace_check(spec: dict[str, Any]) -> str:
    kind = spec["type"]
    if kind == "file_content":
        lines = spec["text"].count("\n")
        return f"The file {spec['path']} exists with the expected text ({lines} line(s))."
    if kind == "file_absent":
        return f"There is no file {spec['path']} any more."
    if kind == "folder_present":
        return f"The folder {spec['path']} exists."
    if kind == "folder_absent":
        return f"The folder {spec['path']} no longer exists."
    if kind == "no_other_file_changes":
        return (
            f"Nothing else in the workspace changed: besides the {len(spec['files'])} file(s) "
            f"and {len(spec['folders'])} folder(s) the task requires, every file has its old "
            "text and no file or folder was added or removed."
        )
    if kind == "file_table":
        order = "in this order" if spec.get("ordered") else "in any order"
        return (
            f"The file {spec['path']} holds a table with the columns "
            f"{', '.join(spec['columns'])} and exactly the expected {len(spec['rows'])} "
            f"row(s), {order}."
        )
    if kind == "file_json":
        return f"The file {spec['path']} holds the expected JSON value."
    if kind == "file_ini":
        sections, keys = len(spec["sections"]), sum(map(len, spec["sections"].values()))
        return (
            f"The file {spec['path']} reads, as Python's configparser reads it, as exactly the "
            f"expected {sections} section(s) and {keys} setting(s), each with its expected value."
        )
    raise ValueError(f"unknown check type {kind!r}")
