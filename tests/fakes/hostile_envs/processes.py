"""Hostile environments that attack processes: signals, forks, ptrace, namespaces, privileges."""

import ctypes
import os
import signal
import subprocess
import time

# The interpreter's own libc symbols; find_library would spawn ldconfig.
_libc = ctypes.CDLL(None, use_errno=True)


def _errno_of(result: int) -> int:
    return ctypes.get_errno() if result == -1 else 0


class Signaller:
    def kill(self, pid: int, sig: int = 9) -> dict:
        os.kill(pid, sig)
        return {"success": True, "data": f"sent {sig} to {pid}"}

    def kill_parent(self) -> dict:
        os.kill(os.getppid(), signal.SIGKILL)
        return {"success": True, "data": os.getppid()}

    def kill_everyone(self) -> dict:
        os.kill(-1, signal.SIGKILL)
        return {"success": True}

    def ping(self) -> dict:
        return {"success": True, "data": "alive"}


class ForkBomb:
    def bomb(self) -> dict:
        children = 0
        while True:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1

    def shell_bomb(self) -> dict:
        done = subprocess.run(
            ["/bin/sh", "-c", "b() { b | b & }; b; sleep 1"], capture_output=True, timeout=4
        )
        return {"success": True, "data": done.returncode}


class Escaper:
    """Double fork and setsid: a daemon that would outlive the worker without a pid namespace."""

    def daemonize(self) -> dict:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(600)
            os._exit(0)
        time.sleep(0.1)
        return {"success": True}


class Ptracer:
    PTRACE_ATTACH = 16

    def attach(self, pid: int) -> dict:
        result = _libc.ptrace(self.PTRACE_ATTACH, pid, None, None)
        return {"success": True, "data": _errno_of(result)}

    def read_memory(self, pid: int) -> dict:
        with open(f"/proc/{pid}/mem", "rb") as handle:
            return {"success": True, "data": handle.read(16).hex()}


class NestedNamespaces:
    CLONE_NEWUSER = 0x10000000
    CLONE_NEWNS = 0x00020000
    CLONE_NEWNET = 0x40000000

    def unshare(self) -> dict:
        outcome = {}
        for name, flags in (
            ("user", self.CLONE_NEWUSER),
            ("user+mount", self.CLONE_NEWUSER | self.CLONE_NEWNS),
            ("net", self.CLONE_NEWNET),
        ):
            outcome[name] = _errno_of(_libc.unshare(flags))
        return {"success": True, "data": outcome}

    def tools(self) -> dict:
        outcome = {}
        for name, argv in (
            ("unshare", ["unshare", "-r", "cat", "/etc/shadow"]),
            ("bwrap", ["bwrap", "--bind", "/", "/", "cat", "/etc/shadow"]),
        ):
            try:
                done = subprocess.run(argv, capture_output=True, timeout=5)
                outcome[name] = {"rc": done.returncode, "out": done.stdout.decode()[:200]}
            except OSError as exc:
                outcome[name] = {"rc": None, "out": str(exc)}
        return {"success": True, "data": outcome}


class Privileges:
    def status(self) -> dict:
        with open("/proc/self/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        keys = (
            "Uid",
            "Gid",
            "Groups",
            "CapInh",
            "CapPrm",
            "CapEff",
            "CapBnd",
            "CapAmb",
            "NoNewPrivs",
            "Seccomp",
        )
        return {"success": True, "data": {k: fields[k].strip() for k in keys if k in fields}}

    def mount_tmpfs(self) -> dict:
        os.makedirs("/tmp/mnt", exist_ok=True)
        result = _libc.mount(b"none", b"/tmp/mnt", b"tmpfs", 0, None)
        return {"success": True, "data": _errno_of(result)}

    def set_hostname(self) -> dict:
        result = _libc.sethostname(b"pwned", 5)
        return {"success": True, "data": _errno_of(result)}

    def setuid_root(self) -> dict:
        os.setuid(0)
        return {"success": True, "data": os.getuid()}

    def keyring(self) -> dict:
        # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
        result = _libc.syscall(250, 0, -4, 0)
        return {"success": True, "data": _errno_of(result)}


class SelfDestruct:
    def segfault(self) -> dict:
        os.kill(os.getpid(), signal.SIGSEGV)
        return {"success": True}

    def exit(self, code: int) -> dict:
        os._exit(code)
