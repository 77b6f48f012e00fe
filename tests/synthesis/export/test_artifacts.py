"""Reading trajectories artifacts fast: always the values a plain parse gives."""

from __future__ import annotations

from synthesis import codec
from synthesis.export.artifacts import read_trajectories, trajectories_of_policy

TOOLS = [
    {"type": "function", "function": {"name": "find", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "book", "parameters": {"type": "object"}}},
]


def _traj(i: int, tools=TOOLS, policy="oracle", messages=None) -> dict:
    return {
        "traj_id": f"t{i}",
        "scenario_id": f"s{i}",
        "env_id": "e",
        "policy": policy,
        "reward": 1.0,
        "success": True,
        "n_steps": 1,
        "messages": messages or [{"role": "user", "content": f"do {i} — «now»"}],
        "tools": tools,
    }


def _artifact(tmp_path, trajectories, pretty=False):
    # As the IO manager writes it: canonical JSON, compact.
    value = {"llm_calls": [], "quarantine": [], "trajectories": trajectories}
    return codec.write_json(tmp_path / "e.json", value, pretty=pretty)


def _read(path):
    read = read_trajectories(path)
    assert read == codec.read_json(path)
    assert codec.dumps(read) == codec.dumps(codec.read_json(path))
    return read["trajectories"]


def test_equal_tool_lists_are_parsed_once_and_shared(tmp_path):
    trajs = _read(_artifact(tmp_path, [_traj(i) for i in range(3)]))
    assert trajs[0]["tools"] is trajs[1]["tools"] is trajs[2]["tools"]


def test_different_tool_lists_are_read_plainly(tmp_path):
    trajs = _read(_artifact(tmp_path, [_traj(0), _traj(1, tools=TOOLS[:1]), _traj(2)]))
    assert trajs[0]["tools"] is not trajs[2]["tools"]


def test_a_copy_of_the_list_elsewhere_is_not_mistaken_for_a_trajectory_s(tmp_path):
    # A message holding the same list under "tools", followed by a "traj_id" key.
    stray = [{"role": "tool", "tools": TOOLS, "traj_id": "x"}]
    trajs = _read(_artifact(tmp_path, [_traj(0), _traj(1, messages=stray)]))
    assert trajs[1]["messages"][0]["tools"] == TOOLS


def test_a_null_tool_list_stays_null(tmp_path):
    trajs = _read(_artifact(tmp_path, [_traj(0), _traj(1, tools=None)]))
    assert trajs[1]["tools"] is None


def test_empty_and_pretty_artifacts_read_as_they_parse(tmp_path):
    assert _read(_artifact(tmp_path, [])) == []
    (tmp_path / "p").mkdir()
    assert len(_read(_artifact(tmp_path / "p", [_traj(0), _traj(1)], pretty=True))) == 2


def test_trajectories_of_policy_parses_only_files_that_can_hold_one(tmp_path):
    path = _artifact(tmp_path, [_traj(0), _traj(1, policy="llm:gpt"), _traj(2, policy="noop")])
    assert [t["traj_id"] for t in trajectories_of_policy(path, "llm:")] == ["t1"]
    # Without the prefix anywhere the file is not parsed at all (this one would not parse).
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{"trajectories": [oracle')
    assert trajectories_of_policy(broken, "llm:") == []


def test_a_first_trajectory_longer_than_the_first_slice_is_found_whole(tmp_path):
    long_tools = [{"type": "function", "function": {"name": "f", "description": "é" * 50_000}}]
    trajs = _read(_artifact(tmp_path, [_traj(i, tools=long_tools) for i in range(2)]))
    assert trajs[0]["tools"] is trajs[1]["tools"]
