"""The sandbox a session plays in, opened by the build's rules, and the tools it offers."""

from __future__ import annotations

import argparse
from typing import Any

from orchestration.player.options import LOAD_ERROR, Stop, usage
from orchestration.player.targets import Target
from sandboxes.backends import get_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.session import Session, open_session
from sandboxes.workspace import workspace_tools_source
from synthesis.environments.analysis import AnalysisError, analyze_class


def open_sandbox(options: argparse.Namespace, target: Target) -> Session:
    if not target.compiled:
        _refuse_weak_sandbox(options.backend)
    try:
        get_backend(options.backend)
    except SandboxError as exc:
        raise usage(str(exc)) from None
    try:
        return open_session(
            target.source,
            target.state,
            backend=options.backend,
            limits=Limits(call_timeout_s=options.timeout),
            workspace=options.workspace,
            entropy_seed=target.entropy_seed,
        )
    except SandboxError as exc:
        raise Stop(LOAD_ERROR, str(exc)) from None


def _refuse_weak_sandbox(backend: str) -> None:
    """Fail closed, by the build's rule: code we did not compile runs under bwrap or docker,
    and on the plain process backend only when the user names it."""
    from synthesis.environments.runtime import sandbox_refusal

    refusal = sandbox_refusal(backend)
    if refusal is not None:
        raise usage(refusal.replace("--sandbox process", "--backend process"))


def analysed_tools(session: Session, target: Target) -> list[dict[str, Any]]:
    """The tools with their schemas: the build's, or the analysis of the class that loaded."""
    tools = target.tools
    if tools is None:
        try:
            tools = analyze_class(target.code, session.info.get("class"))
        except AnalysisError:
            tools = []  # the worker still knows the names; arguments go unchecked
    if session.has_workspace:
        defined = {tool["name"] for tool in tools}
        builtins = analyze_class(*workspace_tools_source())
        tools = tools + [tool for tool in builtins if tool["name"] not in defined]
    return tools
