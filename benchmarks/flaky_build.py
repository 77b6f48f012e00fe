"""A flaky endpoint costs a build little: a tiny build with every LLM stage on, against a
healthy loopback endpoint and against one that never answers one request in 15, side by
side in one run.

    python benchmarks/flaky_build.py [--profile tiny] [--seed 0] [--latency-ms 0]
                                     [--hang-every 15] [--bad-every 0] [--catalogue F]
                                     [--keep DIR] [--only healthy|flaky]

Both endpoints are benchmarks/loopback_endpoint.py (its own process), answering each request
after `--latency-ms` with what tests/fakes/llm_build.py answers it (every stage's fake, as
the LLM build test uses: each stage gets an answer it accepts, bar the `task_text` rewording
the fake leaves empty one time in three). The flaky one never answers one request of every
`--hang-every` it receives; with `--bad-every N` it also answers one request in N with a bad
answer (error statuses, truncated bodies, cut, empty, oversized, off-schema answers, calls to
no tool: loopback_endpoint.BAD_KINDS in turn), as the maintainers' faulty endpoint did.

Each build is `envfoundry build` as a user runs it (its code server, one Dagster run per
asset and environment, the publish run), into a fresh home (so no answer cache is shared),
with ENVFOUNDRY_WARM_S=0 and the settings' defaults otherwise: ENVFOUNDRY_LLM_TIMEOUT_S is
60 s. The builds run one after the other, healthy first. For each, the ledger (the spool
files every run appends, what the warehouse's `llm_calls` holds) says where the time went:
per stage, the attempts, the timeouts and the seconds they held a request slot, the
timeouts given. Goal (issue "Flaky endpoints cost little"): the flaky build takes at most
2x the healthy one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopback_endpoint import Endpoint  # noqa: E402
from tests.fakes.llm_build import respond  # noqa: E402

GOAL_RATIO = 2.0  # the flaky build's time over the healthy one's, at most
KEY = "sk-flaky-build-bench"


def build(home: Path, base_url: str, args: argparse.Namespace) -> tuple[float, str]:
    """`envfoundry build` into `home` against `base_url`: (seconds, its output's tail)."""
    command = [
        sys.executable, "-m", "orchestration.cli", "build", "--profile", args.profile,
        "--seed", str(args.seed), "--home", str(home),
    ] + (["--catalogue", args.catalogue] if args.catalogue else [])  # fmt: skip
    environment = {
        **os.environ,
        "DO_NOT_TRACK": "1",
        "ENVFOUNDRY_WARM_S": "0",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": KEY,
        "ENVFOUNDRY_MODEL": "bench-model",
        # The fake agent never solves a task (0/k): keep every task, so the rest of the
        # build has the same work against either endpoint (tests/test_build_with_llm.py).
        "ENVFOUNDRY_DIFFICULTY_FILTER": "all",
    }
    environment.pop("DAGSTER_HOME", None)
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=3600
    )
    elapsed = time.perf_counter() - started
    if "Build finished ok" not in done.stdout:
        sys.exit(f"the build into {home} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    if done.returncode != 0:  # the build itself was ok: say what came after, measure it
        print(f"warning: envfoundry exited {done.returncode} after the build: {done.stdout[-300:]}")
    return elapsed, done.stdout


def ledger(home: Path) -> list[dict]:
    """Every attempt of the build, from its spool (what `llm_calls` holds)."""
    return [
        json.loads(line)
        for path in sorted((home / "ledger").glob("*/*/*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def _given_s(reason: str) -> float | None:
    match = re.match(r"timeout: no answer within ([0-9.]+)s", reason or "")
    return float(match[1]) if match else None


def where_the_time_went(kind: str, rows: list[dict]) -> None:
    """Per stage: attempts by status, timeouts, the seconds they held, the timeouts given."""
    stages: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        stages[row["stage"]].append(row)
    print(
        f"  {kind:8} {'stage':14} {'attempts':>8} {'accepted':>8} {'rejected':>8} "
        f"{'timeouts':>8} {'lost s':>7} {'other':>6}  timeouts given (s)"
    )
    for stage in sorted(stages):
        calls = stages[stage]
        statuses = Counter(c["status"] for c in calls)
        timeouts = [c for c in calls if (c["reason"] or "").startswith("timeout:")]
        given = Counter(_given_s(c["reason"]) for c in timeouts)
        lost = sum(c["latency_ms"] for c in timeouts) / 1000
        other = sum(
            1
            for c in calls
            if c["status"] in ("retried", "failed", "skipped")
            and not (c["reason"] or "").startswith("timeout:")
        )
        print(
            f"  {kind:8} {stage:14} {len(calls):8d} {statuses['accepted']:8d} "
            f"{statuses['rejected']:8d} {len(timeouts):8d} {lost:7.1f} {other:6d}  "
            + ", ".join(f"{g:g}x{n}" for g, n in sorted(given.items()))
        )
    reasons = Counter(
        re.sub(r"\d+(\.\d+)?", "N", c["reason"])[:110]
        for c in rows
        if c["status"] in ("retried", "failed", "skipped") and c["reason"]
    )
    for reason, n in reasons.most_common(8):
        print(f"  {kind:8} {n:4d} x {reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--hang-every", type=int, default=15)
    parser.add_argument("--bad-every", type=int, default=0, help="one bad answer in N")
    parser.add_argument("--catalogue", help="another topics.json (a slice builds quicker)")
    parser.add_argument("--keep", type=Path, help="build the homes here and keep them")
    parser.add_argument("--only", choices=("healthy", "flaky"), help="one build only")
    args = parser.parse_args()
    print(
        f"a {args.profile} build (seed {args.seed}) with every LLM stage on; endpoint latency "
        f"{args.latency_ms:g} ms; the flaky endpoint never answers 1 request in "
        f"{args.hang_every}"
        + (f" and answers 1 in {args.bad_every} badly" if args.bad_every else "")
    )
    load_before = os.getloadavg()[0]
    latency_s = args.latency_ms / 1000
    root = args.keep or Path(tempfile.mkdtemp(prefix="flaky-build-"))
    root.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    kinds = [args.only] if args.only else ["healthy", "flaky"]
    try:
        for kind in kinds:
            hang, bad = (args.hang_every, args.bad_every) if kind == "flaky" else (0, 0)
            home = root / kind
            shutil.rmtree(home, ignore_errors=True)
            with Endpoint(latency_s, respond, hang_every=hang, bad_every=bad) as endpoint:
                times[kind], _ = build(home, endpoint.base_url, args)
                served = endpoint.take_counts()[0]
            rows = ledger(home)
            print(f"{kind}: {times[kind]:.1f} s, {len(rows)} ledger rows, {served} answered")
            where_the_time_went(kind, rows)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if len(times) == 2:
        ratio = times["flaky"] / times["healthy"]
        print(
            f"flaky / healthy: {times['flaky']:.1f} s / {times['healthy']:.1f} s = "
            f"{ratio:.2f}x; goal <= {GOAL_RATIO:g}x: {'met' if ratio <= GOAL_RATIO else 'NOT MET'}"
        )
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
