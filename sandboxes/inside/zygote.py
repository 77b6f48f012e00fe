"""A zygote: one sandboxed worker that forks a fresh worker per episode instead of starting one.

Starting a sandbox and an interpreter costs ~20 ms; forking a process that has both costs well
under one. The zygote never runs environment code. It compiles the environment's source,
imports what the episode would import anyway when that import provably cannot differ (see
_preload) and the libraries the environment's code imports (pandas, pydantic: a worker imports
them under seed 0 before that code, sandboxes/imports.py), then waits on its control socket.
Per episode the parent sends two pipe ends (SCM_RIGHTS); the zygote forks a child that takes
them as its protocol descriptors and is from then on exactly a fresh worker: it says ready,
gets the init request (rlimits, entropy seed, state), runs the calls and the state dump. When
the parent ends the episode the zygote kills the child and everything it left behind, reaps
it, empties the workspace (if the sandbox has one) and (in a sandbox of its own) /tmp, so the
next child finds the sandbox as a fresh worker would.

Under bubblewrap the zygote is the pid namespace's init (bwrap --as-pid-1): the kernel does
not deliver a signal from inside the namespace to its init unless the init handles it, so
kill(-1) in a child spares the zygote (it spares a fresh worker too), and everything a child
orphans is reparented to the zygote, which reaps it. The zygote is not dumpable, so a child
(same uid) cannot open its memory through /proc.

Control protocol, JSON lines on the socket: parent -> {"op": "setup", ...}, {"op": "fork"}
(with the two descriptors), {"op": "end", "eof": bool}; zygote -> {"ok": true, ...} or
{"ok": false, "error": ...} per request.
"""

import gc
import os
import signal
import sys

from wipe import empty

# Modules whose import the zygote may do ahead: never these (entropy patches them on import).
_PATCHED = ("datetime", "random", "uuid", "secrets")
# What every episode imports in any case; imported ahead when the probe finds them inert.
_OURS = ("entropy", "conventions", "jsonable", "resource")
# And what every workspace episode imports (the built-in tools, the verbs' subprocesses).
_WORKSPACE = ("workspace_tools", "subprocess", "select")


def serve(
    control_fd, in_fd, out_fd, codec, serve_episode, compiled, compile_source, import_libraries
):
    """Serve the parent on `control_fd` until it hangs up; never returns. The callables are
    the worker's: a child serves its episode, code is compiled and libraries are imported,
    exactly as in a worker."""
    import socket

    sock = socket.socket(fileno=control_fd)
    sock.setblocking(True)
    dumps = codec[1]
    zygote = _Zygote(
        sock, in_fd, out_fd, codec, serve_episode, compiled, compile_source, import_libraries
    )
    # The parent checks start-up on the ordinary pipe, as for any worker.
    os.write(out_fd, dumps({"ready": True, "pid": os.getpid(), "uid": os.getuid()}) + b"\n")
    loads = codec[2]
    # Descriptors come with the fork request that carries them, but one read may also bring
    # the requests before it: they wait here until their request is handled.
    fds = []
    for line in _lines(sock, fds):
        try:
            request = loads(line)
            if request.get("op") == "fork":
                taken, fds[:2] = fds[:2], []
            else:
                taken = []
            reply = zygote.handle(request, taken)
        except Exception as exc:
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        sock.sendall(dumps(reply) + b"\n")
    os._exit(0)


class _Zygote:
    def __init__(
        self, sock, in_fd, out_fd, codec, serve_episode, compiled, compile_source, import_libraries
    ):
        self.sock = sock
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.codec = codec
        self.serve_episode = serve_episode
        self.compiled = compiled
        self.compile_source = compile_source
        self.import_libraries = import_libraries
        self.child = None
        self.reap = "group"
        self.wipe_tmp = False
        self.workspace = None
        self.libc = None

    def handle(self, request, fds):
        op = request.get("op")
        if op == "fork":
            return self.fork(fds)
        for fd in fds:
            _close(fd)
        if op == "end":
            return {"ok": True, "status": self.end(bool(request.get("eof")))}
        if op == "setup":
            return self.setup(request)
        return {"ok": False, "error": f"unknown op {op!r}"}

    # ------------------------------------------------------------------ setup

    def setup(self, request):
        self.reap = request.get("reap") or "group"
        self.wipe_tmp = bool(request.get("wipe_tmp"))
        self.workspace = request.get("workspace") or None
        if os.getpid() == 1:
            # Python's SIGINT handler would make the namespace init killable from inside it.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.libc = _libc()
        _set_dumpable(self.libc, False)
        source = request.get("source") or {}
        names = list(_OURS) + (list(_WORKSPACE) if self.workspace else [])
        if source.get("kind") == "code" and isinstance(source.get("code"), str):
            filename = source.get("filename") or "<environment>"
            try:
                code = self.compile_source(source["code"], filename)
            except BaseException:
                code = None  # the child compiles again and reports the error as a fresh worker
            if code is not None:
                self.compiled[(source["code"], filename)] = code
                names += _stdlib_imports(source["code"])
        preloaded = _preload(names)
        libraries = source.get("library_imports")
        seeded = bool(libraries)
        if seeded:
            # What a worker given these does before the environment's code (worker.init): the
            # shims of seed 0, then the libraries; each child begins its own seed from there.
            import entropy

            entropy.install(0)
            self.import_libraries(libraries)
            threads = _python_threads()
            if threads:
                # A thread does not survive the fork: a child would lack what a fresh worker
                # has. This source's episodes get workers of their own.
                return {"ok": False, "error": f"its libraries start threads: {threads}"}
        gc.collect()
        gc.freeze()  # forked children then do not copy the zygote's objects when gc runs
        return {"ok": True, "preloaded": preloaded, "seeded": seeded, "pid": os.getpid()}

    # ------------------------------------------------------------------ episodes

    def fork(self, fds):
        if len(fds) != 2:
            for fd in fds:
                _close(fd)
            return {"ok": False, "error": "fork needs exactly two descriptors"}
        if self.child is not None:
            self.end(False)
        request_fd, reply_fd = fds
        pid = os.fork()
        if pid == 0:
            try:
                self.become_worker(request_fd, reply_fd)
            finally:
                os._exit(70)
        _close(request_fd)
        _close(reply_fd)
        self.child = pid
        return {"ok": True, "pid": pid}

    def become_worker(self, request_fd, reply_fd):
        """In the child: the descriptors, session and signals a fresh worker has, then serve."""
        os.setsid()  # as bwrap --new-session does for a fresh worker; killpg reaches it all
        self.sock.close()
        os.dup2(request_fd, self.in_fd)
        os.dup2(reply_fd, self.out_fd)
        _close(request_fd)
        _close(reply_fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _set_dumpable(self.libc, True)
        self.serve_episode(self.in_fd, self.out_fd, self.codec)

    def end(self, eof):
        """Kill the child and what it left, reap them, clean /tmp; the child's exit code."""
        child, self.child = self.child, None
        if child is None:
            return None
        status = None
        if eof:
            # The child closed its reply pipe: it is most likely exiting; let it say how.
            status = _wait(child, 0.5)
        if status is None:
            try:
                os.killpg(child, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        if self.reap == "namespace":
            # Everything else in the sandbox: only children of this episode can be there.
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            while True:
                try:
                    pid, code = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
                if pid == child and status is None:
                    status = os.waitstatus_to_exitcode(code)
        elif status is None:
            try:
                status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
            except ChildProcessError:
                pass
        if self.workspace:
            # As HostWorkspace.prepare makes it: empty, only its owner may enter.
            empty(self.workspace, 0o700)
        if self.wipe_tmp:
            empty("/tmp", 0o1777)
            empty("/dev/shm", 0o1777)
            _remove_ipc()
        return status


def _wait(pid, timeout):
    import time

    stop = time.monotonic() + timeout
    while True:
        try:
            done, code = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return os.waitstatus_to_exitcode(code)
        if time.monotonic() > stop:
            return None
        time.sleep(0.0005)


def _lines(sock, fds):
    """Request lines from the parent until it hangs up; descriptors received go to `fds`."""
    import socket

    buffer = b""
    while True:
        end = buffer.find(b"\n")
        if end >= 0:
            line, buffer = buffer[:end], buffer[end + 1 :]
            yield line
            continue
        try:
            data, received, _, _ = socket.recv_fds(sock, 1 << 16, 4)
        except InterruptedError:
            continue
        except OSError:
            return
        fds += received
        if not data:
            return
        buffer += data


def _stdlib_imports(code):
    """Top-level names of the standard-library modules the source imports (by its syntax)."""
    import ast

    try:
        tree = ast.parse(code)
    except BaseException:
        return []
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n in stdlib and n not in _PATCHED and n not in sys.modules)


def _preload(names):
    """Import those of `names` whose import is inert: it reads no clock and no randomness and
    loads none of the modules entropy patches (checked in a forked probe with the episode shims
    installed). Such an import is the same whether it runs before the fork or in the episode.
    """
    clean = []
    pending = [n for n in names if n not in sys.modules]
    while pending:
        verdicts = _probe(pending)
        if verdicts is None:
            break
        good = verdicts[: len(verdicts) - 1] if verdicts and not verdicts[-1][1] else verdicts
        for name, _ in good:
            try:
                __import__(name)
            except BaseException:
                break
            clean.append(name)
        # A failed probe stops at the first import that is not inert; try those after it alone.
        pending = pending[len(verdicts) :]
    return clean


def _probe(names):
    """[(name, inert)] for names in order, up to and including the first that is not inert."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            import entropy

            entropy.install(0)
            state = entropy._entropy
            start = (state.now_ns, len(state.streams), len(state.objects))
            out = []
            for name in names:
                before = [m for m in _PATCHED if m in sys.modules]
                try:
                    __import__(name)
                    inert = (state.now_ns, len(state.streams), len(state.objects)) == start and [
                        m for m in _PATCHED if m in sys.modules
                    ] == before
                except BaseException:
                    inert = False
                out.append(f"{name}={int(inert)}")
                if not inert:
                    break
            os.write(write_fd, " ".join(out).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    data = b""
    while True:
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(read_fd)
    os.waitpid(pid, 0)
    if not data:
        return None
    pairs = [item.rpartition("=") for item in data.decode().split()]
    return [(name, flag == "1") for name, _, flag in pairs]


def _python_threads():
    """Names of the Python threads running besides this one (libraries may start them)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return []
    current = threading.current_thread()
    return sorted(t.name for t in threading.enumerate() if t is not current and t.is_alive())


def _libc():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except BaseException:
        return None


def _set_dumpable(libc, dumpable):
    if libc is not None:
        try:
            libc.prctl(4, 1 if dumpable else 0, 0, 0, 0)  # PR_SET_DUMPABLE
        except BaseException:
            pass


def _remove_ipc():
    """System V IPC objects outlive their processes; the sandbox's own IPC namespace holds
    only what children made. Removed with ipcrm, only when there are any."""
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                if len(table.readlines()) <= 1:
                    continue
        except OSError:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/usr/bin/ipcrm", ["ipcrm", "--all"])
            finally:
                os._exit(127)
        os.waitpid(pid, 0)
        return


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass
