"""Rebuild costs: a first build of a profile, then rebuilds into the same home with nothing
changed, with one topic edited, and with the spec schema version bumped, side by side in one
run.

    python benchmarks/incremental.py [--profile default] [--seed 0]

Each build is `envfoundry build` as a user runs it (its own process, code server and runs).
The edited topic's description changes; every other environment's artifacts must stay
byte-identical, which is checked. A build leaves its code server and run host warm for the
next build of the home (orchestration/fastrun/warm.py), so the one-topic rebuild is timed
twice: warm, as a user who edits and rebuilds gets it, and cold (`envfoundry stop` first,
another edit).
Beside them, the least a one-topic rebuild can cost with no orchestration at all
(benchmarks/rebuild_floor.py: the edited environment's engine stages and a warm `dbt build`,
measured in this process on the rebuilt home, between the warm and the cold rebuild).
The schema bump is what a developer does: a copy of this source tree with
`SPEC_SCHEMA_VERSION` one higher, built into the same home (other code: cold). Issue 9's goals:
nothing changed at most 5 % of the first build's time, one topic edited at most 10 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assets._util import PER_ENVIRONMENT_ASSETS  # noqa: E402
from benchmarks import rebuild_floor  # noqa: E402
from benchmarks.machine import yardstick  # noqa: E402
from synthesis.environments.topics import CATALOGUE_PATH  # noqa: E402


def build(
    home: Path, args, catalogue: Path, source: Path = REPO, warm_s: int = 600
) -> tuple[float, str]:
    command = [
        sys.executable,
        "-m",
        "orchestration.cli",
        "build",
        "--profile",
        args.profile,
        "--seed",
        str(args.seed),
        "--home",
        str(home),
        "--catalogue",
        str(catalogue),
    ]
    environment = {
        **os.environ,
        "PYTHONPATH": str(source),
        "DO_NOT_TRACK": "1",
        "ENVFOUNDRY_WARM_S": str(warm_s),
    }
    environment.pop("DAGSTER_HOME", None)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=source, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"build failed:\n{result.stdout[-3000:]}")
    said = result.stdout.splitlines()
    made = next((line for line in said if "reused (nothing" in line), "")
    servers = next((line for line in said if line.startswith("Code server and run host")), "")
    servers = servers.partition(": ")[2].split(";")[0]
    return seconds, made.strip().partition(": ")[2] + (f" [servers {servers}]" if servers else "")


def stop(home: Path) -> None:
    command = [sys.executable, "-m", "orchestration.cli", "stop", "--home", str(home)]
    subprocess.run(command, cwd=REPO, capture_output=True, check=True)


def artifacts(home: Path) -> dict[str, str]:
    out = {}
    for stage in PER_ENVIRONMENT_ASSETS:
        for path in sorted((home / "artifacts" / stage).glob("*.json")):
            out[f"{stage}/{path.name}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def where_the_time_went(home: Path, started: float, runs: int = 3) -> list[str]:
    """The last build's runs (each from its start to its end, and when it started after the
    CLI did) and the steps of its publish run: what a rebuild pays, and where."""
    import dagster as dg

    kinds = dg.DagsterEventType
    ends = {kinds.RUN_SUCCESS, kinds.RUN_FAILURE, kinds.RUN_CANCELED}
    lines = []
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        for run in reversed(instance.get_runs(limit=runs)):
            times: dict[str, float] = {}
            steps: dict[str, list[float]] = {}
            for record in instance.all_logs(run.run_id):
                event = record.dagster_event
                kind = event.event_type if event is not None else None
                if kind in ends:
                    times.setdefault("end", record.timestamp)
                elif kind in (kinds.RUN_STARTING, kinds.RUN_START):
                    times.setdefault(kind.name, record.timestamp)
                elif kind in (kinds.STEP_START, kinds.STEP_SUCCESS) and event.step_key:
                    steps.setdefault(event.step_key, []).append(record.timestamp)
            start, end = times.get("RUN_STARTING", started), times.get("end", started)
            up = times.get("RUN_START", start) - start
            line = (
                f"  {run.job_name:<16}{end - start:6.1f} s, from {start - started:4.1f} s "
                f"after the CLI started (its process up in {up:.2f} s)"
            )
            if run.job_name == "publish_job":
                line += ": " + ", ".join(
                    f"{step} {max(t) - min(t):.1f}" for step, t in steps.items() if len(t) > 1
                )
            lines.append(line)
    return lines


def edit_one_topic(catalogue: Path, home: Path, words: str) -> str:
    """Edit the description of the first topic this build made an environment of."""
    made = sorted(p.stem for p in (home / "artifacts" / "environments").glob("*.json"))
    data = json.loads(catalogue.read_text())
    for topic in data["topics"]:
        env_id = next((e for e in made if e.startswith(topic["topic_id"] + "-")), None)
        if env_id is not None and not topic.get("source"):
            topic["description"] = topic.get("description", "") + f" {words}"
            catalogue.write_text(json.dumps(data))
            return env_id
    raise SystemExit("no topic of the catalogue was built")


def bumped_source(into: Path) -> Path:
    """This source tree, with the spec schema version one higher."""
    ignore = shutil.ignore_patterns(".venv", ".git", "var", "__pycache__", "*.egg-info")
    shutil.copytree(REPO, into, ignore=ignore)
    models = into / "synthesis" / "models.py"
    text = models.read_text()
    bumped = re.sub(
        r"^SPEC_SCHEMA_VERSION = (\d+)$",
        lambda m: f"SPEC_SCHEMA_VERSION = {int(m.group(1)) + 1}",
        text,
        flags=re.M,
    )
    assert bumped != text, "SPEC_SCHEMA_VERSION not found"
    models.write_text(bumped)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    machine_before = yardstick()  # and after: the machine may change speed meanwhile
    with tempfile.TemporaryDirectory(prefix="envfoundry-incremental-") as tmp:
        root = Path(tmp)
        home = root / "home"
        catalogue = root / "topics.json"
        shutil.copy(CATALOGUE_PATH, catalogue)
        rows = []
        first, made = build(home, args, catalogue)
        rows.append(("first build", first, made))
        same, made = build(home, args, catalogue)
        rows.append(("nothing changed", same, made))
        before = artifacts(home)
        edited = edit_one_topic(catalogue, home, "Edited for the benchmark.")
        started = time.time()
        one, made = build(home, args, catalogue)
        rows.append(("one topic edited", one, made))
        spent = where_the_time_went(home, started)
        after = artifacts(home)
        changed = sorted({k.split("/")[1][:-5] for k in before if before[k] != after.get(k)})
        stop(home)
        # With the home's processes stopped, so that only this one uses the machine.
        floor = rebuild_floor.measure(home, edited, catalogue, args.profile, args.seed)
        edit_one_topic(catalogue, home, "Edited again.")
        cold, made = build(home, args, catalogue, warm_s=0)
        rows.append(("one topic edited, cold", cold, made))
        bump, made = build(home, args, catalogue, bumped_source(root / "bumped"), warm_s=0)
        rows.append(("spec schema bumped", bump, made))
    print(f"profile {args.profile}, seed {args.seed}: seconds per build into one home")
    print(f"{machine_before}, before the builds\n{yardstick()}, after them")
    print(f"{'build':<24}{'seconds':>9}{'of first':>10}  environments made, reused")
    for label, seconds, made in rows:
        print(f"{label:<24}{seconds:9.1f}{seconds / first:9.1%}  {made}")
    print(f"the one-topic rebuild's runs ({one:.1f} s in all):")
    print("\n".join(spent))
    print(f"environments whose artifacts changed after editing {edited}: {changed}")
    print("what any one-topic rebuild does, with no orchestration (benchmarks/rebuild_floor.py):")
    print("\n".join(floor.lines(first)))
    goals = (same / first <= 0.05, one / first <= 0.10, changed == [edited])
    print(
        "goals (nothing changed <= 5 %, one topic <= 10 %, only the edited environment "
        f"changed): {'met' if all(goals) else 'not met'} {goals}"
    )


if __name__ == "__main__":
    main()
