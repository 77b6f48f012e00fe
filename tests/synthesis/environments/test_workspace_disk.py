"""The disk backend of generated workspace classes answers as the plain file API would.

Its `_read`, `_is_file`, `_is_dir` and `_entries` take shortcuts (an unbuffered read decoded
by hand, one lstat, the entry kinds that come with a directory listing) because `grep` and
`tree` read the whole tree on every call. Here a class compiled from a real spec runs, in
this process (our compiler's code), next to the same class with the obvious backend (a
text-mode file object, os.path's predicates, a stat per entry), on a tree with what the
shortcuts could get wrong: CRLF and lone-CR line endings, a file that is not UTF-8, symlinks
to a file, to a folder and to nothing, nested folders, case folding that changes length.
"""

from __future__ import annotations

import json
import os

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.specgen import generate_spec
from synthesis.environments.workspace_code import compile_workspace
from synthesis.models import Topic

TOPIC = next(
    Topic.model_validate(t)
    for t in json.loads((DATA_DIR / "topics.json").read_text())["topics"]
    if t["topic_id"] == "log_archive"
)
READING = ("ls", "tree", "cat", "head", "tail", "wc", "grep", "find", "stat")


@pytest.fixture(scope="module")
def classes():
    """(the generated class, the same class with the obvious backend)."""
    spec = generate_spec(TOPIC)
    assert set(READING) <= {t.name for t in spec.tools}
    namespace: dict = {}
    exec(compile(compile_workspace(spec), "<environment>", "exec"), namespace)
    generated = namespace[spec.class_name]

    class Plain(generated):
        """The backend written the obvious way."""

        def _read(self, path):
            with open(self._full(path), encoding="utf-8") as handle:
                return handle.read()

        def _is_file(self, path):
            full = self._full(path)
            return os.path.isfile(full) and not os.path.islink(full)

        def _is_dir(self, path):
            full = self._full(path)
            return os.path.isdir(full) and not os.path.islink(full)

        def _entries(self, path):
            prefix = "" if path == "." else path + "/"
            return [(name, self._is_dir(prefix + name)) for name in self._listdir(path)]

    return generated, Plain


def _tree(root):
    files = {
        "notes/crlf.txt": b"Status: open\r\nOwner: Ana\r\n\r\nStrasse 5\r\n",
        "notes/cr.txt": b"Status: closed\rOwner: Bo\r",
        "notes/deep/er/leaf.md": "Stra\u00dfe 9\nsecond line\n".encode(),
        "latin1.txt": "caf\u00e9".encode("latin-1"),
        "top.txt": b"nothing to see\n",
    }
    for path, data in files.items():
        os.makedirs(os.path.dirname(root / path) or root, exist_ok=True)
        (root / path).write_bytes(data)
    (root / "empty").mkdir()
    os.symlink("top.txt", root / "link-to-file")
    os.symlink("notes", root / "link-to-folder")
    os.symlink("missing", root / "dangling")


def _answer(obj, verb, args):
    try:
        return getattr(obj, verb)(**args)
    except Exception as exc:  # the worker turns a raising tool into an error reply
        return ("raised", type(exc).__name__)


CALLS = [
    ("ls", {}),
    ("ls", {"folder": "notes"}),
    ("ls", {"folder": "link-to-folder"}),
    ("tree", {}),
    ("tree", {"folder": "notes"}),
    ("cat", {"path": "notes/crlf.txt"}),
    ("cat", {"path": "notes/cr.txt"}),
    ("cat", {"path": "latin1.txt"}),
    ("cat", {"path": "link-to-file"}),
    ("cat", {"path": "empty"}),
    ("head", {"path": "notes/crlf.txt", "lines": 2}),
    ("tail", {"path": "notes/cr.txt", "lines": 1}),
    ("wc", {"path": "notes/deep/er/leaf.md"}),
    ("grep", {"pattern": "status", "folder": "notes"}),
    ("grep", {"pattern": "STRASSE", "folder": "notes"}),
    ("grep", {"pattern": "owner: bo", "folder": "notes"}),
    ("grep", {"pattern": "open\nOwner", "folder": "notes"}),
    ("grep", {"pattern": "nothing"}),
    ("find", {"name": "LINK"}),
    ("find", {"name": ".txt"}),
    ("stat", {"path": "notes"}),
    ("stat", {"path": "link-to-folder"}),
    ("stat", {"path": "dangling"}),
    ("stat", {"path": "top.txt"}),
]


@pytest.mark.parametrize("verb,args", CALLS, ids=[f"{v}-{i}" for i, (v, _) in enumerate(CALLS)])
def test_the_disk_backend_answers_as_the_plain_file_api(classes, tmp_path, monkeypatch, verb, args):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    generated, plain = classes
    ours, theirs = _answer(generated(), verb, args), _answer(plain(), verb, args)
    assert ours == theirs


def test_the_shortcuts_see_line_endings_symlinks_and_folding_as_the_file_api_does(
    classes, tmp_path, monkeypatch
):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    generated, _ = classes
    env = generated()
    assert env.cat("notes/crlf.txt")["data"] == "Status: open\nOwner: Ana\n\nStrasse 5\n"
    assert env.cat("notes/cr.txt")["data"] == "Status: closed\nOwner: Bo\n"
    # A file that is not UTF-8 text (a .pyc, latin-1 bytes) or not readable (a dangling link)
    # is passed over, as grep -I and -s pass them over:
    # the search of the rest still answers.
    assert env.grep("nothing")["data"] == [
        "link-to-file:1:nothing to see",
        "top.txt:1:nothing to see",
    ]
    # A symlink is never a folder: tree lists it as a path and does not descend into it.
    assert "link-to-folder" in env.tree()["data"]
    assert not any(p.startswith("link-to-folder/") for p in env.tree()["data"])
    assert env.ls()["data"] == [
        "dangling", "empty/", "latin1.txt", "link-to-file", "link-to-folder", "notes/", "top.txt",
    ]  # fmt: skip
    # "STRASSE" folds to "strasse", as "Straße" does: found in both files, line by line.
    assert env.grep("STRASSE", "notes")["data"] == [
        "notes/crlf.txt:4:Strasse 5",
        "notes/deep/er/leaf.md:1:Stra\u00dfe 9",
    ]
    assert env.grep("open\nOwner", "notes")["data"] == []
    with pytest.raises(UnicodeDecodeError):
        env.cat("latin1.txt")
