"""The project's one hashing helper: content hashes, stable ids and per-item seeds."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from synthesis import codec


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode())


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def content_hash(obj: Any) -> str:
    """Hash of an object's canonical JSON form: equal content, equal hash."""
    return sha256_bytes(codec.dumps(obj))


def short_id(*parts: Any, length: int = 10) -> str:
    """A short stable id derived from its parts (used for artifact ids).

    Kinds a full build holds ~10^5-10^6 of (checks, trajectories) ask for `ID_BITS_MANY`:
    there 40 bits gave two different checks one id (the warehouse gate's uniqueness test
    stopped the publish). Scenario ids stay at 40 bits (~25K per full build) because they
    seed each scenario's own randomness (mutants, baselines), so their bytes are part of
    what a build makes."""
    return content_hash(list(parts))[:length]


# 64 bits: a clash among 10^6 ids has a chance of about 3e-8.
ID_HEX_MANY = 16


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed derived from parts, so item N is reproducible without items 0..N-1."""
    return int(content_hash(list(parts))[:15], 16)
