"""A project folder: the ledgers and the parts beside them, as one workspace tree.

The ledgers come first, from the seed itself (so a folder made before any further part
existed is made the same today), over the half year `folder_half` draws from a seed of its
own (a folder of the first half is the folder it was before halves were drawn). Every
further part draws from a seed of its own, derived from the folder's seed and the part's
name: adding or changing a part leaves the others' files alone. A part returns its files,
what they were made from (its `truth`, which the planners read) and, optionally, a section
for the README, which tells a reader the rules the part's files follow.
"""

from __future__ import annotations

import posixpath
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.projects.code_project import code_project
from synthesis.environments.projects.ledgers import Ledger, ledger_files
from synthesis.environments.projects.reference_data import reference_data
from synthesis.environments.projects.service_config import service_config
from synthesis.environments.projects.service_logs import service_logs
from synthesis.hashing import derive_seed


@dataclass(frozen=True)
class Part:
    """What one part adds to a folder."""

    files: dict[str, str]
    truth: Any = None
    readme: str = ""


# (name, maker): a maker is `(vocabulary, ledger, rng) -> Part`. The name seeds the part's
# draw and keys its truth in `Project.parts`; never rename one (its files would change).
PartMaker = Callable[[dict[str, Any], Ledger, random.Random], Part]
PARTS: tuple[tuple[str, PartMaker], ...] = (
    ("code_project", code_project),
    ("reference_data", reference_data),
    ("service_config", service_config),
    ("service_logs", service_logs),
)


@dataclass(frozen=True)
class Project:
    files: dict[str, str]
    dirs: list[str]
    ledger: Ledger
    parts: dict[str, Any] = field(default_factory=dict)  # part name -> its truth

    def tree(self) -> dict[str, Any]:
        """The workspace as the sandbox snapshot reports it (the "__workspace__" value)."""
        return {
            "files": dict(sorted(self.files.items())),
            "dirs": sorted(self.dirs),
            "symlinks": {},
            "skipped": {},
        }


def folder_half(seed: int) -> int:
    """The half of the year a folder's ledgers cover, 1 or 2: each for about half the seeds."""
    return 1 + derive_seed("project-half", seed) % 2


def project_folder(vocabulary: dict[str, Any], seed: int) -> Project:
    """The folder of one topic for one seed (see `ledgers.ledger_files` for the vocabulary)."""
    files, ledger = ledger_files(vocabulary, random.Random(seed), folder_half(seed))
    truths: dict[str, Any] = {}
    for name, maker in PARTS:
        part = maker(vocabulary, ledger, random.Random(derive_seed("project-part", name, seed)))
        clash = sorted(set(part.files) & set(files))
        if clash:
            raise ValueError(f"project part {name!r} writes files the folder has: {clash}")
        files.update(part.files)
        truths[name] = part.truth
        if part.readme:
            files["README.md"] = files["README.md"].rstrip("\n") + "\n\n" + part.readme
    dirs = {"data", "reports", "config", "logs", "archive"}
    for path in files:
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return Project(files=files, dirs=sorted(dirs), ledger=ledger, parts=truths)
