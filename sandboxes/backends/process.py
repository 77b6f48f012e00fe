"""The process backend: a plain child process with rlimits and a cleared environment, no more.

For hosts without bubblewrap. Environment code can read and write whatever the parent's user
can, reach the network and signal other processes; that is why using it logs a warning.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess, kill_process_group, spawn
from sandboxes.layout import SANDBOX_ENV, SANDBOX_ROOT, WORKER_SCRIPT, interpreter
from sandboxes.limits import processes_of_uid

log = logging.getLogger(__name__)
_warned = False
_warn_lock = threading.Lock()


def _warn_once() -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    log.warning(
        "sandbox backend 'process' gives REDUCED ISOLATION: environment code runs with only "
        "rlimits and a cleared environment; it can read and write the host filesystem as "
        "this user, use the network and signal other processes. Install bubblewrap (bwrap) "
        "to run untrusted code."
    )


class ProcessBackend(Backend):
    name = "process"
    zygote_reap = "group"

    def unavailable_reason(self) -> str | None:
        return None

    def nproc_limit(self, spec: LaunchSpec) -> int | None:
        if os.geteuid() == 0:
            return None  # the kernel does not enforce RLIMIT_NPROC on root
        return processes_of_uid(os.getuid()) + spec.limits.processes

    def workspace_inside(self, spec: LaunchSpec) -> str | None:
        return str(spec.workspace) if spec.workspace is not None else None

    def launch(self, spec: LaunchSpec) -> WorkerProcess:
        _warn_once()
        # The same import view the sandboxes give (only the worker, orjson and the environment's
        # package), built from symlinks, so an environment behaves the same on every backend.
        view = Path(tempfile.mkdtemp(prefix="envfoundry-process-view-"))
        for mount in spec.mounts:
            link = view / mount.inside.lstrip("/")
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(mount.host)
        sys_path = tuple(
            str(view / p.lstrip("/")) if p.startswith(SANDBOX_ROOT) else p for p in spec.sys_path
        )
        argv = self.worker_argv(interpreter().executable, sys_path, spec.control_fd)
        argv[argv.index(WORKER_SCRIPT)] = str(view / WORKER_SCRIPT.lstrip("/"))
        setpriv = shutil.which("setpriv")
        if setpriv is not None:
            # Dies with the parent even while busy (an idle worker would just see end of file).
            argv = [setpriv, "--pdeathsig", "KILL", "--", *argv]
        cwd = str(spec.workspace) if spec.workspace is not None else str(view)
        return spawn(
            argv,
            env=dict(SANDBOX_ENV),
            cwd=cwd,
            new_session=True,
            pass_fds=(spec.control_fd,) if spec.control_fd is not None else (),
            kill=kill_process_group,
            cleanup=(lambda: shutil.rmtree(view, ignore_errors=True),),
        )
