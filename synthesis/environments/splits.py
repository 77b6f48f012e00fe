"""Train and test by program shape, so the test split measures generalization to new programs.

An environment's split is a pure function of its archetype and its program shape
(synthesis.environments.shape), decided inside its own partition: every environment of one
shape is on one side, so no test environment shares a program with a train one.

* A shape is test when its hash bucket, salted with the archetype, falls in the lowest
  `TEST_PERCENT` of 100. Whether a shape is test depends on nothing else, except that an
  archetype with at least two shapes always gets a test shape and a train shape: when no
  bucket falls low, the shape with the lowest hash is test; when all do, the one with the
  highest is train. For that the partition knows the shapes of the other environments of its
  archetype in this build: compiled code is a pure function of the spec (compiling one takes
  about a millisecond) and a foreign class's code is in its source record.
* An archetype with a single program shape cannot be split without a program on both sides:
  one environment alone is train (a tiny build, one environment per archetype, has no test
  split); two or more environments sharing one shape fail the build (below).
* Held-out archetypes (`--holdout-archetypes`) are test as a whole.
* At publish, `split_problems` looks across environments: an archetype with two or more
  accepted environments and no test environment (its test shapes' environments were all
  quarantined, or all of them share one program shape), or a shape on both sides, fails the
  build, naming it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from synthesis.environments.build import environment_code
from synthesis.environments.shape import program_shape
from synthesis.hashing import content_hash
from synthesis.models import Environment, EnvSpec

Split = Literal["train", "test"]
TEST_PERCENT = 20
# Foreign classes have no archetype of their own; they share this one (foreign.py).
FOREIGN_ARCHETYPE = "foreign"


def _rank(archetype: str, shape: str) -> str:
    return content_hash(["split", archetype, shape])


def _bucket(archetype: str, shape: str) -> int:
    return int(_rank(archetype, shape)[:8], 16) % 100


def held_out_shapes(archetype: str, shapes: Iterable[str]) -> frozenset[str]:
    """The program shapes of `archetype` that are test, among all of its `shapes`."""
    distinct = sorted(set(shapes))
    if len(distinct) < 2:
        return frozenset()
    ranked = sorted(distinct, key=lambda s: _rank(archetype, s))
    test = {s for s in distinct if _bucket(archetype, s) < TEST_PERCENT}
    if not test:
        test = {ranked[0]}
    elif len(test) == len(distinct):
        test.discard(ranked[-1])
    return frozenset(test)


def split_for(
    archetype: str,
    shape: str | None,
    archetype_shapes: Iterable[str],
    holdout: Iterable[str] = (),
) -> Split:
    """The split of an environment of `archetype` and `shape`, among its archetype's shapes."""
    if archetype in set(holdout):
        return "test"
    if shape is None:
        return "train"  # code that does not parse is quarantined; it has no program to hold out
    return "test" if shape in held_out_shapes(archetype, archetype_shapes) else "train"


def build_shapes(
    specs: Iterable[EnvSpec],
    foreign_sources: Iterable[Mapping[str, Any]] = (),
    shape_of: Callable[[str, str | None], str | None] = program_shape,
) -> dict[str, set[str]]:
    """Archetype → the program shapes of this build's environments (specs compiled as the
    build compiles them: a workspace spec's class is the workspace compiler's, foreign
    classes as their source records hold them). `shape_of`: `program_shape`, or one that
    keeps shapes between builds (shape_memo.ShapeMemo.shape)."""
    shapes: dict[str, set[str]] = defaultdict(set)
    for spec in specs:
        try:
            code = environment_code(spec)
        except Exception:  # noqa: BLE001 - its own partition quarantines it with the reason
            continue
        shape = shape_of(code, spec.class_name)
        if shape is not None:
            shapes[spec.archetype].add(shape)
    for source in foreign_sources:
        code = source.get("code")
        shape = shape_of(code, source.get("class_name")) if code else None
        if shape is not None:
            shapes[FOREIGN_ARCHETYPE].add(shape)
    return dict(shapes)


def with_split(
    env: Environment, shapes: Mapping[str, Iterable[str]], holdout: Iterable[str] = ()
) -> Environment:
    """`env` with its program shape and split recorded."""
    shape = program_shape(env.code, env.class_name)
    siblings = {*shapes.get(env.archetype, ()), *([shape] if shape else [])}
    split = split_for(env.archetype, shape, siblings, holdout)
    return env.model_copy(update={"program_shape": shape, "split": split})


def environment_split(env: Environment) -> Split:
    """The split of `env`'s tasks: as its build decided it; an environment made outside a
    build (a notebook, a test) is train."""
    return env.split or "train"


def split_problems(envs: Iterable[Environment], holdout: Iterable[str] = ()) -> list[str]:
    """Why this build's splits do not measure generalization, one line each (none: they do).

    Looks at the accepted environments: a program shape on both sides, and an archetype with
    at least two environments but no test environment (a held-out archetype is all test).
    """
    held = set(holdout)
    by_archetype: dict[str, list[Environment]] = defaultdict(list)
    for env in envs:
        if env.status == "accepted":
            by_archetype[env.archetype].append(env)
    problems = []
    for archetype in sorted(by_archetype):
        members = sorted(by_archetype[archetype], key=lambda e: e.env_id)
        sides: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for env in members:
            if env.program_shape:
                sides[env.program_shape][environment_split(env)].append(env.env_id)
        for shape in sorted(sides):
            if len(sides[shape]) > 1:
                problems.append(
                    f"archetype {archetype!r}: program shape {shape} is in train "
                    f"({', '.join(sides[shape]['train'])}) and in test "
                    f"({', '.join(sides[shape]['test'])})"
                )
        has_test = any(environment_split(e) == "test" for e in members)
        if has_test or archetype in held:
            continue
        if len(sides) >= 2:
            problems.append(
                f"archetype {archetype!r} has {len(sides)} program shapes among its accepted "
                f"environments ({', '.join(e.env_id for e in members)}) but no test "
                "environment: the environments of its test shapes were quarantined or failed"
            )
        elif len(members) >= 2:
            problems.append(
                f"archetype {archetype!r} has {len(members)} accepted environments "
                f"({', '.join(e.env_id for e in members)}) that all share one program shape, "
                "so none can be held out for test: its environments differ only in names "
                "(give the archetype optional features, or hold it out whole)"
            )
    return problems


def single_shape_archetypes(envs: Iterable[Environment]) -> list[str]:
    """Archetypes whose accepted environments share one program shape (all train)."""
    shapes: dict[str, set[str]] = defaultdict(set)
    for env in envs:
        if env.status == "accepted" and env.program_shape:
            shapes[env.archetype].add(env.program_shape)
    return sorted(a for a, s in shapes.items() if len(s) == 1)


def parse_holdout(text: str) -> list[str]:
    """`ledger, inventory` → ['inventory', 'ledger'] (sorted, no repeats, no blanks)."""
    return sorted({name.strip() for name in text.split(",") if name.strip()})
