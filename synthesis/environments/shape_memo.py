"""Program shapes kept between builds.

Every build's catalogue run shapes every environment's class to decide the splits
(`splits.build_shapes`): 3-4 s of the full profile's 170 classes, in every rebuild, for
classes that rarely change. A shape is a pure function of the class's source and name, the
code that shapes it (synthesis/environments/shape.py and what it imports) and the AST of the
running Python, so it is kept under a key of exactly those, in one JSON file of
the home, and only sources not seen before are shaped again. A file that does not read is
made again, never trusted in part.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from synthesis import codec
from synthesis.code_versions import code_version
from synthesis.environments import shape
from synthesis.hashing import content_hash, sha256_text


@functools.cache
def _shape_code() -> str:
    """What shapes a source besides the source: the shape code and the interpreter's AST
    (read once, when a process first shapes, not by every process importing this)."""
    return content_hash([code_version(shape.__name__), list(sys.version_info[:2])])


class ShapeMemo:
    """`program_shape` with the shapes of an earlier build kept (`path`: where they are;
    None keeps nothing). `save` writes the shapes this memo was asked for, so the file holds
    the last build's environments, not every class the home ever had."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._kept = _read(path)
        self._asked: dict[str, str | None] = {}
        self.made = 0  # shapes computed rather than kept, for the asset's metadata

    def shape(self, code: str, class_name: str | None = None) -> str | None:
        key = content_hash([_shape_code(), class_name, sha256_text(code)])[:32]
        if key in self._kept:
            found = self._kept[key]
        else:
            found = shape.program_shape(code, class_name)
            self.made += 1
        self._asked[key] = found
        return found

    def save(self) -> None:
        if self.path is None:
            return
        # Written beside and renamed: a reader (the UI's observation) never sees half a file.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        partial.write_bytes(codec.dumps(self._asked))
        os.replace(partial, self.path)


def _read(path: Path | None) -> dict[str, str | None]:
    if path is None or not path.is_file():
        return {}
    try:
        kept = codec.read_json(path)
    except (OSError, ValueError):
        return {}
    valid = isinstance(kept, dict) and all(
        isinstance(v, str | None) and isinstance(k, str) for k, v in kept.items()
    )
    return kept if valid else {}
