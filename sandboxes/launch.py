"""What a worker starts with: the uid it runs as, its host workspace, and its LaunchSpec.

A started worker (sandboxes.session) and a zygote (sandboxes.zygote) are launched alike; this
is the one place that leases the uid, lends the workspace to it and assembles the spec.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from sandboxes.backends import Backend, LaunchSpec, WorkerProcess
from sandboxes.errors import SandboxError
from sandboxes.layout import runtime_mounts
from sandboxes.limits import Limits
from sandboxes.protocol import Channel, ChannelError, ProtocolViolation
from sandboxes.source import ResolvedSource
from sandboxes.uids import UidLease, lease_uid
from sandboxes.workspace import HostWorkspace


@dataclass(frozen=True)
class Launch:
    spec: LaunchSpec
    lease: UidLease | None
    workspace: HostWorkspace | None


def prepare_launch(
    backend: Backend,
    resolved: ResolvedSource,
    limits: Limits,
    *,
    wants_workspace: bool,
    host_workspace: Path | None = None,
    control_fd: int | None = None,
) -> Launch:
    """Lease a uid when the backend runs as one, prepare the workspace (the caller's folder, or
    a fresh one) and lend it to that uid. The caller gives back the lease and the workspace;
    when a step here fails, nothing stays held."""
    lease = lease_uid() if backend.needs_uid else None
    workspace = None
    private = wants_workspace and host_workspace is None and backend.private_workspace
    try:
        if wants_workspace and not private:
            workspace = HostWorkspace.prepare(host_workspace)
            if lease is not None:
                workspace.lend(lease.uid)
    except BaseException:
        if workspace is not None:
            workspace.release()
        if lease is not None:
            lease.release()
        raise
    mounts, lib_path = runtime_mounts()
    spec = LaunchSpec(
        mounts=mounts + resolved.mounts,
        sys_path=lib_path + resolved.sys_path,
        limits=limits,
        workspace=workspace.path if workspace else None,
        uid=lease.uid if lease else None,
        control_fd=control_fd,
        private_workspace=private,
    )
    return Launch(spec, lease, workspace)


def await_ready(process: WorkerProcess, limits: Limits, backend: str, role: str) -> dict:
    """The first message of a worker started to be kept (a zygote, a warm worker): its
    "ready", with nothing after it. One that does not come in time, or is anything else,
    kills the process and is a SandboxError naming the `role` and what it said on stderr."""
    channel = Channel(
        process.write_fd,
        process.read_fd,
        max_message_bytes=limits.max_message_bytes,
        max_total_output_bytes=limits.max_total_output_bytes,
    )
    try:
        ready = channel.receive(time.monotonic() + limits.start_timeout_s)
        if ready.get("ready") is not True:
            raise ProtocolViolation(f"unexpected first message {str(ready)[:200]}")
        channel.expect_drained()
    except ChannelError as exc:
        process.kill()
        process.exit_status()
        raise SandboxError(
            f"the {backend} sandbox {role} did not start ({exc.message}): "
            f"{process.stderr_text() or 'no error output'}"
        ) from None
    return ready
