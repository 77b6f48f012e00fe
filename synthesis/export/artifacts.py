"""Reading the trajectories artifact of one environment fast, to the same values.

Every trajectory of an environment carries the same tool list, and on a full build those
lists are ~60% of the file's bytes and most of its parse time (many small objects). The
artifact is canonical JSON (synthesis.codec), so the list's bytes are the same in every
trajectory: they are parsed once, and the file is parsed with each copy replaced by null,
then every trajectory gets the one parsed list back. Only when the result provably equals
a plain parse (see `_with_shared_tools`); any other file is parsed plainly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synthesis import codec

_TRAJECTORIES = b'"trajectories":[{'
_TOOLS, _NEXT_KEY, _NULL = b'"tools":', b',"traj_id":', b"null"


def read_trajectories(path: str | Path) -> Any:
    """The parsed artifact, equal to `codec.read_json(path)`; trajectories whose tool lists
    are equal share one list object (treat it as read-only)."""
    data = Path(path).read_bytes()
    shared = _with_shared_tools(data)
    return shared if shared is not None else codec.loads(data)


def _with_shared_tools(data: bytes) -> Any | None:
    candidate = _first_tools(data)
    if candidate is None:
        return None
    try:
        encoded = codec.dumps(candidate)
    except TypeError:  # orjson refuses it (an integer beyond 64 bits, say)
        return None
    # Parsed by the same parser as the rest of the file, from the very bytes it replaces.
    tools = codec.loads(encoded)
    pattern = _TOOLS + encoded + _NEXT_KEY
    # A `"tools":` inside a JSON string has its quotes escaped, so every match is a key
    # "tools" whose value is exactly the list, followed by the key "traj_id". A value
    # already null would make a stray match undetectable below: then no shortcut.
    if _TOOLS + _NULL in data:
        return None
    matches = data.count(pattern)
    parsed = codec.loads(data.replace(pattern, _TOOLS + _NULL + _NEXT_KEY))
    trajectories = parsed.get("trajectories") if isinstance(parsed, dict) else None
    if not isinstance(trajectories, list) or matches != len(trajectories):
        return None
    # As many matches as trajectories, each trajectory's own list among them: no match was
    # anywhere else, and no trajectory had another list.
    if not all(isinstance(t, dict) and "tools" in t and t["tools"] is None for t in trajectories):
        return None
    for t in trajectories:
        t["tools"] = tools
    return parsed


def _first_tools(data: bytes) -> list | None:
    """The tool list of the file's first trajectory, parsed from that trajectory alone."""
    start = data.find(_TRAJECTORIES)
    if start < 0:
        return None
    start += len(_TRAJECTORIES) - 1  # the first trajectory's "{"
    # Decoded a growing slice at a time, not the whole file (megabytes): a character cut at
    # the slice's end is replaced, and lies after the object once the object is complete.
    size = 1 << 15
    while True:
        text = data[start : start + size].decode(errors="replace")
        try:
            first, _ = json.JSONDecoder().raw_decode(text)
            break
        except ValueError:
            if start + size >= len(data):
                return None
            size *= 4
    tools = first.get("tools") if isinstance(first, dict) else None
    return tools if isinstance(tools, list) else None


def trajectories_of_policy(path: str | Path, prefix: str) -> list[dict[str, Any]]:
    """The trajectory records of one artifact whose policy starts with `prefix`.

    The file is parsed only when its bytes hold the prefix at all (as the codec writes
    it): a build without such policies reads gigabytes instead of parsing them.
    """
    data = Path(path).read_bytes()
    if codec.dumps(prefix)[1:-1] not in data:
        return []
    records = codec.loads(data)["trajectories"]
    return [t for t in records if t["policy"].startswith(prefix)]
