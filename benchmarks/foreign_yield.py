"""How many environments people already have publish proven tasks: the share of a set of
third-party classes that publish at least three, and why each of the others did not.

    python benchmarks/foreign_yield.py --home H [--envs SOURCE ...] [--tau2 DIR] [--seed N]

Builds one home from the given sources (`--envs`, as `envfoundry build` takes them; by default
the fourteen EnvCraft- and EnvScaler-style classes of tests/fakes/foreign) with `--profile small
--catalogue none`, adding τ²-bench's three domains from their full databases when `--tau2`
names a tau2-bench checkout (its `src` goes on PYTHONPATH, as for any source tree, beside
PYTHONPATH's own entries; its databases are read from `data/tau2/domains/<domain>/`).
It then prints, from the home's warehouse, each environment's published tasks, status and
`environments.reason`, and the share with at least `--floor` proven tasks: the bar issue 44
sets is 80%. Nothing is faked: each class runs in the sandbox as in any build.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TAU2_DOMAINS = {
    "retail": ("RetailTools", "db.json"),
    "airline": ("AirlineTools", "db.json"),
    "telecom": ("TelecomTools", "db.toml"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a new or disposable home")
    parser.add_argument("--envs", action="append", default=[], help="a source (repeatable)")
    parser.add_argument("--tau2", type=Path, help="tau2-bench's fixture: src/ and data/")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--floor", type=int, default=3, help="proven tasks that count")
    args = parser.parse_args(argv)
    envs = list(args.envs) or [str(REPO / "tests" / "fakes" / "foreign")]
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if args.tau2 is not None:
        paths.insert(0, str((args.tau2 / "src").resolve()))
        for domain, (cls, db) in TAU2_DOMAINS.items():
            envs.append(f"tau2.domains.{domain}.tools:{cls}@{_database(args.tau2, domain, db)}")
    command = [sys.executable, "-m", "orchestration.cli", "build", "--profile", "small"]
    command += ["--seed", str(args.seed), "--home", str(args.home), "--catalogue", "none"]
    command += ["--no-warm"] + [part for env in envs for part in ("--envs", env)]
    started = time.perf_counter()
    built = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *paths])},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if built.returncode != 0:
        print(built.stdout[-3000:] + built.stderr[-3000:])
        print(f"the build failed (exit {built.returncode}) after {seconds:.0f} s")
        return 1
    rows = _yields(args.home)
    width = max(len(env_id) for env_id, *_ in rows)
    print(f"{'environment':<{width}}  published  status       reason")
    for env_id, published, status, reason in rows:
        print(f"{env_id:<{width}}  {published:>9}  {status:<11}  {reason or ''}"[:240])
    enough = sum(1 for _, published, _, _ in rows if published >= args.floor)
    share = enough / len(rows) if rows else 0.0
    print(
        f"\n{enough} of {len(rows)} environments publish at least {args.floor} proven tasks "
        f"({share:.0%}); build {seconds:.0f} s"
    )
    return 0


def _database(root: Path, domain: str, name: str) -> Path:
    """A domain's database in a tau2-bench checkout (`data/tau2/domains/<domain>/`), or in a
    copy that keeps the domains directly under `data/`."""
    for folder in (root / "data" / "tau2" / "domains" / domain, root / "data" / domain):
        if (folder / name).is_file():
            return (folder / name).resolve()
    raise SystemExit(f"no {name} for {domain} under {root / 'data'}")


def _yields(home: Path) -> list[tuple[str, int, str, str | None]]:
    """(environment, published tasks, status, reason) of every environment of the build."""
    import duckdb

    from synthesis.export.warehouse import warehouse_path

    with duckdb.connect(str(warehouse_path(home)), read_only=True) as con:
        return con.sql(
            """
            select e.env_id, count(s.scenario_id) as published, e.status, e.reason
            from environments e
            left join scenarios s on s.env_id = e.env_id and s.status = 'published'
            group by e.env_id, e.status, e.reason
            order by e.env_id
            """
        ).fetchall()


if __name__ == "__main__":
    raise SystemExit(main())
