"""Pictures of the Dagster UI on a real build, for the README (`make screenshots`).

    python docs/screenshots.py [--home DIR] [--out docs/images]

Builds a tiny home with `envfoundry build` unless `--home` names one already built, serves it
with `envfoundry ui`, and has a headless Chromium photograph the asset lineage, one
environment's partition of the `checks` asset and that asset's self-test checks. Where no
Chromium or Chrome is installed it says so and does nothing (exit 0): the pictures in the
repository stay as they are.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestration.ui import graphql, served  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# What the browser waits for before the picture: the UI's queries finishing (virtual time
# runs as fast as the page lets it, so this costs far less than it says).
PAGE_TIME_MS = 20000
WINDOW = "1600,1000"


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def pages(env_id: str) -> dict[str, str]:
    """Picture name → UI path."""
    partition = urllib.parse.quote(env_id)
    return {
        "lineage": "/asset-groups",
        "lineage-warehouse": "/locations/envfoundry/asset-groups/warehouse",
        "partition": f"/assets/checks?view=partitions&partition={partition}",
        "checks": "/assets/checks?view=checks",
    }


def photograph(chrome: str, url: str, out: Path) -> None:
    command = [
        chrome,
        "--headless=new",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--window-size={WINDOW}",
        f"--virtual-time-budget={PAGE_TIME_MS}",
        f"--screenshot={out}",
        url,
    ]
    if os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # Chromium refuses to run as root otherwise
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"{chrome} could not photograph {url}: {done.stderr[-500:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="a built home (default: build a tiny one)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    options = parser.parse_args()
    chrome = browser()
    if chrome is None:
        print(
            "screenshots skipped: no Chromium or Chrome on this machine "
            "(Debian/Ubuntu: apt-get install chromium)"
        )
        return 0
    home = options.home
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="envfoundry-screens-")) / "home"
        build = [sys.executable, "-m", "orchestration.cli", "build", "--profile", "tiny"]
        if subprocess.run([*build, "--home", str(home)], cwd=REPO).returncode != 0:
            return 1
    env_ids = sorted(p.stem for p in (home / "artifacts" / "checks").glob("*.json"))
    if not env_ids:
        print(f"{home} holds no built environment: build it first")
        return 1
    options.out.mkdir(parents=True, exist_ok=True)
    with served(home) as url:
        graphql(url, "mutation { setNuxSeen }")  # the first-visit newsletter dialog
        for name, path in pages(env_ids[0]).items():
            target = options.out / f"ui-{name}.png"
            photograph(chrome, url + path, target)
            print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
