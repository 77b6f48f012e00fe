"""Virtualenvs with only a trainer's packages and no EnvFoundry: `datasets` (what a trainer
without EnvFoundry has), or the `verifiers` extra (what the shipped verifiers taskset runs
under; it pins openai<3, which the project's own lock does not hold). Each is made once per package
set and Python, kept in the temp folder so reruns cost nothing; tests skip (saying why) only
when pip cannot reach the registry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

DATASETS_VERSION = "5.2.0"
DATASETS = (f"datasets=={DATASETS_VERSION}",)
# The optional extra `envfoundry[verifiers]` as declared, without EnvFoundry itself.
VERIFIERS = tuple(
    tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["verifiers"]
)


def venv_dir(requirements: tuple[str, ...] = DATASETS) -> Path:
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    packages = "-".join(r.replace("==", "-") for r in requirements)
    base = Path(os.environ.get("ENVFOUNDRY_TEST_CACHE") or tempfile.gettempdir())
    return base / f"envfoundry-clean-venv-{packages}-{tag}"


def clean_python(requirements: tuple[str, ...] = DATASETS) -> Path:
    """The clean virtualenv's python, made if it is not there yet."""
    target = venv_dir(requirements)
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
            # Each venv runs a script or two, whose imports compile in memory (-B below) in
            # seconds; compiling every installed module (transformers, sympy, …) cost a
            # minute of CPU (verifiers: 44 s to install without, about 100 s with).
            "--no-compile",
            *requirements,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.skip(f"pip could not install {' '.join(requirements)}: {pip.stderr[-500:]}")
    try:
        partial.rename(target)
    except OSError:  # another run got there first
        shutil.rmtree(partial, ignore_errors=True)
    return python


def run_clean(
    script: str,
    *args: str,
    cwd: Path,
    requirements: tuple[str, ...] = DATASETS,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """`script` run by the clean venv's python in isolated mode (-I: no PYTHONPATH, no user
    site, not even the script's folder on sys.path), offline for the hub, writing no
    bytecode (-B, and PYTHONDONTWRITEBYTECODE for the processes it starts: modules they
    import from a shared build's folders leave no cache there). `env` adds variables."""
    path = cwd / "clean_script.py"
    path.write_text(script)
    variables = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cwd),
        "HF_HOME": str(cwd / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        **(env or {}),
    }
    return subprocess.run(
        [str(clean_python(requirements)), "-I", "-B", str(path), *args],
        cwd=cwd,
        env=variables,
        capture_output=True,
        text=True,
        timeout=300,
    )
