"""Seeded stand-ins for the clock and for randomness: an episode computes the same values each run.

install(seed), before any environment code runs, gives the worker one per-episode clock that
starts at 2026-03-02T09:00:00 UTC plus a seed-derived whole number of minutes (within 30 days)
and moves on 1 ms per reading (and by whatever time.sleep slept): time.time, time.time_ns,
time.localtime/gmtime/ctime/asctime/strftime without a time argument, datetime.datetime.now/
utcnow/today and datetime.date.today all read it. random (module functions, Random() without a
seed, SystemRandom), os.urandom, os.getrandom, uuid.uuid4, uuid.uuid1 and secrets draw from the
seed, each from a stream of its own, so that using one never shifts another's values (Random
and SystemRandom objects made without a seed take, in order, the seeds of one more stream).

time and os are loaded already and patched at once. datetime, random, uuid and secrets are
patched by a sys.meta_path finder right after they first execute (or at once, if something
loaded them before): an environment that never imports them pays nothing. Nothing is imported
here that is not loaded already, but the C module _random once a stream is first drawn from.
"""

import operator
import os
import sys
import time

EPOCH_S = 1_772_442_000  # 2026-03-02T09:00:00Z
WINDOW_MINUTES = 30 * 24 * 60
TICK_NS = 1_000_000
_MASK = (1 << 64) - 1
_CLOCK, _URANDOM, _RANDOM, _CONSTRUCT, _UUID, _SECRETS = range(1, 7)

_entropy = None


def mix(seed, stream):
    """splitmix64 of (seed, stream): well spread 64-bit numbers even from seeds 0, 1, 2..."""
    x = (seed + stream * 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def clock_start_ns(seed):
    """Where the clock of an episode with `seed` starts, in ns since the Unix epoch."""
    return (EPOCH_S + mix(seed & _MASK, _CLOCK) % WINDOW_MINUTES * 60) * 1_000_000_000


class _Entropy:
    def __init__(self, seed):
        self.seed = seed & _MASK
        self.now_ns = clock_start_ns(seed)
        self.streams = {}
        self.objects = {}

    def tick_ns(self):
        now = self.now_ns
        self.now_ns = now + TICK_NS
        return now

    def stream(self, which):
        """The generator of one stream: the C one, so no Python module needs importing."""
        generator = self.streams.get(which)
        if generator is None:
            import _random

            generator = self.streams[which] = _random.Random(mix(self.seed, which))
        return generator

    def bytes(self, which, size):
        size = operator.index(size)
        if size < 0:
            raise ValueError("negative argument not allowed")
        return self.stream(which).getrandbits(size * 8).to_bytes(size, "little")


def install(seed):
    """Patch everything for episode `seed` (an int); once per worker."""
    global _entropy
    if _entropy is not None:
        raise RuntimeError("entropy shims are installed already")
    _entropy = _Entropy(operator.index(seed))
    time.time, time.time_ns, time.sleep = _now_s, _time_ns, _sleep
    time.localtime, time.gmtime, time.ctime = _localtime, _gmtime, _ctime
    time.asctime, time.strftime = _asctime, _strftime
    os.urandom = _urandom
    if hasattr(os, "getrandom"):
        os.getrandom = _getrandom
    for name, patch in _PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)
    sys.meta_path.insert(0, _Finder())
    _extensions_see_real_dates()


def installed():
    return _entropy is not None


def begin(seed):
    """Start episode `seed` after the libraries an environment imports were loaded under
    install(0) (a worker given library imports, or the zygote it was forked from; no
    environment code has run): the clock, the streams and the seeded generators begin as
    install(seed) begins them. What the libraries drew while loading stays what seed 0 gave,
    in every episode, so loading them once in a zygote and forking from there changes nothing.
    The generators are seeded again in place: a library that kept `random.random` while it
    loaded draws from the episode's stream, as in a fresh worker."""
    state = _entropy
    state.seed = operator.index(seed) & _MASK
    state.now_ns = clock_start_ns(seed)
    state.streams = {}
    for key in ("uuid1.last", "uuid1.node"):
        state.objects.pop(key, None)
    for key, which in (("random._inst", _RANDOM), ("secrets", _SECRETS)):
        generator = state.objects.get(key)
        if generator is not None:
            generator.seed(mix(state.seed, which))


def reseed(seed):
    """Start episode `seed` in a worker that may have played one (a warm worker, see
    sandboxes/warm.py): every stream and the clock begin again exactly as install(seed) would
    begin them in a fresh worker. The replacement date and Random classes stay (objects an
    earlier episode made remain instances of them); what holds per-episode state is re-made."""
    global _entropy
    if _entropy is None:
        install(seed)
        return
    carried = {k: v for k, v in _entropy.objects.items() if k in ("datetime", "random")}
    _entropy = _Entropy(operator.index(seed))
    _entropy.objects.update(carried)
    for name, patch in _PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module, again=True)


# --------------------------------------------------------------------------- time and os

_real_sleep = time.sleep
_real_localtime = time.localtime
_real_gmtime = time.gmtime
_real_ctime = time.ctime
_real_asctime = time.asctime
_real_strftime = time.strftime


def _now_s():
    return _entropy.tick_ns() / 1e9


def _time_ns():
    return _entropy.tick_ns()


def _sleep(secs):
    _real_sleep(secs)
    # A loop waiting for time.time() to pass a deadline must still get there.
    _entropy.now_ns += int(secs * 1e9)


def _localtime(secs=None):
    return _real_localtime(_now_s() if secs is None else secs)


def _gmtime(secs=None):
    return _real_gmtime(_now_s() if secs is None else secs)


def _ctime(secs=None):
    return _real_ctime(_now_s() if secs is None else secs)


def _asctime(t=None):
    return _real_asctime(_localtime() if t is None else t)


def _strftime(format, t=None):
    return _real_strftime(format, _localtime() if t is None else t)


def _urandom(size):
    return _entropy.bytes(_URANDOM, size)


def _getrandom(size, flags=0):
    return _entropy.bytes(_URANDOM, size)


# --------------------------------------------------------------------------- datetime


class _Fake(type):
    """Metaclass of the replacement date classes: every real date is an instance of them, as
    every real datetime is a date (subclasses an environment defines behave as usual)."""

    def __instancecheck__(cls, obj):
        real = _REAL.get(cls)
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub):
        real = _REAL.get(cls)
        return issubclass(sub, real) if real is not None else type.__subclasscheck__(cls, sub)


_REAL = {}


def _patch_datetime(module, again=False):
    if isinstance(module.datetime, _Fake):
        return
    fakes = _entropy.objects.get("datetime")
    if fakes is None:
        fakes = _entropy.objects["datetime"] = _date_classes(module.date, module.datetime)
    module.date, module.datetime = fakes


def _date_classes(real_date, real_datetime):
    class date(real_date, metaclass=_Fake):
        __slots__ = ()

        @classmethod
        def today(cls):
            return cls.fromtimestamp(_now_s())

    class datetime(real_datetime, metaclass=_Fake):
        __slots__ = ()

        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(_now_s(), tz)

        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(_now_s())

        @classmethod
        def today(cls):
            return cls.fromtimestamp(_now_s())

    for fake, real in ((date, real_date), (datetime, real_datetime)):
        # Code that prints, pickles or compares class names sees the real module's names.
        fake.__module__, fake.__qualname__, fake.__doc__ = "datetime", real.__name__, real.__doc__
        _REAL[fake] = real
    return date, datetime


def _extensions_see_real_dates():
    """A compiled extension that uses datetime's C API (pandas, pyarrow, ...) reads
    `datetime.datetime` and `datetime.date` from the module while it initialises and takes
    them for the C types: given the replacement classes it lays its own types out on the
    wrong size and the worker dies (SIGSEGV). So while an extension module is made and run,
    the module holds the real classes; the replacements are put back right after. What the
    extension later hands out are real dates, instances of the replacements as well."""
    loader = sys.modules["_frozen_importlib_external"].ExtensionFileLoader
    for name in ("create_module", "exec_module"):
        method = getattr(loader, name)
        if not getattr(method, "_real_dates", False):
            setattr(loader, name, _with_real_dates(method))


def _with_real_dates(method):
    def run(self, *args):
        module = sys.modules.get("datetime")
        fakes = _entropy.objects.get("datetime") if _entropy is not None else None
        if module is None or fakes is None or module.datetime is not fakes[1]:
            return method(self, *args)
        module.date, module.datetime = _REAL[fakes[0]], _REAL[fakes[1]]
        try:
            return method(self, *args)
        finally:
            module.date, module.datetime = fakes

    run._real_dates = True
    return run


# --------------------------------------------------------------------------- random, uuid, secrets


def _patch_random(module, again=False):
    if "_entropy_seeded" in vars(module.Random) and not again:
        return
    made = _entropy.objects.get("random")
    if made is None:
        made = _entropy.objects["random"] = _random_classes(module.Random)
    seeded, system = made
    instance = _entropy.objects.get("random._inst")
    if instance is None:
        instance = _entropy.objects["random._inst"] = seeded(mix(_entropy.seed, _RANDOM))
    old = getattr(module, "_inst", None)
    for name, value in list(vars(module).items()):
        if old is not None and getattr(value, "__self__", None) is old:
            setattr(module, name, getattr(instance, value.__name__))
    module._inst, module.Random, module.SystemRandom = instance, seeded, system


def _random_classes(real):
    class Random(real):
        _entropy_seeded = True

        def seed(self, a=None, version=2):
            # No seed means "from the system": here, the next seed of the episode's stream
            # (looked up per call: a reseeded worker's next episode has a stream of its own).
            if a is None:
                a = _entropy.stream(_CONSTRUCT).getrandbits(64)
            super().seed(a, version)

    class SystemRandom(Random):
        """Seeded like Random: inside an episode there is no system entropy to draw from."""

    for cls in (Random, SystemRandom):
        cls.__module__, cls.__qualname__ = "random", cls.__name__
    return Random, SystemRandom


def _patch_uuid(module, again=False):
    if module.uuid4 is _uuid4:
        return
    module.uuid4, module.uuid1 = _uuid4, _uuid1


def _uuid4():
    uuid = sys.modules["uuid"]
    return uuid.UUID(bytes=_entropy.bytes(_UUID, 16), version=4)


def _uuid1(node=None, clock_seq=None):
    """uuid.uuid1 from the episode's clock, with a seeded node and clock sequence."""
    uuid = sys.modules["uuid"]
    stream = _entropy.stream(_UUID)
    timestamp = _entropy.tick_ns() // 100 + 0x01B21DD213814000
    last = _entropy.objects.get("uuid1.last", -1)
    timestamp = _entropy.objects["uuid1.last"] = max(timestamp, last + 1)
    if clock_seq is None:
        clock_seq = stream.getrandbits(14)
    if node is None:
        if "uuid1.node" not in _entropy.objects:
            # A random node has the multicast bit set (RFC 4122 4.5), as uuid.getnode's does.
            _entropy.objects["uuid1.node"] = stream.getrandbits(48) | (1 << 40)
        node = _entropy.objects["uuid1.node"]
    fields = (
        timestamp & 0xFFFFFFFF,
        (timestamp >> 32) & 0xFFFF,
        (timestamp >> 48) & 0x0FFF,
        (clock_seq >> 8) & 0x3F,
        clock_seq & 0xFF,
        node,
    )
    return uuid.UUID(fields=fields, version=1)


def _patch_secrets(module, again=False):
    generator = _entropy.objects.get("secrets")
    if generator is None:
        generator = _entropy.objects["secrets"] = sys.modules["random"].Random(
            mix(_entropy.seed, _SECRETS)
        )
    module._sysrand = generator
    module.randbits, module.choice = generator.getrandbits, generator.choice


_PATCHES = {
    "datetime": _patch_datetime,
    "random": _patch_random,
    "uuid": _patch_uuid,
    "secrets": _patch_secrets,
}


# --------------------------------------------------------------------------- the import hook


class _Finder:
    """Finds nothing itself: wraps the loader the other finders give for a patched module."""

    def find_spec(self, name, path=None, target=None):
        patch = _PATCHES.get(name)
        if patch is None:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, patch)
        return spec

    def invalidate_caches(self):
        pass


class _PatchingLoader:
    def __init__(self, loader, patch):
        self.loader = loader
        self.patch = patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name):
        # get_source, get_data, is_package...: tracebacks and resources keep working.
        return getattr(self.loader, name)
