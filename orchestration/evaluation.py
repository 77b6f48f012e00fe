"""`envfoundry eval` with the home's Dagster instance: the engine's command
(synthesis/evaluation/command.py), then the model it evaluated added as a partition of the
`evaluation` asset (assets/evaluation.py), so the UI lists it beside the dataset it scored
and `eval_job` can materialize it there (what is recorded is not played again).

A home without an instance (never built here, or a dataset copied without `dagster/`) is
evaluated all the same; a partition that cannot be added is said on stderr and changes
nothing of the eval's exit status.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from orchestration import instance


def eval_main(argv: list[str], *, out: Callable[[str], None] = print) -> int:
    """`envfoundry eval ARGS`: the command's exit status, the model registered on the way."""
    from synthesis.config import envfoundry_home
    from synthesis.evaluation import command

    code = command.eval_main(argv, out=out)  # a command line it refuses exits in there
    args = command.parser().parse_args(argv)
    if getattr(args, "model", None) is None:  # a mode that plays no model
        return code
    home = (args.home or envfoundry_home()).resolve()
    try:
        if recorded(home, args.model) and register_model(home, args.model):
            out(
                f"Dagster: {args.model!r} is a partition of asset `evaluation` in this home's "
                f"instance; materialize it (eval_job) in `envfoundry ui --home {home}` to see "
                "these results beside the dataset they scored (nothing recorded is played again)"
            )
    except Exception as exc:  # noqa: BLE001 - the eval is done and recorded either way
        sys.stderr.write(
            f"envfoundry eval: the results are recorded, but {args.model} was not added as a "
            f"partition in {home / 'dagster'}: {type(exc).__name__}: {exc}\n"
        )
    return code


def recorded(home: Path, model: str) -> bool:
    """Whether the home's evaluations hold an episode of `model` (an eval that could not run
    at all adds no partition). False too while another eval writes them (DuckDB lets no other
    process read the file then): the eval refused here played nothing, and the next one that
    records the model adds it."""
    from synthesis.evaluation.dataset import EvalError
    from synthesis.evaluation.store import evals_path, read_evals

    path = evals_path(home)
    if not path.is_file():
        return False
    try:
        con = read_evals(path)
    except EvalError:
        return False
    with con:
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'eval_episodes'"
        ).fetchone()
        if not found or not found[0]:
            return False
        row = con.execute("SELECT count(*) FROM eval_episodes WHERE model = ?", [model]).fetchone()
    return bool(row and row[0])


def register_model(home: Path, model: str) -> bool:
    """Add `model` to the `eval_models` partitions of the home's Dagster instance (nothing
    when it is there already). False when the home has no instance."""
    dagster_home = home / "dagster"
    config = dagster_home / "dagster.yaml"
    if not config.is_file():
        return False
    # A home copied or moved since its last build names its old place; the storage refuses
    # that until the config points here, as `envfoundry build` and `envfoundry ui` make it.
    if json.dumps(str(dagster_home.resolve())) not in config.read_text():
        instance.prepare(home)
    import dagster as dg

    from assets.evaluation import eval_model_partitions

    with dg.DagsterInstance.from_config(str(dagster_home)) as dagster_instance:
        name = eval_model_partitions.name
        if not dagster_instance.has_dynamic_partition(name, model):
            dagster_instance.add_dynamic_partitions(name, [model])
    return True
