"""What every backend provides: start a worker from a launch spec, and kill it for sure."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandboxes.errors import SandboxError
from sandboxes.layout import WORKER_SCRIPT, WORKSPACE, Mount
from sandboxes.limits import Limits


@dataclass(frozen=True)
class LaunchSpec:
    mounts: tuple[Mount, ...]
    sys_path: tuple[str, ...]
    limits: Limits
    # The host directory bound writable at layout.WORKSPACE, if the episode has one.
    workspace: Path | None = None
    # The unprivileged uid this worker runs as, for backends that switch uid.
    uid: int | None = None
    # A zygote's control socket (see sandboxes/zygote.py), passed into the sandbox as is.
    control_fd: int | None = None
    # The episode has a workspace of its own that lives inside the sandbox only (backends with
    # `private_workspace`): no host directory is made for it.
    private_workspace: bool = False


class WorkerProcess:
    """A started worker: its pipes, how to kill it, and what to clean up after it."""

    def __init__(
        self,
        popen: subprocess.Popen,
        stderr_file,
        *,
        kill: Callable[[], None] | None = None,
        cleanup: tuple[Callable[[], None], ...] = (),
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self.popen = popen
        self._stderr = stderr_file
        self._kill = kill
        # Ends a worker at rest (between requests) gently, True once it is gone; close() kills
        # only when there is none or it did not work.
        self._stop = stop
        self._cleanup = list(cleanup)
        self.write_fd = popen.stdin.fileno()
        self.read_fd = popen.stdout.fileno()
        self._closed = False
        # The container's name, for backends whose worker lives in one.
        self.container: str | None = None

    def kill(self) -> None:
        if self.popen.poll() is not None:
            return
        try:
            if self._kill is not None:
                self._kill()
            else:
                self.popen.kill()
        except ProcessLookupError:
            pass

    def exit_status(self, timeout: float = 1.0) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr_text(self, limit: int = 2000) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read(limit).decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._stop is None or not self._stop():
            self.kill()
        try:
            self.popen.wait(10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        for stream in (self.popen.stdin, self.popen.stdout, self._stderr):
            try:
                stream.close()
            except OSError:
                pass
        for action in self._cleanup:
            action()


class Backend(ABC):
    name: str
    # Whether each worker needs its own leased uid (see sandboxes.uids).
    needs_uid: bool = False
    # How a zygote (sandboxes/zygote.py) cleans up after a child: None when this backend cannot
    # host one; "namespace" when the zygote is its sandbox's pid-namespace init with a private
    # /tmp (kill everything else in it, empty /tmp); "group" for the child's process group only.
    zygote_reap: str | None = None
    # Whether an episode's temporary workspace lives inside the sandbox (a tmpfs of its own)
    # instead of in a host directory bound into it; a caller's workspace is always bound.
    private_workspace: bool = False

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """None when this host can run the backend, else why not (cached by implementations)."""

    @abstractmethod
    def launch(self, spec: LaunchSpec) -> WorkerProcess: ...

    @abstractmethod
    def nproc_limit(self, spec: LaunchSpec) -> int | None:
        """The RLIMIT_NPROC value for the worker (None: not applied, e.g. a pids cgroup rules)."""

    def workspace_inside(self, spec: LaunchSpec) -> str | None:
        return WORKSPACE if spec.workspace is not None else None

    def worker_argv(
        self, python: str, sys_path: tuple[str, ...], control_fd: int | None = None
    ) -> list[str]:
        # -I would imply -E, which ignores PYTHONHASHSEED; the backend passes exactly
        # layout.SANDBOX_ENV instead, so no other PYTHON* variable can reach the interpreter.
        argv = [python, "-P", "-s", "-S", "-B", WORKER_SCRIPT, os.pathsep.join(sys_path)]
        return argv + ([f"--zygote={control_fd}"] if control_fd is not None else [])


def setpriv_argv(setpriv: str, uid: int) -> list[str]:
    """`setpriv` (the binary at `setpriv`) switching to `uid` with no supplementary groups,
    no capabilities (inheritable or bounding) and no new privileges: how every backend that
    starts as root drops to the sandbox's leased uid."""
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]


def spawn(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None = None,
    pass_fds: tuple[int, ...] = (),
    new_session: bool = False,
    kill: Callable[[subprocess.Popen], None] | None = None,
    cleanup: tuple[Callable[[], None], ...] = (),
    stop: Callable[[subprocess.Popen], bool] | None = None,
) -> WorkerProcess:
    # stderr goes to an anonymous file: read only when start-up fails, and a worker writing
    # to it after start-up finds fd 2 already pointed at /dev/null.
    stderr_file = tempfile.TemporaryFile()
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            bufsize=0,
            close_fds=True,
            pass_fds=pass_fds,
            env=env,
            cwd=cwd,
            start_new_session=new_session,
        )
    except OSError as exc:
        stderr_file.close()
        for action in cleanup:
            action()
        raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
    killer = (lambda: kill(popen)) if kill is not None else None
    stopper = (lambda: stop(popen)) if stop is not None else None
    return WorkerProcess(popen, stderr_file, kill=killer, cleanup=cleanup, stop=stopper)


def kill_process_group(popen: subprocess.Popen) -> None:
    os.killpg(popen.pid, signal.SIGKILL)
