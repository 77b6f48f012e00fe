"""A publish keeps each environment's values by what they were made from, and makes only the
others."""

from __future__ import annotations

import pyarrow as pa

from synthesis.tasks.kept_tables import KeptTables

SCHEMA = pa.schema([("task", pa.string()), ("attempt", pa.int64()), ("ok", pa.bool_())])


def test_only_environments_whose_source_changed_are_made_again(tmp_path):
    store = KeptTables(tmp_path, SCHEMA)
    asked: list[list[str]] = []

    def make(reading):
        asked.append(reading)
        # e2 has no values: it is kept as none, not made again next time.
        return {e: [(f"{e}-t", 0, True), (f"{e}-t", 1, False)] for e in reading if e != "e2"}

    values, read = store.kept_or_made({"e1": "v1", "e2": "v1", "e3": "v1"}, make)
    assert read == ["e1", "e2", "e3"] and values["e2"] == []
    assert values["e1"] == [("e1-t", 0, True), ("e1-t", 1, False)]
    again, read = store.kept_or_made({"e1": "v1", "e2": "v1", "e3": "v2"}, make)
    assert read == ["e3"] and asked[-1] == ["e3"]
    assert again == values
    # An environment the build no longer has is forgotten.
    store.kept_or_made({"e1": "v1"}, make)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e1.arrow"]
    assert len(asked) == 2  # nothing was read for e1


def test_a_file_of_another_schema_or_cut_off_is_made_again(tmp_path):
    KeptTables(tmp_path, SCHEMA).put("e1", "v1", [("t", 0, True)])
    other = pa.schema([("task", pa.string())])
    assert KeptTables(tmp_path, other).get("e1", "v1") is None
    path = tmp_path / "e1.arrow"
    path.write_bytes(path.read_bytes()[:64])
    assert KeptTables(tmp_path, SCHEMA).get("e1", "v1") is None
