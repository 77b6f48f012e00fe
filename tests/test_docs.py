"""Every fenced code block of README.md and docs/*.md runs here, so the docs cannot rot.

A fence says what its block is. ```python and ```sh / ```bash blocks run, one process
each, in a checkout whose `var` is a copy of the suite's tiny build (`var` is the default
home, so the docs' commands read as a user types them after `make run`), with the venv's
`envfoundry` and `python` first on PATH. ```json blocks must parse. ```text blocks are
pictures, layouts and printed output, never code. A block that cannot run here says why in
an HTML comment on the line before its fence, `<!-- not run: REASON -->`, and is reported
as skipped with that reason. Links must point at files in the repo.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN = {"python", "sh", "bash"}
PARSE = {"json"}
SHOWN = {"text"}
# What a page may grow to before it stops being read (the issue "A house the next engineer
# can carry on" set these).
LINE_BUDGETS = {"README.md": 300, "docs/architecture.md": 400}

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<lang>[^`\s]*)\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
BLOCK_TIMEOUT_S = 120


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    not_run: str | None  # the reason, when the line before the fence says it is not run

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _closes(line: str, fence: str) -> bool:
    bare = line.strip()
    return len(bare) >= len(fence) and set(bare) == {fence[0]}


def blocks_of(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], fence)), None)
        assert end is not None, f"{page.relative_to(REPO)}:{i + 1}: a fence that never closes"
        body = [line[indent:] if line[:indent].isspace() else line for line in lines[i + 1 : end]]
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = NOT_RUN.match(before)
        found.append(
            Block(
                page,
                i + 1,
                opening["lang"].lower(),
                "\n".join(body) + "\n",
                marker["reason"].strip() if marker else None,
            )
        )
        i = end + 1
    return found


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def _blocks(langs: set[str]) -> list:
    return [pytest.param(b, id=b.name) for b in BLOCKS if b.lang in langs]


def test_blocks_are_read_with_their_language_line_and_reason(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n<!-- not run: it serves until stopped -->\n\n```sh\nmake ui\n```\n"
        "  ```python\n  print(1)\n\n  ```\n````text\n```\nnested\n````\n"
    )
    blocks = blocks_of(page)
    assert [(b.line, b.lang, b.code, b.not_run) for b in blocks] == [
        (5, "sh", "make ui\n", "it serves until stopped"),
        (8, "python", "print(1)\n\n", None),
        (12, "text", "```\nnested\n", None),
    ]


def test_every_fence_says_what_it_holds_and_every_skip_why():
    unnamed = [b.name for b in BLOCKS if b.lang not in RUN | PARSE | SHOWN]
    assert not unnamed, f"fences without a known language ({sorted(RUN | PARSE | SHOWN)})"
    assert not [b.name for b in BLOCKS if b.not_run == ""], "a `not run:` with no reason"
    assert not [b.name for b in BLOCKS if b.not_run and b.lang not in RUN], (
        "`not run:` marks only blocks that would run"
    )
    for page in PAGES:
        text = page.read_text().splitlines()
        markers = [n for n, line in enumerate(text, 1) if NOT_RUN.match(line)]
        marked = {b.line for b in BLOCKS if b.page == page and b.not_run is not None}
        # Each marker sits right before the fence it explains (blank lines allowed).
        for n in markers:
            fence = next(m for m in range(n, len(text)) if text[m].strip())
            assert fence + 1 in marked, f"{page.relative_to(REPO)}:{n}: marks no code block"


def test_pages_keep_to_their_budget():
    for rel, budget in LINE_BUDGETS.items():
        lines = len((REPO / rel).read_text().splitlines())
        assert lines <= budget, f"{rel} is {lines} lines; keep it to {budget}"


def test_links_point_at_files_in_the_repo():
    broken = []
    for page in PAGES:
        prose = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for match in LINK.finditer(prose):
            target = match["target"].split("#", 1)[0]
            if not target or re.match(r"[a-z]+:", target):
                continue  # an anchor on the page, or a web address
            path = (page.parent / target).resolve()
            if not path.is_relative_to(REPO) or not path.exists():
                broken.append(f"{page.relative_to(REPO)}: {match['target']}")
    assert not broken


@pytest.mark.parametrize("block", _blocks(PARSE))
def test_json_blocks_parse(block: Block):
    json.loads(block.code)


@pytest.fixture(scope="module")
def checkout(tiny_home, tmp_path_factory) -> Path:
    """The repo's files (linked) with `var` a copy of the tiny build: blocks may write files
    in it, and nothing they do reaches the shared home or the checkout's own var."""
    home, _ = tiny_home
    root = tmp_path_factory.mktemp("docs-checkout")
    for entry in REPO.iterdir():
        if entry.name not in {"var", ".git"}:
            (root / entry.name).symlink_to(entry)
    # The Dagster instance and the logs are the build's, not its dataset's: no block reads them.
    shutil.copytree(
        home,
        root / "var",
        symlinks=True,
        ignore=lambda folder, names: (
            {"dagster", "logs"} & set(names) if Path(folder) == home else set()
        ),
    )
    return root


def _environment(root: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "DO_NOT_TRACK": "1",
        "ENVFOUNDRY_HOME": str(root / "var"),
    }
    for name in ("DAGSTER_HOME", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PYTHONPATH"):
        env.pop(name, None)  # the docs' blocks run offline, as a fresh shell would
    return env


@functools.cache
def _has_command(*argv: str) -> bool:
    return (
        subprocess.run(
            [Path(sys.executable).parent / argv[0], *argv[1:], "--help"],
            capture_output=True,
            timeout=60,
        ).returncode
        == 0
    )


# Commands another change is adding: a block using one is skipped, saying so, until it lands.
ARRIVING = {"envfoundry env list": ("envfoundry", "env", "list")}


@pytest.mark.slow  # it needs the tiny build; the checks above are the fast tier's
@pytest.mark.parametrize("block", _blocks(RUN))
def test_block_runs(block: Block, checkout: Path):
    if block.not_run:
        pytest.skip(f"{block.name}: not run: {block.not_run}")
    for command, argv in ARRIVING.items():
        if command in block.code and not _has_command(*argv):
            pytest.skip(f"{block.name}: `{command}` is not in this checkout yet")
    suffix = ".py" if block.lang == "python" else ".sh"
    script = checkout / f"block-{block.page.stem}-{block.line}{suffix}"
    script.write_text(block.code)
    argv = (
        [sys.executable, script.name]
        if block.lang == "python"
        else ["bash", "-e", "-o", "pipefail", script.name]
    )
    proc = subprocess.run(
        argv,
        cwd=checkout,
        env=_environment(checkout),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"{block.name} exited {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}"
    )
