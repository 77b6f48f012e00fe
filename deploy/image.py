"""Build the code-location image offline, or find it built: prints its tag.

The tag is a hash of everything that goes into the image (the Dockerfile, the lock file, the
base image's id, the checkout's files and where they live, the docker CLI), so a second
`make deploy-local` with nothing changed skips the build in a second. The lock's wheels are
downloaded on the host into a cache outside the repository (pip inside a container cannot
reach an index here) and installed in the image with `--no-index`.

    python deploy/image.py --wheels DIR [--base local/python:3.11] [--extra bfcl-eval==V]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synthesis.hashing import content_hash, sha256_file  # noqa: E402

REPOSITORY = "envfoundry/code-location"
DOCKERFILE = Path(__file__).with_name("Dockerfile")
LOCK = REPO / "requirements.lock"
# Never part of the image: local state and what git ignores anyway.
_SKIPPED = {
    ".git",
    ".venv",
    "var",
    "build",
    "envfoundry.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
}


def fail(message: str) -> None:
    print(f"deploy/image.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def docker(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, **kwargs)
    if check and done.returncode != 0:
        fail(f"docker {args[0]} failed: {done.stderr.strip()[-800:]}")
    return done


def checkout_files() -> list[str]:
    """The checkout's files, relative to the repository: what git tracks plus new files it
    does not ignore (a fresh edit is part of the image), or every file outside local state
    when this is not a git checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
    )
    if listed.returncode == 0:
        names = {n for n in listed.stdout.decode().split("\0") if n}
    else:
        names = {
            str(p.relative_to(REPO))
            for p in REPO.rglob("*")
            if p.is_file() and not _SKIPPED & set(p.relative_to(REPO).parts)
        }
    return sorted(n for n in names if (REPO / n).is_file() and not (REPO / n).is_symlink())


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def pinned(lines: list[str]) -> list[tuple[str, str]]:
    pins = []
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            if not sep:
                fail(f"not an exact pin: {line!r}")
            pins.append((name.strip(), version.strip()))
    return pins


def wheels_for(pins: list[tuple[str, str]], wheels: Path) -> list[Path]:
    """The one wheel of each pin in the cache, downloading (or, for an sdist, building) the
    missing ones on the host."""
    wheels.mkdir(parents=True, exist_ok=True)

    def find(name: str, version: str) -> Path | None:
        for wheel in sorted(wheels.glob("*.whl")):
            distribution, wheel_version = wheel.name.split("-")[:2]
            if _normal(distribution) == _normal(name) and wheel_version == version:
                return wheel
        return None

    missing = [f"{n}=={v}" for n, v in pins if find(n, v) is None]
    if missing:
        print(f"downloading {len(missing)} wheel(s) into {wheels}", file=sys.stderr)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels)]
            + missing,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "is ignored" not in line]
            fail("pip wheel failed: " + "\n".join(errors)[-800:])
    found = [find(n, v) for n, v in pins]
    absent = [f"{n}=={v}" for (n, v), w in zip(pins, found, strict=True) if w is None]
    if absent:
        fail(f"no wheel for {', '.join(absent)} in {wheels}")
    return found


def project_wheel(target: Path) -> None:
    """The project itself as a wheel, built on the host (its build back end comes from the
    index): installed --no-deps, it gives the image the `envfoundry` command and the package
    version the dataset card names, as `make install` gives the venv."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(target),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "is ignored" not in line]
        fail("building the project's wheel failed: " + "\n".join(errors)[-800:])


def image_tag(base_id: str, files: list[str], extras: list[str], docker_cli: Path) -> str:
    digest = content_hash(
        {
            "dockerfile": DOCKERFILE.read_text(),
            "lock": LOCK.read_text(),
            "extras": extras,
            "base": base_id,
            "app_dir": str(REPO),
            "files": [[name, sha256_file(REPO / name)] for name in files],
            "docker_cli": sha256_file(docker_cli),
        }
    )
    return f"{REPOSITORY}:{digest[:16]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, required=True, help="the host's wheel cache")
    parser.add_argument("--base", default="local/python:3.11", help="the image built FROM")
    parser.add_argument(
        "--extra", action="append", default=[], help="a pinned package installed --no-deps"
    )
    args = parser.parse_args(argv)
    cli = shutil.which("docker")
    if cli is None:
        fail("the docker CLI is not installed (deploy/provision-docker.sh installs it)")
    base = docker("image", "inspect", "--format", "{{.Id}}", args.base, check=False)
    if base.returncode != 0:
        fail(f"the base image {args.base} is missing (deploy/provision-docker.sh builds it)")
    files = checkout_files()
    tag = image_tag(base.stdout.strip(), files, args.extra, Path(cli))
    if docker("image", "inspect", tag, check=False).returncode == 0:
        print(tag)
        return 0
    pins = pinned(LOCK.read_text().splitlines())
    wheels = wheels_for(pins + pinned(args.extra), args.wheels.resolve())
    with tempfile.TemporaryDirectory(prefix="envfoundry-image-") as tmp:
        context = Path(tmp)
        shutil.copyfile(DOCKERFILE, context / "Dockerfile")
        shutil.copyfile(LOCK, context / "requirements.lock")
        (context / "wheels").mkdir()
        for wheel in wheels:
            try:
                os.link(wheel, context / "wheels" / wheel.name)
            except OSError:  # another file system
                shutil.copyfile(wheel, context / "wheels" / wheel.name)
        project_wheel(context / "project")
        shutil.copyfile(cli, context / "docker")
        (context / "docker").chmod(0o755)
        with tarfile.open(context / "app.tar", "w") as tar:
            for name in files:
                tar.add(REPO / name, arcname=name, recursive=False)
        print(f"building {tag} (from {args.base})", file=sys.stderr)
        docker(
            "build",
            "--quiet",
            "--tag",
            tag,
            "--build-arg",
            f"BASE={args.base}",
            "--build-arg",
            f"APP_DIR={REPO}",
            str(context),
            env={**os.environ, "DOCKER_BUILDKIT": "0"},
            timeout=1800,
        )
    print(tag)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
