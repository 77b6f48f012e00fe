"""What a worker starts with: the uid it runs as, its host workspace, and its LaunchSpec.

A started worker (sandboxes.session) and a zygote (sandboxes.zygote) are launched alike; this
is the one place that leases the uid, lends the workspace to it and assembles the spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandboxes.backends import Backend, LaunchSpec
from sandboxes.layout import runtime_mounts
from sandboxes.limits import Limits
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
    try:
        if wants_workspace:
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
    )
    return Launch(spec, lease, workspace)
