"""A virtualenv with only the standard library and `datasets`: what a trainer without
EnvFoundry has. Made once per `datasets` version and Python, kept in the temp folder so
reruns cost nothing; tests skip (saying why) only when pip cannot reach the registry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

DATASETS_VERSION = "5.2.0"


def venv_dir() -> Path:
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    base = Path(os.environ.get("ENVFOUNDRY_TEST_CACHE") or tempfile.gettempdir())
    return base / f"envfoundry-clean-venv-datasets-{DATASETS_VERSION}-{tag}"


def clean_python() -> Path:
    """The clean virtualenv's python, made if it is not there yet."""
    target = venv_dir()
    python = target / "bin" / "python"
    if python.exists():
        return python
    # Made aside and renamed into place: a run killed halfway (or a concurrent one) never
    # leaves a half-installed venv under the final name.
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(partial)], check=True)
    pip = subprocess.run(
        [
            str(partial / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"datasets=={DATASETS_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.skip(f"pip could not install datasets=={DATASETS_VERSION}: {pip.stderr[-500:]}")
    try:
        partial.rename(target)
    except OSError:  # another run got there first
        shutil.rmtree(partial, ignore_errors=True)
    return python


def run_clean(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`script` run by the clean venv's python in isolated mode (-I: no PYTHONPATH, no user
    site, not even the script's folder on sys.path), offline for the hub, writing no
    bytecode (-B: modules it imports from a shared build's folders leave no cache there)."""
    path = cwd / "clean_script.py"
    path.write_text(script)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cwd),
        "HF_HOME": str(cwd / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    return subprocess.run(
        [str(clean_python()), "-I", "-B", str(path), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
