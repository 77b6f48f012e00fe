"""The sandboxed worker: loads one environment and answers JSON-line requests on its pipes.

Started as `python -P -s -S -B worker.py SYS_PATH` (SYS_PATH joined with os.pathsep) in an
environment the backend controls entirely, PYTHONHASHSEED=0 included (-I would ignore it).
Imports only the stdlib, orjson when present, and the sibling modules in this directory, those
only when an episode needs them. Every request gets
replies carrying its id; the parent treats anything else on the pipe as a protocol violation
and kills the worker.

Replies: a call, init or state request -> {"id", "reply": [ok, result|error]}. A batch -> one
or more chunks {"id", "from": index of the first call, "results": [[ok, result|error], ...]},
flushed when the batch ends, when they would outgrow the message limit, and by a 2 ms timer
(SIGALRM) while calls run, so when a call hangs the parent already holds every earlier reply
and can blame the right call. Writing one line per call instead costs ~2 us per call.
"""

from __future__ import annotations

import os
import signal
import sys


def _import_codec():
    """orjson, loaded without the ~13 ms of stdlib imports its module init performs.

    orjson's init imports uuid, dataclasses and json only to learn type objects for their
    serialisers. Stand-ins make those lookups cheap; they are removed again so environment code
    imports the real modules, whose instances orjson then treats as unknown types (an error
    record), exactly as json.dumps would (environment code importing orjson gets this same
    module). Falls back to a plain import, then to stdlib json.
    """
    import types

    stubs = {}
    for name in ("uuid", "dataclasses", "json"):
        if name not in sys.modules:
            stub = types.ModuleType(name)
            stub.UUID = type("UUID", (), {})
            stub._FIELD = object()
            stub.JSONDecodeError = type("JSONDecodeError", (ValueError,), {})
            stubs[name] = sys.modules[name] = stub
    try:
        import orjson
    except Exception:
        orjson = None
    finally:
        for name, stub in stubs.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]
    if orjson is None:
        try:
            import orjson
        except Exception:
            orjson = None
    if orjson is not None:
        options = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
        dumps_orjson = orjson.dumps

        def dumps(obj):
            return dumps_orjson(obj, option=options)

        return "orjson", dumps, orjson.loads
    import json

    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "json", (lambda obj: encoder.encode(obj).encode("utf-8")), json.loads


class _Discard:
    """Where environment prints go: nowhere, so they can never reach the protocol pipe."""

    encoding = "utf-8"
    errors = "replace"

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        raise OSError("stdout is not available inside the sandbox")


def _describe(exc):
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable>"
    name = type(exc).__name__
    text = f"{name}: {message}" if message else name
    return text if len(text) <= 2000 else text[:2000] + "..."


_FLUSH_INTERVAL_S = 0.002
# Room for a chunk's envelope ({"id":...,"from":...,"results":[...]}) within the message limit.
_ENVELOPE = 128


class Worker:
    def __init__(self, codec, dumps, loads, out_fd):
        self.codec = codec
        self.dumps = dumps
        self.loads = loads
        self.out_fd = out_fd
        self.env = None
        self.tools = {}
        # The state dumper: None snapshots public attributes, else a bound method of env.
        self.dumper_name = "attributes"
        self.dumper = None
        self.workspace = None
        # A warm worker (sandboxes/warm.py) plays several episodes, one init each; any other
        # worker refuses a second init.
        self.reusable = False
        self.initialised = False
        self.max_message = 1_000_000
        self.output_budget = 20_000_000
        self.forked = False
        # Batch state, shared with the SIGALRM flush.
        self.batch_id = None
        self.pending = []
        self.pending_bytes = 0
        self.pending_from = 0
        self.flushing = False

    # ------------------------------------------------------------------ output

    def write(self, data):
        written = os.write(self.out_fd, data)
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self.out_fd, view) :]

    def send(self, payload):
        self.write(self.dumps(payload) + b"\n")

    def reply(self, rid, ok, value, *, counted=True):
        """{"id": rid, "reply": [ok, result|error]} for a call, or for init and state."""
        item = self.encode_result(ok, value, counted=counted)
        try:
            rid_json = self.dumps(rid if isinstance(rid, int) else None)
        except BaseException:
            rid_json = b"null"
        self.write(b'{"id":%b,"reply":%b}\n' % (rid_json, item))

    def encode_result(self, ok, value, *, counted=True):
        """One [ok, result|error] item, within the size limit and the output budget."""
        try:
            item = self.dumps((ok, value))
        except BaseException:
            item = self.encode_converted(ok, value)
        if len(item) > self.max_message - _ENVELOPE:
            item = self.dumps((False, _too_large(len(item), self.max_message - _ENVELOPE)))
        if counted:
            if ok and len(item) > self.output_budget:
                item = self.dumps(
                    (
                        False,
                        "output budget exhausted: the episode's tools "
                        "returned more than the total output limit",
                    )
                )
            self.output_budget -= len(item)
        return item

    def encode_converted(self, ok, value):
        """A result the codec refused (a set, a datetime, a numpy number...) as JSON data."""
        try:
            from jsonable import to_jsonable

            return self.dumps((ok, to_jsonable(value, strict=True)))
        except BaseException as exc:
            return self.dumps((False, f"result is not JSON-serialisable: {_describe(exc)}"))

    def flush(self, from_timer=False):
        if self.flushing or not self.pending:
            return
        self.flushing = True
        try:
            items, first = self.pending, self.pending_from
            self.pending, self.pending_bytes = [], 0
            self.pending_from = first + len(items)
            self.write(
                b'{"id":%d,"from":%d,"results":[%b]}\n' % (self.batch_id, first, b",".join(items))
            )
            if not from_timer:
                signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            self.flushing = False

    def on_timer(self, signum, frame):
        if not self.forked:
            self.flush(from_timer=True)

    # ------------------------------------------------------------------ requests

    def handle(self, request):
        op = request.get("op")
        rid = request.get("id")
        if op == "call":
            self.reply(rid, *self.call(request.get("tool"), request.get("args")))
        elif op == "batch":
            self.batch(rid, request.get("calls") or (), each=request.get("each") is True)
        elif op == "state":
            self.reply(rid, *self.state(), counted=False)
        elif op == "init":
            self.reply(rid, *_attempt(lambda: self.init(request)), counted=False)
        elif op == "exit":
            os._exit(0)
        else:
            self.reply(rid, False, f"unknown op {op!r}", counted=False)

    def batch(self, rid, calls, *, each=False):
        """Run `calls` in order. With `each`, every result is written before the next call
        starts: a call that kills the worker then loses no earlier result, which is what the
        calls made one at a time would give (a rollout's transcript needs that)."""
        if not isinstance(rid, int):
            raise ValueError("a batch needs an integer id")
        self.batch_id, self.pending, self.pending_bytes, self.pending_from = rid, [], 0, 0
        limit = self.max_message - _ENVELOPE
        for tool, args in calls:
            ok, value = self.call(tool, args)
            item = self.encode_result(ok, value)
            if self.pending_bytes + len(item) + 1 > limit:
                self.flush()
            if not self.pending and not each:
                signal.setitimer(signal.ITIMER_REAL, _FLUSH_INTERVAL_S)
            self.pending.append(item)
            self.pending_bytes += len(item) + 1
            if each:
                self.flush()
        self.flush()

    def call(self, tool, args):
        method = self.tools.get(tool) if isinstance(tool, str) else None
        if method is None:
            return False, f"unknown tool: {tool[:200] if isinstance(tool, str) else tool!r}"
        if not isinstance(args, dict):
            return False, "TypeError: arguments must be a JSON object"
        try:
            value = method(**args)
        except BaseException as exc:
            value = exc
        if self.forked:
            # A fork of the worker that returned from environment code must not speak the
            # protocol: two writers on one pipe would be a protocol violation.
            os._exit(0)
        if isinstance(value, BaseException):
            return False, _describe(value)
        return True, value

    def state(self):
        """[ok, the state as JSON data | why not], from the dumper chosen at init."""
        if self.dumper is None:
            from jsonable import public_state

            plain = self.plain_state() if self.reusable else None
            if plain is not None:
                ok, data = True, plain
            else:
                ok, data = _attempt(lambda: public_state(self.env) if self.env is not None else {})
        else:
            ok, data = self.dump()
        if ok and self.workspace is not None:
            from workspace_tools import SNAPSHOT_BUDGET_BYTES, snapshot

            budget = min(SNAPSHOT_BUDGET_BYTES, self.max_message // 2)
            ok, files = _attempt(lambda: snapshot(self.workspace, budget))
            if ok:
                data["__workspace__"] = files
            else:
                data = files
        return ok, data

    def plain_state(self):
        """The public attributes as they are, when they are plain JSON data already (a warm
        worker's class keeps only records): what public_state's walk would return, checked by
        orjson in C instead (~10x faster). None when anything needs the walk: a non-string key,
        a set, a tuple, an object, an int beyond 64 bits, nesting too deep for orjson."""
        orjson = sys.modules.get("orjson")
        if orjson is None or self.env is None:
            return None
        from jsonable import public_attributes

        attributes = dict(public_attributes(self.env))
        try:
            orjson.dumps(attributes, option=_PLAIN_ONLY)
        except Exception:
            return None
        if _deeper_than(attributes, _MAX_PLAIN_DEPTH):
            return None
        return attributes

    def dump(self):
        name = self.dumper_name
        try:
            dumped = self.dumper()
        except BaseException as exc:
            dumped = exc
        if self.forked:
            os._exit(0)  # see call()
        if isinstance(dumped, BaseException):
            return False, f"state dumper {name}() raised {_describe(dumped)}"
        if not isinstance(dumped, dict):
            return False, f"state dump is not an object: {name}() returned {type(dumped).__name__}"
        from jsonable import to_jsonable

        return _attempt(lambda: to_jsonable(dumped))

    # ------------------------------------------------------------------ init

    def empty_workspace(self):
        """Before a warm worker's next episode: the last one's files go, as a zygote removes
        them after each child. Only this process ever wrote there (the host retires a warm
        worker whose episode started a process), so once emptied it stays empty."""
        from wipe import empty

        empty(self.workspace, 0o700)
        if os.listdir(self.workspace):
            raise RuntimeError("the last episode's workspace could not be emptied")

    def init(self, request):
        limits = request.get("limits") or {}
        if self.initialised:
            if not self.reusable:
                raise RuntimeError("this worker plays one episode: it takes one init")
            self.env, self.tools, self.dumper = None, {}, None
            if self.workspace:
                self.empty_workspace()
        else:
            self.initialised = True
            self.reusable = bool(request.get("reuse"))
            # Once: a warm worker's rlimits count its whole life (see sandboxes/warm.py).
            _apply_rlimits(limits)
            _leave_cpu(request.get("parent_cpu"))
        entropy_seed = request.get("entropy_seed")
        source = request["source"]
        ahead = source.get("library_imports") if isinstance(source, dict) else None
        if entropy_seed is not None:
            import entropy

            if self.reusable:
                entropy.reseed(entropy_seed)
            elif ahead:
                # The libraries load under seed 0, here or in the zygote this worker was forked
                # from (sandboxes/imports.py): the same in every episode either way.
                if not entropy.installed():
                    entropy.install(0)
                import_libraries(ahead)
                entropy.begin(entropy_seed)
            else:
                entropy.install(entropy_seed)
        elif ahead and "entropy" in sys.modules and sys.modules["entropy"].installed():
            raise RuntimeError("a worker forked with seeded entropy plays seeded episodes only")
        self.max_message = int(limits.get("max_message_bytes", self.max_message))
        self.output_budget = int(limits.get("max_total_output_bytes", self.output_budget))
        state = request.get("state")
        state = dict(state) if isinstance(state, dict) else None
        workspace_spec = state.pop("__workspace__", None) if state is not None else None
        self.workspace = request.get("workspace")
        if self.workspace:
            os.chdir(self.workspace)
            if workspace_spec is not None:
                from workspace_tools import seed

                seed(self.workspace, workspace_spec)
        cls = _load_class(source, request.get("class_name"))
        import conventions

        loader = request.get("loader") or "auto"
        if loader == "auto":
            loader = conventions.choose_loader(cls)
        env = conventions.construct(cls, loader, state)
        if self.forked:
            os._exit(0)  # see call()
        self.env = env
        self.dumper_name, self.dumper = conventions.dumper(env, request.get("dumper") or "auto")
        self.tools = {}
        if self.workspace:
            from workspace_tools import TOOL_NAMES, WorkspaceTools

            timeout = float(limits.get("call_timeout_s", 5.0))
            builtins = WorkspaceTools(self.workspace, max(0.1, timeout * 0.8))
            self.tools.update({name: getattr(builtins, name) for name in TOOL_NAMES})
        offered = request.get("tools")
        for name in conventions.tool_names(cls):
            # The caller read the helpers off the source; only its tools are callable.
            if offered is None or name in offered:
                self.tools[name] = getattr(env, name)
        reply = {
            "class": cls.__name__,
            "loader": loader,
            "dumper": self.dumper_name,
            "tools": sorted(self.tools),
            "codec": self.codec,
        }
        if self.reusable:
            import resource

            usage = resource.getrusage(resource.RUSAGE_SELF)
            reply["cpu_s"] = usage.ru_utime + usage.ru_stime
        return reply


# Everything orjson would encode in a way of its own (dataclasses, dates, subclasses, numpy) is
# refused, so what passes is JSON data the walk returns unchanged. Tuples and enums, which orjson
# encodes as the walk converts them, still pass: the host sees the same JSON either way.
_PLAIN_ONLY = 0
_MAX_PLAIN_DEPTH = 100  # jsonable's default: deeper values the walk cuts short


def _set_plain_only():
    global _PLAIN_ONLY
    orjson = sys.modules.get("orjson")
    if orjson is not None:
        _PLAIN_ONLY = (
            orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_SUBCLASS
        )


def _deeper_than(value, limit):
    """Whether containers nest more than `limit` levels (orjson allows 255)."""
    level = [value]
    for _ in range(limit):
        level = [
            item
            for container in level
            for item in (container.values() if type(container) is dict else container)
            if type(item) in (dict, list, tuple)
        ]
        if not level:
            return False
    return True


def _leave_cpu(parent_cpu):
    """Move off the parent's CPU once, if there is another: then both sides can wait for each
    other's next message without sleeping (see _requests), instead of taking turns on one CPU
    (about twice the round-trip time). Only a nudge: the affinity is restored at once."""
    if not isinstance(parent_cpu, int) or not hasattr(os, "sched_setaffinity"):
        return
    try:
        allowed = os.sched_getaffinity(0)
        with open("/proc/self/stat") as stat:
            current = int(stat.read().rsplit(")", 1)[1].split()[36])
        if current == parent_cpu and len(allowed - {parent_cpu}) > 0:
            os.sched_setaffinity(0, allowed - {parent_cpu})
            os.sched_setaffinity(0, allowed)
    except (OSError, ValueError, IndexError):
        pass


def _attempt(action):
    try:
        return True, action()
    except BaseException as exc:
        return False, _describe(exc)


def _too_large(size, limit):
    return (
        f"result too large: {size} bytes > {limit} byte limit "
        "(ENVFOUNDRY_SANDBOX_MESSAGE_MB raises it)"
    )


# A zygote's compiled environment code, by (source text, filename): its children exec it as a
# fresh worker would after compiling the same text (compiling runs no environment code).
_COMPILED = {}


def import_libraries(names):
    """Import what the environment's code will import (sandboxes/imports.py), each once. A
    library that fails to load is left for the environment's own import to report."""
    import importlib

    for name in names:
        if isinstance(name, str) and name not in sys.modules:
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: S110 - the environment's import reports it
                pass


def compile_source(code, filename):
    # compile() inherits this module's future imports (annotations): environment code has
    # always been compiled with them, so the zygote compiles through here too.
    return compile(code, filename, "exec")


def _load_class(source, class_name):
    import types

    if source.get("kind") == "module":
        import importlib

        module = importlib.import_module(source["module"])
    else:
        module = types.ModuleType("envfoundry_env")
        module.__file__ = source.get("filename") or "<environment>"
        sys.modules[module.__name__] = module
        key = (source["code"], module.__file__)
        code = _COMPILED.get(key)
        if code is None:
            # Kept: a warm worker executes it again for every episode (a fresh class each).
            code = _COMPILED[key] = compile_source(source["code"], module.__file__)
        exec(code, module.__dict__)
    if class_name:
        cls = getattr(module, class_name, None)
        if not isinstance(cls, type):
            raise LookupError(f"no class named {class_name!r} in the environment source")
        return cls
    public = sorted(
        name
        for name, value in vars(module).items()
        if isinstance(value, type)
        and not name.startswith("_")
        and value.__module__ == module.__name__
    )
    if len(public) != 1:
        raise LookupError(
            f"expected exactly one public class in the environment source, found {public}; "
            "name the class explicitly"
        )
    return getattr(module, public[0])


_RLIMITS = (
    ("RLIMIT_AS", "address_space_bytes"),
    ("RLIMIT_CPU", "cpu_s"),
    ("RLIMIT_NOFILE", "open_files"),
    ("RLIMIT_FSIZE", "file_size_bytes"),
    ("RLIMIT_NPROC", "nproc"),
    ("RLIMIT_CORE", "core_bytes"),
)


def _apply_rlimits(limits):
    import resource

    for rlimit, key in _RLIMITS:
        value = limits.get(key)
        if value is None or not hasattr(resource, rlimit):
            continue
        which = getattr(resource, rlimit)
        ceiling = resource.getrlimit(which)[1]
        value = int(value)
        # A soft CPU limit below the hard one delivers SIGXCPU first; the hard one kills.
        hard = value + 1 if rlimit == "RLIMIT_CPU" else value
        if ceiling != resource.RLIM_INFINITY:
            value, hard = min(value, ceiling), min(hard, ceiling)
        resource.setrlimit(which, (value, hard))


def main(argv):
    if len(argv) > 1 and argv[1]:
        sys.path[:0] = argv[1].split(os.pathsep)
    control_fd = None
    if len(argv) > 2 and argv[2].startswith("--zygote="):
        control_fd = int(argv[2].partition("=")[2])
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    # The protocol moves to private descriptors; 0/1/2 become /dev/null so environment code
    # reading stdin or printing cannot touch it by accident (a deliberate attempt is caught by
    # the parent's framing checks).
    in_fd, out_fd = os.dup(0), os.dup(1)
    null_fd = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null_fd, fd)
    os.close(null_fd)
    sys.stdout = sys.stderr = _Discard()
    sys.stdin = open(os.devnull)
    codec = _import_codec()
    _set_plain_only()
    if control_fd is not None:
        from zygote import serve

        serve(
            control_fd,
            in_fd,
            out_fd,
            codec,
            serve_episode,
            _COMPILED,
            compile_source,
            import_libraries,
        )
    serve_episode(in_fd, out_fd, codec)


def serve_episode(in_fd, out_fd, codec):
    """Be the worker of one episode: say ready, answer requests until the parent hangs up."""
    codec, dumps, loads = codec
    worker = Worker(codec, dumps, loads, out_fd)
    os.register_at_fork(after_in_child=lambda: setattr(worker, "forked", True))
    signal.signal(signal.SIGALRM, worker.on_timer)
    # Restart interrupted system calls, so the flush timer is invisible to environment code.
    signal.siginterrupt(signal.SIGALRM, False)
    worker.send({"ready": True, "pid": os.getpid(), "uid": os.getuid(), "codec": codec})
    for line in _requests(in_fd):
        try:
            worker.handle(loads(line))
        except Exception as exc:
            # Only a broken parent sends these; the null id tells it so.
            worker.reply(None, False, f"bad request: {_describe(exc)}", counted=False)
    os._exit(0)


_SPIN_S = 50e-6


def _requests(fd):
    """Request lines from the parent. Waits for each by reading without sleeping for 50 us
    first: back-to-back requests then never pay a wake-up (tens of microseconds on a VM)."""
    import select
    import time

    os.set_blocking(fd, False)
    waiter = select.poll()
    waiter.register(fd, select.POLLIN)
    clock, pause = time.perf_counter, os.sched_yield
    buffer, scanned = bytearray(), 0
    while True:
        end = buffer.find(b"\n", scanned)
        if end >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            scanned = 0
            yield line
            continue
        scanned = len(buffer)
        stop = clock() + _SPIN_S
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
                break
            except BlockingIOError:
                if clock() < stop:
                    pause()
                else:
                    waiter.poll()
        if not chunk:
            return
        buffer += chunk


if __name__ == "__main__":
    main(sys.argv)
