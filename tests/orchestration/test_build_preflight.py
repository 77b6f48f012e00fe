"""`envfoundry build` refuses what it cannot build before it builds anything, in one line."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import sandboxes.backends as backends
from orchestration import build_process, cli, console
from synthesis import codec


@pytest.fixture
def no_bwrap(monkeypatch):
    """A host where bubblewrap cannot run (a laptop without it, a locked-down container)."""
    monkeypatch.setattr(backends, "default_backend", lambda: "process")
    monkeypatch.setattr(backends, "unavailable_reason", lambda name: "bwrap is not installed")


FOREIGN = "tests/fakes/foreign/library_loans.py"


def test_code_we_did_not_compile_never_runs_on_the_process_backend_unasked(no_bwrap):
    problem = build_process.preflight([FOREIGN], "none", "auto")
    assert problem is not None
    assert "without a real sandbox (bwrap is not installed)" in problem
    assert "--sandbox process" in problem
    # Asked for by name, it is the user's call; our own compiled code needs no real sandbox.
    assert build_process.preflight([FOREIGN], "none", "process") is None
    assert build_process.preflight([], None, "auto") is None


def test_a_refused_build_exits_2_with_one_line_and_builds_nothing(no_bwrap, tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(console, "terminal", Console(file=screen, width=80))
    home = tmp_path / "home"
    code = cli.main(["build", "--home", str(home), "--catalogue", "none", "--envs", FOREIGN])
    out = screen.getvalue()
    assert code == 2
    assert out.count("\n") == 1 and "envfoundry build: refused" in out
    assert "Traceback" not in out
    assert not home.exists()


@pytest.mark.parametrize(
    ("envs", "catalogue", "message"),
    [
        (["no/such/env.py"], "none", "no/such/env.py: no such file"),
        (["tests/fakes/foreign/library_loans.py:NoSuchClass"], "none", "no class named"),
        ([], "CATALOGUE", "names unknown archetype 'bokking'"),
        ([], "none", "nothing to build"),
    ],
)
def test_bad_sources_and_catalogues_are_named(tmp_path, envs, catalogue, message):
    if catalogue == "CATALOGUE":
        path = tmp_path / "topics.json"
        codec.write_json(
            path, {"topics": [{"topic_id": "t", "title": "T", "archetype": "bokking"}]}
        )
        catalogue = str(path)
    problem = build_process.preflight(
        [build_process._absolute_source(e) for e in envs], catalogue, "auto"
    )
    assert problem is not None and message in problem


def test_a_missing_corpus_is_refused_before_anything_is_built(tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(console, "terminal", Console(file=screen, width=120))
    home = tmp_path / "home"
    code = cli.main(["build", "--home", str(home), "--corpus", str(tmp_path / "nope.jsonl")])
    assert code == 2
    assert "--corpus" in screen.getvalue() and "no such file" in screen.getvalue()
    assert not home.exists()
    # 'none' and an existing file pass the check.
    assert build_process.check_corpus("none") is None
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "r1", "request": "cancel my booking"}\n')
    assert build_process.check_corpus(str(corpus)) is None
