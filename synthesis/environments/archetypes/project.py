"""Project archetype: a team's shared folder of data, worked on with files and a shell.

A workspace environment (the state is the sandbox's workspace directory) whose files are a
project's: monthly CSV ledgers under `data/` with the noise real folders have (a stale
backup, last year's files, amounts with thousands separators, rows a README rule excludes,
Windows line endings, a byte-order mark), a README saying which rows count, a report
configuration and an import log (synthesis.environments.projects). Tasks are work over the
data: read the rules, pick the files, filter, aggregate, write a report
(synthesis.tasks.projects). The tools are the workspace verbs an agent harness gives:
list, read (whole or head/tail), search, write, edit, and `run`, a shell command in the
sandbox.

Vocabulary keys: title, ledger (the files' stem: "sales"), group_field and groups (what a
report totals by: region North/South/...), item_field and items ({name: [low, high]} amounts),
amount_field, status_field, statuses (rows that count) and void_statuses (rows that do not),
currency.
"""

from __future__ import annotations

from typing import Any

from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.workspace import file_tree_spec, is_verb
from synthesis.environments.workspace_verbs import WorkspaceVerbs
from synthesis.models import EnvSpec, Topic

FAMILY = "project"
# Every project environment reads, searches, writes and runs; a topic's `features` add the
# optional verbs it has, so environments of this archetype differ in program shape.
CORE_VERBS = ("ls", "tree", "cat", "grep", "write", "run")
OPTIONAL_VERBS = ("head", "tail", "wc", "stat", "find", "mkdir", "cp", "mv", "rm", "replace")
REQUIRED = (
    "title",
    "ledger",
    "group_field",
    "groups",
    "item_field",
    "items",
    "status_field",
    "statuses",
    "void_statuses",
)


@register_archetype("project")
def build_project_spec(topic: Topic) -> EnvSpec:
    vocab: dict[str, Any] = dict(topic.vocabulary)
    missing = [key for key in REQUIRED if key not in vocab]
    if missing:
        raise KeyError(f"project vocabulary misses {missing}")
    features = [str(f) for f in vocab.get("features", [])]
    chosen = set(CORE_VERBS) | set(features)
    # In the verbs' own order, as the workspace archetype keeps them.
    verbs = [name for name in vars(WorkspaceVerbs) if name in chosen and is_verb(name)]
    workspace = {
        "family": FAMILY,
        **{key: vocab[key] for key in REQUIRED},
        "amount_field": vocab.get("amount_field", "amount"),
        "currency": vocab.get("currency", "USD"),
        "features": features,
        "folders": ["data", "reports", "config", "logs", "archive"],
    }
    rules = [
        "Commands run in the workspace folder with no network and stop at their timeout.",
        "The folder's README says which files and rows are the project's data.",
        "Scratch files belong in /tmp: the workspace keeps only what a task asks for.",
    ]
    return file_tree_spec(topic, "project", "file", verbs, rules, workspace)


def validate_project_spec(spec: EnvSpec) -> list[str]:
    """Every problem of a project spec: its tools are verbs, its vocabulary makes a folder."""
    from synthesis.environments.projects.folder import project_folder

    ws = spec.workspace or {}
    missing = [f"project vocabulary misses {key!r}" for key in REQUIRED if key not in ws]
    if missing:
        return missing
    names = [t.name for t in spec.tools]
    problems = [f"tool {name}: not a workspace verb" for name in names if not is_verb(name)]
    missing = [verb for verb in CORE_VERBS if verb not in names]
    if missing:
        problems.append(f"core verbs missing: {missing}")
    unknown = [f for f in ws.get("features") or [] if f not in OPTIONAL_VERBS]
    if unknown:
        problems.append(f"unknown project features {unknown} (known: {', '.join(OPTIONAL_VERBS)})")
    items = ws["items"]
    if not isinstance(items, dict) or not items:
        problems.append("items must map names to [low, high] amounts")
    else:
        for name, bounds in items.items():
            if not (isinstance(bounds, list) and len(bounds) == 2 and 0 < bounds[0] <= bounds[1]):
                problems.append(f"item {name!r}: amounts must be [low, high], 0 < low <= high")
    for key in ("groups", "statuses", "void_statuses"):
        if (
            not isinstance(ws[key], list)
            or not ws[key]
            or not all(isinstance(v, str) and v and "," not in v for v in ws[key])
        ):
            problems.append(f"{key} must be a non-empty list of names without commas")
    named = all(
        isinstance(ws[k], list) and all(isinstance(v, str) for v in ws[k])
        for k in ("statuses", "void_statuses")
    )
    if named and set(ws["statuses"]) & set(ws["void_statuses"]):
        problems.append("a status cannot both count and be void")
    if problems:
        return problems
    try:
        project_folder(ws, 0)
    except (KeyError, ValueError, TypeError) as exc:
        problems.append(f"the vocabulary makes no folder: {exc}")
    return problems
