"""Where untrusted code runs: every environment, check and tool call goes through a sandbox.

with open_session(EnvSource(code=code), state) as session:
    result = session.call("get_order", {"order_id": "o1"})
    final = session.final_state()
"""

from sandboxes.backends import available_backends, default_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.pool import WorkerPool, episode_in, session_in
from sandboxes.session import CallResult, EpisodeResult, Session, open_session, run_episode
from sandboxes.source import EnvSource
from sandboxes.workspace import WORKSPACE_KEY, workspace_tools_source

__all__ = [
    "EnvSource",
    "Limits",
    "CallResult",
    "EpisodeResult",
    "Session",
    "open_session",
    "run_episode",
    "WorkerPool",
    "session_in",
    "episode_in",
    "default_backend",
    "available_backends",
    "SandboxError",
    "WORKSPACE_KEY",
    "workspace_tools_source",
]
