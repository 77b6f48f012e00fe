"""Per-environment tables a publish keeps for the next one, each with what it was made from.

Screening's inputs are each environment's own (its tasks' features, its LLM agent's attempts)
while its verdicts compare across environments; so a publish keeps what it made of each
environment as one Arrow file, tagged with its source (the data version of the artifact it
was read from and the code that read it), and a later publish takes the file back only for
that exact source. Otherwise the environment is read again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

_SOURCE = b"envfoundry.source"


class KeptTables:
    """One Arrow file per environment under `root`, all of `schema`, each holding a list of
    values of that environment (a row each: `to_row` and `from_row` convert them)."""

    def __init__(self, root: Path, schema: pa.Schema):
        self.root = Path(root)
        self.schema = schema

    def to_row(self, value: Any) -> tuple:
        return tuple(value)

    def from_row(self, row: tuple) -> Any:
        return row

    def _path(self, env_id: str) -> Path:
        return self.root / f"{env_id}.arrow"

    def get(self, env_id: str, source: str) -> list | None:
        """The environment's values made from `source`; None when there are none (or they
        were made from something else, are of another schema, or the file does not read)."""
        try:
            with ipc.open_file(self._path(env_id)) as reader:
                if (reader.schema.metadata or {}).get(_SOURCE) != source.encode():
                    return None
                table = reader.read_all()
        except (OSError, pa.ArrowInvalid):
            return None
        if table.schema.remove_metadata() != self.schema:
            return None
        columns = [table[name].to_pylist() for name in self.schema.names]
        return [self.from_row(row) for row in zip(*columns, strict=True)]

    def put(self, env_id: str, source: str, values: Iterable[Any]) -> None:
        """Keep the environment's values, replacing what it had (a reader never sees half a
        file: it is written beside and renamed)."""
        self.root.mkdir(parents=True, exist_ok=True)
        rows = [self.to_row(v) for v in values]
        columns = list(zip(*rows, strict=True)) or [[] for _ in self.schema.names]
        table = pa.table(columns, schema=self.schema.with_metadata({_SOURCE: source.encode()}))
        path = self._path(env_id)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        with ipc.new_file(partial, table.schema) as writer:
            writer.write_table(table)
        os.replace(partial, path)

    def keep_only(self, env_ids: Iterable[str]) -> None:
        """Forget every environment but `env_ids` (ones the build no longer has)."""
        wanted = {self._path(e).name for e in env_ids}
        if self.root.is_dir():
            for path in self.root.glob("*.arrow"):
                if path.name not in wanted:
                    path.unlink(missing_ok=True)

    def kept_or_made(
        self, sources: Mapping[str, str], make: Callable[[list[str]], Mapping[str, list]]
    ) -> tuple[dict[str, list], list[str]]:
        """Each environment's values (`sources`: env id → what they are made from now): kept
        ones when made from that source, the others made by `make` (given the environments
        to read, it returns their values; one it leaves out has none) and kept for the next
        publish, which forgets every other environment. (Values by env id, those read.)"""
        by_env = {env_id: self.get(env_id, source) for env_id, source in sources.items()}
        reading = [env_id for env_id, values in by_env.items() if values is None]
        made = make(reading) if reading else {}
        for env_id in reading:
            by_env[env_id] = list(made.get(env_id, ()))
            self.put(env_id, sources[env_id], by_env[env_id])
        self.keep_only(sources)
        return by_env, reading
