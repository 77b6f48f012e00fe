"""Nothing lost, nothing mixed: locked, atomic, honest builds that fail with a clear message.

One good tiny build makes a home with a published dataset (a copy of the suite's shared
tiny build, seed 7); then every fault a user meets is tried against it: a second build, a kill
at each publish step, a failed environment in a rebuild of another seed, an empty catalogue,
broken inputs and broken disks. After each, the last good dataset must be exactly as it was
(or replaced whole by a good one).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from build_support import REPO, copy_home, publish_only, query, run_build

from orchestration.lock import BuildLock
from synthesis import codec
from synthesis.export import datasets
from synthesis.export.shards import verify_manifest
from synthesis.hashing import sha256_file

pytestmark = pytest.mark.slow

PUBLISH_STEPS = ("warehouse", "shards", "dbt", "report", "before_swap")


def snapshot(home: Path) -> dict[str, str]:
    """Every published file's sha256, and where `current` points."""
    current = (home / datasets.CURRENT).resolve()
    files = {
        str(p.relative_to(current)): sha256_file(p)
        for p in sorted(current.rglob("*"))
        if p.is_file() and "dbt" not in p.relative_to(current).parts
    }
    return {"current": os.readlink(home / datasets.CURRENT), **files}


def one_line_refusal(result: subprocess.CompletedProcess, *needles: str) -> str:
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    for needle in needles:
        assert needle in lines[0], out
    return lines[0]


# The seed of the shared tiny build the good home is a copy of (conftest.tiny_home).
GOOD_SEED = 7


@pytest.fixture(scope="module")
def good_home(tiny_home, tmp_path_factory) -> Path:
    home = copy_home(tiny_home[0], tmp_path_factory.mktemp("safety") / "home")
    assert not verify_manifest(home / "shards" / "manifest.json", seed=GOOD_SEED)
    return home


def test_a_second_build_into_a_locked_home_is_refused_naming_the_holder(good_home):
    before = snapshot(good_home)
    with BuildLock(good_home):
        result = run_build(good_home, profile="tiny", seed=3)
    line = one_line_refusal(result, "is being built by another build", f"pid {os.getpid()}")
    assert "wait for it" in line
    assert snapshot(good_home) == before
    # The lock lives as long as its holder: a file left by a dead build locks nothing.
    with BuildLock(good_home):
        pass
    assert (good_home / ".build.lock").exists()
    with BuildLock(good_home):
        pass


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_a_kill_at_each_publish_step_leaves_the_last_dataset_as_it_was(good_home, step):
    before = snapshot(good_home)
    process = publish_only(good_home, seed=5, env={"ENVFOUNDRY_KILL_AT": step})
    assert process.wait(timeout=300) == -signal.SIGKILL
    assert snapshot(good_home) == before
    assert not verify_manifest(good_home / "shards" / "manifest.json", seed=GOOD_SEED)
    assert query(good_home, "select count(*) > 0 from scenarios") == [(True,)]


def test_dbt_dies_with_the_build(good_home):
    """Whichever process runs dbt (the publish run's own, assets/_dbt_in_process.py; a
    subprocess would have to die with it), killing the build leaves nothing writing the
    dataset's dbt log."""
    process = publish_only(good_home, seed=5)
    dbt = None
    deadline = time.monotonic() + 120
    while dbt is None and time.monotonic() < deadline and process.poll() is None:
        family = [process.pid, *_descendants(process.pid)]
        dbt = next((pid for pid in family if _writes_dbt_log(pid)), None)
        time.sleep(0.05)
    assert dbt is not None, "dbt never started"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(dbt):
        time.sleep(0.05)
    assert not _alive(dbt), "dbt outlived the build that started it"


def _writes_dbt_log(pid: int) -> bool:
    """Whether process `pid` holds a dataset's dbt log open: dbt is running in it."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.endswith("/dbt/logs/dbt.log"):
            return True
    return False


def test_a_failed_environment_publishes_nothing_of_an_older_seed(good_home):
    """A seed-1 rebuild over the seed-7 home, one environment failing: none of its seed-7
    artifacts are published; meanwhile someone holds the published warehouse open."""
    (failing,) = [
        e for (e,) in query(good_home, "select env_id from environments order by 1 limit 1")
    ]
    holder = duckdb.connect(str(good_home / "warehouse.duckdb"))  # a notebook left open
    try:
        result = run_build(
            good_home,
            profile="tiny",
            seed=1,
            env={"ENVFOUNDRY_FAIL_AT": f"scenarios:{failing}"},
        )
    finally:
        holder.close()
    out = result.stdout
    assert result.returncode == 1, out
    assert f"FAILED environment {failing}: scenarios: RuntimeError: injected failure" in out
    assert "Traceback" not in out
    manifest = good_home / "shards" / "manifest.json"
    assert not verify_manifest(manifest, seed=1)
    rl_envs = {
        codec.loads(line)["env_id"]
        for entry in codec.read_json(manifest)["files"]
        if entry["kind"] == "rl_tasks"
        for line in (manifest.parent / entry["path"]).read_text().splitlines()
    }
    assert rl_envs and failing not in rl_envs
    assert (failing,) not in query(good_home, "select env_id from environments")
    (reason,) = query(good_home, f"select reason from quarantine where artifact_id = '{failing}'")[
        0
    ]
    assert "excluded: its run failed in this build" in reason
    # The runs the kill test left STARTED were marked failed by this build.
    with dg.DagsterInstance.from_config(str(good_home / "dagster")) as instance:
        started = instance.get_runs(
            dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING])
        )
    assert started == []


def test_an_empty_catalogue_changes_nothing_without_the_flag(good_home, tmp_path):
    empty = tmp_path / "topics.json"
    codec.write_json(empty, {"topics": []})
    before = snapshot(good_home)
    result = run_build(good_home, profile="tiny", extra=["--catalogue", str(empty)])
    one_line_refusal(result, "has no topics", "--allow-empty")
    assert snapshot(good_home) == before


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ('{"topics": [{"topic_id": "a",', ("not valid JSON", "line 1")),
        (
            '{"topics": [{"topic_id": "x", "title": "X", "archetype": "booking"}, '
            '{"topic_id": "x", "title": "Y", "archetype": "booking"}]}',
            ("duplicate topic id 'x'",),
        ),
        (
            '{"topics": [{"topic_id": "x", "title": "X", "archetype": "bokking"}]}',
            ("unknown archetype 'bokking'",),
        ),
    ],
)
def test_broken_catalogues_are_one_clear_line(tmp_path, content, needles):
    catalogue = tmp_path / "topics.json"
    catalogue.write_text(content)
    result = run_build(tmp_path / "home", extra=["--catalogue", str(catalogue)])
    one_line_refusal(result, str(catalogue), *needles)
    assert not (tmp_path / "home").exists()


def test_bad_homes_and_seeds_are_one_clear_line(tmp_path):
    a_file = tmp_path / "home.txt"
    a_file.write_text("not a folder")
    one_line_refusal(run_build(a_file), "is a file, not a folder")
    one_line_refusal(run_build(tmp_path / "h", seed=2**64), "--seed", "out of range")


def test_a_damaged_warehouse_is_repaired_by_the_next_build(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "warehouse.duckdb").write_bytes(b"")  # an interrupted copy, a full disk
    result = run_build(home, profile="tiny", seed=0)
    assert result.returncode == 0, result.stdout[-3000:]
    assert datasets.opens(home / "warehouse.duckdb")
    assert (home / "datasets" / "legacy" / "warehouse.duckdb").stat().st_size == 0


def test_dbt_target_and_logs_live_under_the_home(good_home):
    dbt = good_home / datasets.CURRENT / "dbt"
    assert (dbt / "target" / "run_results.json").is_file()
    assert any((dbt / "logs").iterdir())


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_one_clear_line(small_disk):
    result = run_build(small_disk / "home", profile="tiny")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "Traceback" not in out
    assert "no space left on the device" in out, out


def test_a_read_only_home_is_one_clear_line(small_disk):
    (small_disk / "home").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    one_line_refusal(run_build(small_disk / "home"), "read-only")


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True)
    children: dict[int, list[int]] = {}
    for line in out.stdout.splitlines():
        child, parent = (int(x) for x in line.split())
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


assert REPO.is_dir()
