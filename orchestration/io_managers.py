"""IO manager: every asset value is stored as canonical JSON under $ENVFOUNDRY_HOME/artifacts.

Canonical JSON (synthesis.codec) keeps artifacts byte-identical per seed and readable by
people; pickle would be neither. Values come back as plain JSON; assets re-validate them into
models, which also re-checks their shape at every stage boundary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from synthesis import codec, heap

_UNPARTITIONED = "_all"


class JsonArtifactIOManager(dg.ConfigurableIOManager):
    root: str
    # As an input manager ("artifact_paths"): an unpartitioned consumer of a partitioned
    # asset gets each partition's file path instead of its parsed value, to read a large
    # asset one partition at a time.
    paths_only: bool = False

    def _path(self, asset_key: dg.AssetKey, partition: str | None) -> Path:
        return Path(self.root, *asset_key.path, f"{partition or _UNPARTITIONED}.json")

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        partition = context.partition_key if context.has_asset_partitions else None
        path = self._path(context.asset_key, partition)
        codec.write_json(path, obj, pretty=False)
        context.add_output_metadata(
            {
                "artifact_path": dg.MetadataValue.path(str(path)),
                "artifact_bytes": path.stat().st_size,
            }
        )

    def load_input(self, context: dg.InputContext) -> Any:
        # Parsing makes no cycles, so the collector has nothing to find meanwhile; left on, it
        # walked the growing heap over and over (a publish's checks: 7.6 s paused to 2.9 s).
        with heap.collector_paused():
            return self._load(context)

    def _load(self, context: dg.InputContext) -> Any:
        key = context.asset_key
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            if context.has_partition_key and len(keys) == 1:
                return codec.read_json(self._path(key, keys[0]))
            # An unpartitioned consumer of a partitioned asset gets every partition by key.
            if self.paths_only:
                paths = {k: self._path(key, k) for k in sorted(keys)}
                return {k: path for k, path in paths.items() if path.exists()}
            return {
                k: codec.read_json(self._path(key, k))
                for k in sorted(keys)
                if self._path(key, k).exists()
            }
        return codec.read_json(self._path(key, None))
