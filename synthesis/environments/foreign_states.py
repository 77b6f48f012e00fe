"""Initial states for foreign environments: their own default, a states file, seeded variants.

Each state is what the environment is loaded from, validated in the sandbox: it loads, the
environment reports its state (the dump), and loading it again reports the same. When the
dump is not what was loaded (a BFCL class loads a config and reports objects), both are kept:
the environment is loaded from one, checks compare the other. Variants are new records and
values sampled from the value pools the state already has, with references kept intact, so
each is as plausible as its source.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.environments.inference import find_collections
from synthesis.environments.runtime import sandbox_source
from synthesis.hashing import derive_seed, short_id
from synthesis.models import Environment, InitialState

MAX_NEW_RECORDS = 3


class ForeignStateError(RuntimeError):
    """The environment cannot load or report its state; the reason says which."""


def load_and_dump(env: Environment, state: dict[str, Any] | None, *, backend: str) -> dict:
    """What the environment reports right after loading `state` (None: its own defaults)."""
    from sandboxes import open_session

    with open_session(sandbox_source(env), state, backend=backend) as session:
        if session.status != "ok":
            raise ForeignStateError(session.reason or "the environment failed to load")
        if not session.tools:
            raise ForeignStateError("the class exposes no tools (no public methods)")
        dump = session.final_state()
        if dump is None:
            raise ForeignStateError(session.reason or "the environment's state is unavailable")
    return dump


def read_states_file(path: str | Path) -> list[dict[str, Any]]:
    """The states listed in a states file: `<source>.states.json` or the `@STATEFILE` of a
    source (JSON: a list of states, or one state; TOML: one state)."""
    try:
        if str(path).lower().endswith(".toml"):
            import tomllib

            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        else:
            data = codec.read_json(path)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ForeignStateError(f"states file {path}: {exc}") from exc
    states = data if isinstance(data, list) else [data]
    bad = [i for i, s in enumerate(states) if not isinstance(s, dict)]
    if bad:
        raise ForeignStateError(f"states file {path}: entries {bad} are not JSON objects")
    return states


def build_foreign_states(
    env: Environment,
    *,
    seed: int,
    count: int,
    states_path: str | None = None,
    backend: str = "auto",
) -> list[InitialState]:
    """At least `count` initial states where the class allows, defaults first.

    Raises ForeignStateError when the class does not load or report its default state.
    """
    bases: list[tuple[dict[str, Any] | None, dict[str, Any], str]] = []
    try:
        default_dump = load_and_dump(env, None, backend=backend)
    except ForeignStateError as exc:
        # A class that needs its config (no defaults) can still run from its states file.
        if not states_path:
            raise
        no_default = str(exc)
    else:
        no_default = None
        bases.append((_default_input(env, default_dump, backend), default_dump, "default"))
    refused: list[str] = []
    if states_path:
        for i, state in enumerate(read_states_file(states_path)):
            try:
                dump = validated(env, state, backend)
            except ForeignStateError as exc:
                refused.append(f"state {i} of {Path(states_path).name}: {exc}")
                continue
            bases.append((state, dump, f"file:{Path(states_path).name}#{i}"))
    if not bases:
        reasons = ([f"the class's default: {no_default}"] if no_default else []) + refused
        raise ForeignStateError(
            "; ".join(reasons) or "neither the class's default nor any listed state loads"
        )
    out: list[InitialState] = []
    seen: set[str] = set()

    def keep(state: dict | None, dump: dict, origin: str) -> None:
        key = codec.dumps_str(dump)
        if key in seen:
            return
        seen.add(key)
        index = len(out)
        digest = short_id(env.env_id, seed, index, state, length=6)
        out.append(
            InitialState(
                state_id=f"{env.env_id}-s{index}-{digest}",
                env_id=env.env_id,
                seed=derive_seed("initial_state", env.env_id, seed, index),
                state=state,
                dump=None if dump == state else dump,
                provenance={"origin": origin},
            )
        )

    for state, dump, origin in bases:
        keep(state, dump, origin)
    # Variants are made by editing a state the class both reports and loads back (its dump),
    # so only such states can seed them, and only when loading the dump gives a class that
    # behaves like the original (a dump turns dataclass records into dicts and a Random
    # into nothing; loading that back can leave a class that no longer works).
    round_trips = [
        (d, d, o)
        for s, d, o in bases
        if s == d or (_round_trips(env, d, backend) and _same_behaviour(env, s, d, backend))
    ]
    attempt = 0
    while len(out) < count and round_trips and attempt < count * 3:
        state, _, origin = round_trips[attempt % len(round_trips)]
        rng = random.Random(derive_seed("augment", env.env_id, seed, attempt))
        attempt += 1
        variant = augment_state(state, rng)
        if variant == state:
            continue
        dump = _validated(env, variant, backend)
        if dump is not None and dump == variant:
            keep(variant, dump, f"augmented:{origin}")
    return out


def _default_input(env: Environment, default_dump: dict, backend: str) -> dict | None:
    """What to load to get the defaults: `{}` (the class fills in its own), else the dump
    itself when loading it reports it back, else nothing (None: construct it bare)."""
    for candidate in ({}, default_dump):
        try:
            if load_and_dump(env, copy.deepcopy(candidate), backend=backend) == default_dump:
                return copy.deepcopy(candidate)
        except ForeignStateError:
            continue
    return None


def _round_trips(env: Environment, state: dict, backend: str) -> bool:
    try:
        return load_and_dump(env, copy.deepcopy(state), backend=backend) == state
    except ForeignStateError:
        return False


def _same_behaviour(env: Environment, a: dict, b: dict, backend: str) -> bool:
    """Whether the same calls give the same answers after loading `a` and after loading `b`.

    Every tool is called once, with arguments drawn from what loading `a` reports.
    """
    from sandboxes import run_episode
    from synthesis.environments.arguments import ValuePools, candidates
    from synthesis.environments.model import from_analysis

    reported = load_and_dump(env, copy.deepcopy(a), backend=backend)
    pools = ValuePools.from_states([reported])
    rng = random.Random(derive_seed("same_behaviour", env.env_id))
    calls = []
    for tool in from_analysis(env).tools:
        args = {}
        for p in tool.params:
            values = candidates(tool, p, pools, rng)
            if values and p.required:
                args[p.name] = values[0]
        calls.append((tool.name, args))
    source = sandbox_source(env)
    runs = [run_episode(source, copy.deepcopy(state), calls, backend=backend) for state in (a, b)]
    answers = [[(r.ok, r.result, r.error) for r in run.results] for run in runs]
    return runs[0].status == runs[1].status == "ok" and answers[0] == answers[1]


def _validated(env: Environment, state: dict, backend: str) -> dict | None:
    """The dump of `state` when it loads and reports the same thing twice, else None."""
    try:
        return validated(env, state, backend)
    except ForeignStateError:
        return None


def validated(env: Environment, state: dict, backend: str) -> dict:
    """The dump of `state` when it loads and reports the same thing twice; else
    ForeignStateError saying which it failed."""
    first = load_and_dump(env, copy.deepcopy(state), backend=backend)
    second = load_and_dump(env, copy.deepcopy(state), backend=backend)
    if first != second:
        raise ForeignStateError("loaded twice, it reports two different states")
    return first


# --------------------------------------------------------------------------- augmentation


def augment_state(state: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A variant of `state`: new records in its collections, values drawn from its own pools.

    Ids follow the collection's own form (`TCK-0007` -> `TCK-0008`, 7 -> 8); fields that
    point at other records keep pointing at records that exist; unique human fields (names,
    emails) are recombined from the parts of existing ones and must stay unique.
    """
    out = copy.deepcopy(state)
    for coll in find_collections([state]):
        if coll.shape == "index" or not coll.records_in(out):
            continue
        for _ in range(rng.randint(1, MAX_NEW_RECORDS)):
            records = coll.records_in(out)
            template = rng.choice(records)
            new_id = _next_id(coll.ids_in(out))
            if new_id is None:
                break
            record = _resample(template, records, coll, rng)
            if record is None:
                continue
            if coll.id_field in record:
                old = template.get(coll.id_field)
                record[coll.id_field] = (
                    int(new_id) if isinstance(old, int) and str(new_id).isdigit() else new_id
                )
            _insert(out, coll, new_id, record)
    return out


def _next_id(ids: Sequence[Any]) -> Any:
    ints = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
    if ints and len(ints) == len(ids):
        return max(ints) + 1
    texts = [str(i) for i in ids]
    numbered = [re.match(r"^(.*?)(\d+)$", t) for t in texts]
    if numbered and all(numbered):
        prefix = numbered[0].group(1)
        width = len(numbered[0].group(2))
        top = max(int(m.group(2)) for m in numbered if m.group(1) == prefix)
        return f"{prefix}{top + 1:0{width}d}"
    return None


def _resample(
    template: dict, records: list[dict], coll: Any, rng: random.Random
) -> dict[str, Any] | None:
    record = dict(template)
    for name, value in template.items():
        if name == coll.id_field or isinstance(value, (dict, list)):
            continue
        pool = [r.get(name) for r in records if name in r and not isinstance(r[name], (dict, list))]
        if name in coll.lookup_fields:
            fresh = _recombine(name, pool, rng)
            if fresh is None:
                return None
            record[name] = fresh
        elif pool:
            record[name] = rng.choice(pool)
    return record


def _recombine(name: str, pool: list[Any], rng: random.Random) -> str | None:
    """A new unique text made of parts of existing ones ('Ada Byron' + 'Alan Turing')."""
    taken = {str(v).casefold() for v in pool}
    texts = [str(v) for v in pool if isinstance(v, str)]
    for _ in range(20):
        a, b = rng.choice(texts), rng.choice(texts)
        if "@" in a and "@" in b:
            candidate = (
                a.split("@")[0] + "." + b.split("@")[0].split(".")[-1] + "@" + b.split("@")[1]
            )
        else:
            left, right = a.split(" "), b.split(" ")
            candidate = " ".join(left[: max(1, len(left) // 2)] + right[len(right) // 2 :])
        if candidate.casefold() not in taken:
            return candidate
    return None


def _insert(state: dict, coll: Any, new_id: Any, record: dict) -> None:
    value = state[coll.attribute]
    if coll.shape == "keyed":
        value[str(new_id) if all(isinstance(k, str) for k in value) else new_id] = record
    else:
        value.append(record)
