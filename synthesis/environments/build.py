"""EnvSpec → Environment: compile the class, derive its tools by analysis, cross-check the spec."""

from __future__ import annotations

from synthesis.environments.analysis import AnalysisError, analyze_tools
from synthesis.environments.compiler import compile_spec
from synthesis.environments.workspace_code import compile_workspace
from synthesis.hashing import sha256_text
from synthesis.models import Environment, EnvSpec


def environment_code(spec: EnvSpec) -> str:
    """The source our compiler writes for `spec`: a workspace class or a tool class."""
    return compile_workspace(spec) if spec.kind == "workspace" else compile_spec(spec)


def build_environment(spec: EnvSpec) -> Environment:
    """A compiled environment; quarantined (with the reason) when analysis disagrees with the spec.

    The analysis is the source of truth for schemas; disagreement with the spec means the
    compiler (or, later, an LLM author) produced code that does not do what the spec says.
    """
    code = environment_code(spec)
    env = Environment(
        env_id=spec.env_id,
        topic_id=spec.topic_id,
        archetype=spec.archetype,
        kind=spec.kind,
        source="programmatic",
        class_name=spec.class_name,
        code=code,
        code_sha256=sha256_text(code),
        tools=[],
        spec=spec,
    )
    try:
        env.tools = analyze_tools(code, spec.class_name)
    except AnalysisError as exc:
        return env.model_copy(update={"status": "quarantined", "reason": f"analysis: {exc}"})
    if spec.kind == "workspace":
        env.tools = workspace_tool_kinds(spec, env.tools)
    problems = spec_mismatches(spec, env)
    if problems:
        return env.model_copy(update={"status": "quarantined", "reason": "; ".join(problems)})
    return env


def spec_mismatches(spec: EnvSpec, env: Environment) -> list[str]:
    analysed = {t.name: t for t in env.tools}
    problems = []
    for tool in spec.tools:
        info = analysed.get(tool.name)
        if info is None:
            problems.append(f"tool {tool.name} is missing from the class")
        elif info.kind != tool.kind:
            problems.append(f"tool {tool.name} is declared {tool.kind} but the code is {info.kind}")
    extra = set(analysed) - {t.name for t in spec.tools}
    if extra:
        problems.append(f"class has undeclared public methods {sorted(extra)}")
    return problems


def workspace_tool_kinds(spec: EnvSpec, tools: list) -> list:
    """A workspace class writes files, not attributes, so the AST sees no writes: a tool's
    kind is the spec's, and the audit proves it in the sandbox (a query that changes the
    workspace snapshot is fatal there)."""
    declared = {t.name: t.kind for t in spec.tools}
    return [
        t.model_copy(
            update={
                "kind": declared.get(t.name, t.kind),
                "writes": ["__workspace__"] if declared.get(t.name) == "mutate" else t.writes,
            }
        )
        for t in tools
    ]
