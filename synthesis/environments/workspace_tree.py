"""Initial workspaces: a seeded file tree of realistic documents, confirmed in the sandbox.

A document is "Key: value" header lines, a blank line, then body text; its file name comes
from one header value. Values repeat across documents on purpose (the same client on
several invoices, the same photographer on many photos), so a task has to name its file by
something that singles it out. The state is what the worker seeds the workspace from, in
the very form its snapshot reports, and the sandbox confirms it reads back unchanged.
"""

from __future__ import annotations

import posixpath
import random
import re
from typing import Any

from synthesis.environments.runtime import sandbox_source
from synthesis.hashing import derive_seed, short_id
from synthesis.models import Environment, EnvSpec, InitialState
from synthesis.wordbank import FIRST_NAMES, LAST_NAMES

WORKSPACE_KEY = "__workspace__"  # the sandbox's key (sandboxes.WORKSPACE_KEY)
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
FILES_PER_RECORD = 3


def field_value(generator: Any, rng: random.Random, serial: int) -> str:
    """One header value: a choice from a list, or a named generator's draw."""
    if isinstance(generator, list):
        return str(rng.choice(generator))
    gen = str(generator)
    if gen == "person":
        return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    if gen.startswith("ref:"):
        return f"{gen[4:]}-{serial:04d}"
    if gen.startswith("money:"):
        low, high = (float(x) for x in gen.split(":")[1:3])
        return f"{rng.uniform(low, high):,.2f}"
    if gen.startswith("int:"):
        low, high = (int(x) for x in gen.split(":")[1:3])
        return str(rng.randint(low, high))
    if gen == "date":
        return f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.choice((2024, 2025))}"
    raise ValueError(f"unknown workspace value generator {gen!r}")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "file"


def parent_folders(path: str) -> list[str]:
    out = []
    parent = posixpath.dirname(path)
    while parent:
        out.append(parent)
        parent = posixpath.dirname(parent)
    return out


def seeded_tree(spec: EnvSpec, seed: int, n_files: int) -> dict[str, Any]:
    """The workspace as the sandbox snapshot reports it: files, every folder, no links."""
    ws = spec.workspace or {}
    rng = random.Random(seed)
    prefix = ws.get("header_prefix", "")
    folders = list(ws["folders"])
    # Folders that hold documents; the last one stays empty, a destination for moves.
    holders = folders[:-1] if len(folders) > 1 else folders
    serials = rng.sample(range(100, 9999), n_files)
    files: dict[str, str] = {}
    for n in range(n_files):
        header: dict[str, str] = {}
        for key, generator in ws["fields"].items():
            header[key] = field_value(generator, rng, serials[n])
        if ws.get("statuses"):
            header["Status"] = rng.choice(ws["statuses"])
        if ws.get("tags") and rng.random() < 0.4:
            header["Tags"] = rng.choice(ws["tags"])
        lines = [f"{prefix}{key}: {value}" for key, value in header.items()]
        body = rng.sample(ws.get("body") or [""], min(2, len(ws.get("body") or [""])))
        text = "\n".join(lines) + "\n\n" + "\n".join(body).strip() + "\n"
        name = slug(header[ws["name_field"]]) + ws.get("extension", ".txt")
        path = posixpath.join(rng.choice(holders), name)
        if path in files:
            stem, ext = posixpath.splitext(path)
            path = f"{stem}-{serials[n]}{ext}"
        files[path] = text
    if "trash" in ws.get("features", []):
        # Something already thrown away, so restoring has a subject.
        for path in sorted(files)[: max(1, n_files // 6)]:
            files[posixpath.join(".trash", path)] = files.pop(path)
    for path, text in ws.get("extra_files", {}).items():
        files[path] = text
    dirs = set(folders)
    for path in list(files) + folders:
        dirs.update(parent_folders(path))
    return {
        "files": dict(sorted(files.items())),
        "dirs": sorted(dirs),
        "symlinks": {},
        "skipped": {},
    }


def build_workspace_state(
    env: Environment,
    *,
    seed: int,
    index: int,
    records_per_entity: int,
    backend: str = "auto",
    pool: Any = None,
) -> InitialState:
    """Initial workspace `index` of an environment: a pure function of (env, seed, index).

    The tree is loaded into the environment in the sandbox and dumped back; what it reports
    is what checks compare against, and must be the tree as seeded. `pool`: the WorkerPool
    to take the session from (sandboxes.session_in), else a sandbox of its own.
    """
    from sandboxes import session_in

    spec = env.spec
    if spec is None or spec.workspace is None:
        raise ValueError(f"environment {env.env_id} has no workspace spec")
    state_seed = derive_seed("initial_state", env.env_id, seed, index)
    if spec.workspace.get("family") == "project":
        from synthesis.environments.projects.folder import project_folder

        tree = project_folder(spec.workspace, state_seed).tree()
    else:
        tree = seeded_tree(spec, state_seed, max(6, records_per_entity * FILES_PER_RECORD))
    state = {WORKSPACE_KEY: tree}
    with session_in(pool, sandbox_source(env), state, backend=backend) as session:
        reported = session.final_state()
        if session.status != "ok" or reported is None:
            raise RuntimeError(f"loading the workspace of {env.env_id} failed: {session.reason}")
    if reported != state:
        raise RuntimeError(f"the workspace of {env.env_id} does not read back as seeded")
    return InitialState(
        state_id=f"{env.env_id}-s{index}-{short_id(env.env_id, seed, index, state, length=6)}",
        env_id=env.env_id,
        seed=state_seed,
        state=state,
    )
