"""The bubblewrap backend: namespaces, a minimal read-only filesystem, an unprivileged uid.

As root, bwrap runs without a user namespace (so it can bind an interpreter that lives under a
0700 /root) and `setpriv` switches to the leased uid inside the sandbox, dropping every
capability and setting no_new_privs, before the worker starts. Unprivileged, bwrap makes a
user namespace instead and no uid switch is needed.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
from dataclasses import dataclass
from functools import cache

import orjson

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess, setpriv_argv, spawn
from sandboxes.backends.seccomp import filter_program
from sandboxes.layout import SANDBOX_ENV, WORKSPACE, interpreter
from sandboxes.limits import MB, processes_of_uid
from sandboxes.uids import UID_BASE, UID_COUNT

_NAMESPACES = [
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
]
# setpriv needs these three to switch uid and clear the bounding set; it then drops all of them.
_SETPRIV_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")


@dataclass(frozen=True)
class BwrapFeatures:
    executable: str
    tmpfs_size: bool
    disable_userns: bool


@cache
def features() -> BwrapFeatures | None:
    executable = shutil.which("bwrap")
    if executable is None:
        return None
    try:
        help_text = subprocess.run(
            [executable, "--help"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return BwrapFeatures(executable, "--size" in help_text, "--disable-userns" in help_text)


class BwrapBackend(Backend):
    name = "bwrap"
    zygote_reap = "namespace"

    def __init__(self) -> None:
        self.as_root = os.geteuid() == 0
        self.needs_uid = self.as_root
        self._probed = False
        self._reason: str | None = None

    def unavailable_reason(self) -> str | None:
        if not self._probed:
            self._reason = self._probe()
            self._probed = True
        return self._reason

    def _probe(self) -> str | None:
        found = features()
        if found is None:
            return "bubblewrap (bwrap) is not installed"
        if self.as_root and shutil.which("setpriv") is None:
            return "setpriv (util-linux) is needed to drop to an unprivileged uid as root"
        probe = [
            found.executable,
            *_NAMESPACES,
            *self._privilege_flags(found),
            *_filesystem_flags(found, tmp_bytes=MB),
            "--",
        ]
        if self.as_root:
            # The uid switch is part of what must work, not just the namespaces.
            probe += self._setpriv(UID_BASE + UID_COUNT - 1)
        probe.append("/usr/bin/true")
        try:
            done = subprocess.run(
                probe, capture_output=True, text=True, timeout=20, env=dict(SANDBOX_ENV)
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap probe failed: {exc}"
        if done.returncode != 0:
            return f"bwrap cannot create a sandbox here: {done.stderr.strip()[:300]}"
        return None

    def nproc_limit(self, spec: LaunchSpec) -> int | None:
        if self.as_root:
            return spec.limits.processes
        # Unprivileged, the sandbox shares the user's uid, whose processes all count.
        return processes_of_uid(os.getuid()) + spec.limits.processes

    def argv(
        self, spec: LaunchSpec, *, seccomp_fd: int | None, info_fd: int | None = None
    ) -> list[str]:
        found = features()
        python = interpreter()
        argv = [
            found.executable,
            *_NAMESPACES,
            "--hostname",
            "sandbox",
            "--new-session",
            "--die-with-parent",
            "--clearenv",
        ]
        if spec.control_fd is not None:
            # A zygote is the namespace's init: signals from its children cannot reach it.
            argv.append("--as-pid-1")
        for key, value in SANDBOX_ENV.items():
            argv += ["--setenv", key, value]
        argv += self._privilege_flags(found)
        argv += _filesystem_flags(found, tmp_bytes=spec.limits.tmp_size_mb * MB)
        created = {"/", "/usr", "/tmp", "/proc", "/dev"}
        if python.prefix is not None:
            argv += _parent_dirs(python.prefix, created)
            argv += ["--ro-bind", python.prefix, python.prefix]
            if python.site_packages is not None:
                argv += ["--tmpfs", python.site_packages]
        for mount in spec.mounts:
            argv += _parent_dirs(mount.inside, created)
            argv += ["--ro-bind", mount.host, mount.inside]
        if spec.workspace is not None:
            argv += ["--bind", str(spec.workspace), WORKSPACE]
        # Not the workspace: it belongs to the sandbox uid, which bwrap (root without
        # CAP_DAC_OVERRIDE) may not enter. The worker moves there itself after the uid switch.
        argv += ["--chdir", "/tmp"]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        if info_fd is not None:
            argv += ["--info-fd", str(info_fd)]
        argv.append("--")
        if self.as_root:
            argv += self._setpriv(spec.uid)
        return argv + self.worker_argv(python.executable, spec.sys_path, spec.control_fd)

    @staticmethod
    def _setpriv(uid: int) -> list[str]:
        return setpriv_argv(shutil.which("setpriv"), uid)

    def launch(self, spec: LaunchSpec) -> WorkerProcess:
        if self.as_root and spec.uid is None:
            raise ValueError("bwrap as root needs a leased uid")
        # bwrap reports the sandbox's init pid on the info pipe; killing that process takes the
        # whole pid namespace down, and its pidfd tells us when every process in it is gone.
        info_read, info_write = os.pipe()
        os.set_blocking(info_read, False)
        program = filter_program()
        pass_fds = [info_write]
        if spec.control_fd is not None:
            pass_fds.append(spec.control_fd)
        seccomp_read = None
        if program is not None:
            seccomp_read, seccomp_write = os.pipe()
            os.write(seccomp_write, program)
            os.close(seccomp_write)
            pass_fds.append(seccomp_read)
        try:
            argv = self.argv(spec, seccomp_fd=seccomp_read, info_fd=info_write)
            return spawn(
                argv,
                env=dict(SANDBOX_ENV),
                pass_fds=tuple(pass_fds),
                kill=lambda popen: _kill_namespace(popen, info_read),
                cleanup=(lambda: os.close(info_read),),
            )
        except BaseException:
            os.close(info_read)
            raise
        finally:
            os.close(info_write)
            if seccomp_read is not None:
                os.close(seccomp_read)

    def _privilege_flags(self, found: BwrapFeatures) -> list[str]:
        if self.as_root:
            flags = ["--cap-drop", "ALL"]
            for cap in _SETPRIV_CAPS:
                flags += ["--cap-add", cap]
            return flags
        flags = ["--unshare-user", "--cap-drop", "ALL"]
        return flags + (["--disable-userns"] if found.disable_userns else [])


def _kill_namespace(popen: subprocess.Popen, info_fd: int, timeout_s: float = 5.0) -> None:
    """SIGKILL the sandbox's init and wait until it, and so every process it held, is gone."""
    child = _sandbox_init_pid(info_fd)
    pidfd = None
    if child is not None:
        try:
            pidfd = os.pidfd_open(child)
        except OSError:
            child = None
    try:
        if child is not None and popen.poll() is None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        popen.kill()
        if pidfd is not None:
            # Readable once the init has exited, which the kernel allows only after it has
            # killed and reaped every other process of its pid namespace.
            select.select([pidfd], [], [], timeout_s)
    except ProcessLookupError:
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _sandbox_init_pid(info_fd: int) -> int | None:
    try:
        data = os.read(info_fd, 4096)
    except OSError:
        return None
    try:
        pid = orjson.loads(data).get("child-pid")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _filesystem_flags(found: BwrapFeatures, *, tmp_bytes: int) -> list[str]:
    flags = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            flags += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            flags += ["--ro-bind", name, name]
    # Debian names some tools through the alternatives system (/usr/bin/awk ->
    # /etc/alternatives/awk -> mawk): without these links `awk` is missing in the sandbox.
    # They are symlinks only, nothing of the host's configuration.
    if os.path.isdir("/etc/alternatives"):
        # An explicit 0755 /etc: the sandbox's uid must be able to enter it.
        flags += ["--perms", "0755", "--dir", "/etc"]
        flags += ["--ro-bind", "/etc/alternatives", "/etc/alternatives"]
    flags += ["--proc", "/proc", "--dev", "/dev"]
    # The tmpfs must come before anything bound under /tmp: a later tmpfs would hide it.
    flags += ["--perms", "1777"]
    if found.tmpfs_size:
        flags += ["--size", str(tmp_bytes)]
    return flags + ["--tmpfs", "/tmp"]


def _parent_dirs(path: str, created: set[str]) -> list[str]:
    """Explicit 0755 parents: bwrap would otherwise copy a 0700 host /root the uid cannot enter."""
    flags = []
    parts = path.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        parent = "/" + "/".join(parts[:depth])
        if parent not in created:
            created.add(parent)
            flags += ["--perms", "0755", "--dir", parent]
    return flags
