"""The project's one JSON codec: canonical, compact, byte-stable bytes for every artifact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

# Sorted keys make the bytes a function of the content alone, which is what makes
# artifacts byte-identical across runs and lets us hash them.
_DUMP_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def dumps(obj: Any) -> bytes:
    """Serialise to canonical compact JSON bytes (sorted keys, no whitespace)."""
    return orjson.dumps(obj, option=_DUMP_OPTS, default=_default)


def dumps_str(obj: Any) -> str:
    return dumps(obj).decode()


def dumps_pretty(obj: Any) -> bytes:
    return orjson.dumps(obj, option=_DUMP_OPTS | orjson.OPT_INDENT_2, default=_default) + b"\n"


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


def read_json(path: str | Path) -> Any:
    return orjson.loads(Path(path).read_bytes())


def write_json(path: str | Path, obj: Any, pretty: bool = True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps_pretty(obj) if pretty else dumps(obj) + b"\n")
    return path


def _default(obj: Any) -> Any:
    # pydantic models and sets are the only non-JSON types we let reach the codec.
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")
