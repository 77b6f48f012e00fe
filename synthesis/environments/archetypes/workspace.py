"""Workspace archetype: a file tree operated by command-line verbs (ls, cat, grep, mv, tag ...).

The state is the sandbox's workspace directory (seeded per episode from the initial state's
"__workspace__" entry, snapshotted back into the final state), so checks read the final
workspace. A topic's vocabulary says what its documents are ("document", "fields" with
value generators, "folders", "body"), and which optional verbs and features it has
("features"): environments of this archetype differ in program shape, 8 to 30 tools each.

Vocabulary keys: document (noun), folders (seeded folders, some left empty as destinations),
fields (header key -> list of values or a generator: "person", "ref:PFX", "money:LO:HI",
"int:LO:HI", "date"), name_field (the header whose value names the file), extension,
header_prefix ("# " in code), describe (header key -> how a task names a document
by it, "issued on {v}"), body (lines), notes (lines to append), statuses, tags,
features, extra_files ({path: text}).
"""

from __future__ import annotations

import inspect
from typing import Any

from synthesis.environments.archetypes.naming import class_name
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.workspace_verbs import QUERY_VERBS, WorkspaceVerbs
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, ParamSpec, ToolSpec, Topic

# Every workspace environment has these; grep and find walk the tree.
CORE_VERBS = ("ls", "tree", "cat", "grep", "find", "mkdir", "mv")
# Features that are not one verb of the same name.
FEATURE_VERBS = {
    "status": ("set_status",),
    "tags": ("tag", "untag"),
    "trash": ("trash", "restore"),
    "log": (),
}
_OPERATION = {
    "ls": "list", "tree": "list", "grep": "list", "find": "list",
    "cat": "get", "head": "get", "tail": "get", "wc": "get", "stat": "get",
    "mkdir": "create", "touch": "create", "cp": "create",
    "rm": "transition", "rmdir": "transition", "archive": "transition",
    "trash": "transition", "restore": "transition",
}  # fmt: skip
_JSON_TYPES = {str: "string", int: "integer"}
LOG_FILE = ".activity.log"


def is_verb(name: str) -> bool:
    return not name.startswith("_") and callable(getattr(WorkspaceVerbs, name, None))


def workspace_verbs(features: list[str]) -> list[str]:
    """The verbs (tools) of an environment with `features`, in the class's order (unknown
    features are left to validate_workspace_spec to report)."""
    chosen = set(CORE_VERBS)
    for feature in features:
        if feature in FEATURE_VERBS:
            chosen.update(FEATURE_VERBS[feature])
        elif is_verb(feature):
            chosen.add(feature)
    return [name for name in vars(WorkspaceVerbs) if name in chosen]


def _verb_tool(verb: str, vocab: dict[str, Any]) -> ToolSpec:
    method = getattr(WorkspaceVerbs, verb)
    doc = inspect.getdoc(method) or verb
    summary = doc.split("\n\n")[0].strip()
    described = {}
    for line in doc.split("Args:")[-1].splitlines():
        name, sep, text = line.strip().partition(": ")
        if sep:
            described[name] = text
    params = []
    for p in list(inspect.signature(method).parameters.values())[1:]:
        enum = None
        if verb == "tag" and p.name == "tag":
            enum = list(vocab["tags"]) or None
        if verb == "set_status" and p.name == "status":
            enum = list(vocab["statuses"]) or None
        annotation = {"str": str, "int": int}.get(p.annotation, p.annotation)
        params.append(
            ParamSpec(
                name=p.name,
                type=_JSON_TYPES[annotation],
                description=described.get(p.name, p.name),
                required=p.default is inspect.Parameter.empty,
                enum=enum,
            )
        )
    return ToolSpec(
        name=verb,
        kind="query" if verb in QUERY_VERBS else "mutate",
        operation=_OPERATION.get(verb, "update"),
        entity="file",
        description=summary,
        params=params,
    )


@register_archetype("workspace")
def build_workspace_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary  # a missing key is reported by specgen as a SpecError
    features = list(vocab.get("features", []))
    verbs = workspace_verbs(features)
    document = str(vocab["document"])
    rules = ["A move, copy or rename never overwrites an existing file or folder."]
    if "status" in features:
        rules.append(f"A {document}'s status is one of: {', '.join(vocab.get('statuses', []))}.")
    if "tags" in features:
        rules.append(f"Tags come from a fixed list: {', '.join(vocab.get('tags', []))}.")
    if "archive" in features:
        rules.append("Archiving moves a file under archive/, keeping its folder path.")
    if "trash" in features:
        rules.append("Trashed files keep their path under .trash/ and can be restored.")
    if "log" in features:
        rules.append(f"Every change is recorded in {LOG_FILE}, which only the tools write.")
    workspace = {
        "document": document,
        "folders": list(vocab["folders"]),
        "fields": dict(vocab["fields"]),
        "describe": dict(vocab.get("describe", {})),
        "name_field": vocab["name_field"],
        "extension": vocab.get("extension", ".txt"),
        "header_prefix": vocab.get("header_prefix", ""),
        "body": list(vocab.get("body", [])),
        "notes": list(vocab.get("notes", [])),
        "statuses": list(vocab.get("statuses", [])) if "status" in features else [],
        "tags": list(vocab.get("tags", [])) if "tags" in features else [],
        "extra_files": dict(vocab.get("extra_files", {})),
        "features": features,
        "log": LOG_FILE if "log" in features else "",
    }
    return file_tree_spec(topic, "workspace", document, verbs, rules, workspace)


def file_tree_spec(
    topic: Topic,
    archetype: str,
    label: str,
    verbs: list[str],
    rules: list[str],
    workspace: dict[str, Any],
) -> EnvSpec:
    """The spec of an environment whose state is a file tree (this archetype's, a project's):
    one entity, the file, and the verbs as its tools."""
    entity = EntitySpec(
        name="file",
        collection="files",
        id_prefix="FIL",
        label=label,
        fields=[FieldSpec(name="path", type="str", description="path in the workspace")],
    )
    return EnvSpec(
        env_id=f"{topic.topic_id}-{archetype}",
        topic_id=topic.topic_id,
        archetype=archetype,
        kind="workspace",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=[entity],
        tools=[_verb_tool(verb, workspace) for verb in verbs],
        rules=rules,
        workspace=workspace,
    )


def validate_workspace_spec(spec: EnvSpec) -> list[str]:
    """Every problem of a workspace spec: its tools are verbs, its vocabulary can seed a tree.

    (The record checks of synthesis.environments.specgen do not apply: verbs take paths,
    not record ids.)"""
    import random

    from synthesis.environments.workspace_tree import field_value

    problems: list[str] = []
    if not spec.class_name.isidentifier():
        problems.append(f"class name {spec.class_name!r} is not an identifier")
    ws = spec.workspace
    if ws is None:
        return problems + ["a workspace spec needs its 'workspace' vocabulary"]
    names = [t.name for t in spec.tools]
    if len(set(names)) != len(names):
        problems.append("tool names are not unique")
    for name in names:
        if not is_verb(name):
            problems.append(f"tool {name}: not a workspace verb")
    for feature in ws.get("features") or []:
        if feature not in FEATURE_VERBS and not is_verb(feature):
            problems.append(f"unknown workspace feature {feature!r}")
    missing = [v for v in CORE_VERBS if v not in names]
    if missing:
        problems.append(f"core verbs missing: {missing}")
    if not 8 <= len(names) <= 30:
        problems.append(f"{len(names)} tools; a workspace environment has 8 to 30")
    if not ws.get("folders"):
        problems.append("no folders to seed")
    for path in [*(ws.get("folders") or []), *(ws.get("extra_files") or {})]:
        parts = str(path).split("/")
        if str(path).startswith("/") or ".." in parts or "" in parts or "\x00" in str(path):
            problems.append(f"path {path!r} is not a plain relative path")
    fields = ws.get("fields") or {}
    if ws.get("name_field") not in fields:
        problems.append(f"name field {ws.get('name_field')!r} is not one of the fields")
    for key, generator in fields.items():
        try:
            field_value(generator, random.Random(0), 1)
        except (ValueError, IndexError) as exc:
            problems.append(f"field {key!r}: {exc}")
    unknown = sorted(set(ws.get("describe") or {}) - set(fields))
    if unknown:
        problems.append(f"describe names unknown fields {unknown}")
    for template in (ws.get("describe") or {}).values():
        if "{v}" not in template:
            problems.append(f"describe template {template!r} has no {{v}}")
    if "set_status" in names and not ws.get("statuses"):
        problems.append("set_status without statuses")
    if "tag" in names and not ws.get("tags"):
        problems.append("tag without tags")
    return problems
