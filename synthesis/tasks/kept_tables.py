"""Per-environment tables a publish keeps for the next one, each with what it was made from.

Screening's inputs are each environment's own (its tasks' features, its LLM agent's attempts)
while its verdicts compare across environments; so a publish keeps what it made of each
environment as one Arrow file, tagged with its source (the data version of the artifact it
was read from and the code that read it), and a later publish takes the file back only for
that exact source. Otherwise the environment is read again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

_SOURCE = b"envfoundry.source"


class KeptTables:
    """One Arrow file per environment under `root`, all of `schema`."""

    def __init__(self, root: Path, schema: pa.Schema):
        self.root = Path(root)
        self.schema = schema

    def _path(self, env_id: str) -> Path:
        return self.root / f"{env_id}.arrow"

    def get(self, env_id: str, source: str) -> pa.Table | None:
        """The environment's table made from `source`; None when there is none (or it was
        made from something else, is of another schema, or the file does not read)."""
        try:
            with ipc.open_file(self._path(env_id)) as reader:
                if (reader.schema.metadata or {}).get(_SOURCE) != source.encode():
                    return None
                table = reader.read_all()
        except (OSError, pa.ArrowInvalid):
            return None
        table = table.replace_schema_metadata(None)
        return table if table.schema == self.schema else None

    def put(self, env_id: str, source: str, table: pa.Table) -> None:
        """Keep the environment's table, replacing what it had (a reader never sees half a
        file: it is written beside and renamed)."""
        self.root.mkdir(parents=True, exist_ok=True)
        table = table.cast(self.schema).replace_schema_metadata({_SOURCE: source.encode()})
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
