"""The answer cache: accepted answers only, stored under the hash of the request that got them.

A rejected answer is never written, so the next build asks again instead of replaying it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis import codec


@dataclass(frozen=True)
class AnswerCache:
    """A directory of `<sha[:2]>/<sha>.json` files; `root=None` caches nothing."""

    root: Path | None
    # Folders made already: an answer written per request need not ask for its folder again.
    _folders: set[Path] = field(default_factory=set, compare=False, repr=False)

    def _path(self, digest: str) -> Path | None:
        return None if self.root is None else self.root / digest[:2] / f"{digest}.json"

    def get(self, digest: str) -> dict[str, Any] | None:
        path = self._path(digest)
        if path is None:
            return None
        try:
            entry = codec.read_json(path)
        except FileNotFoundError:
            return None
        except ValueError:  # a torn write from a killed build: ask again
            return None
        return entry if isinstance(entry, dict) and "message" in entry else None

    def put(self, digest: str, message: dict[str, Any], tokens_in: int, tokens_out: int) -> None:
        path = self._path(digest)
        if path is None:
            return
        entry = {"message": message, "tokens_in": tokens_in, "tokens_out": tokens_out}
        # Written beside and renamed, so a reader never sees half an answer.
        tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.partial")
        data = codec.dumps_pretty(entry)  # the bytes codec.write_json writes
        if path.parent not in self._folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(path.parent)
        try:
            tmp.write_bytes(data)
        except FileNotFoundError:  # the folder was removed since (a cleared cache)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
        tmp.replace(path)
