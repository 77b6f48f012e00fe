"""How a foreign environment class is read: which methods are tools, how state goes in and out.

Imported inside the worker as `conventions` and by the parent as `sandboxes.inside.conventions`
(synthesis.environments.analysis applies the same tool rule to source text), so it is stdlib
only and imports nothing when loaded: it must cost nothing at worker start-up (the rare paths
that need a module, a class's module default, import it there).

The tool rule. The tools of a class are the public functions defined in the class or its bases
(`object` aside), the most derived definition of a name deciding, less:
  - staticmethods, classmethods, properties, classes and async functions (not callable as tools);
  - NON_TOOL_NAMES, the state protocol a harness calls and an agent must not;
  - names starting with one of NON_TOOL_PREFIXES (test hooks such as assert_invariants).

A class that marks its tools says which they are: when any candidate carries a tool marker
(tau2-bench's `@is_tool(...)` sets `__tool__`; on the AST, a decorator named in
TOOL_DECORATORS), the marked candidates are the tools and nothing else is, documented or
not (a toolkit base's own public helpers, `get_tools` or `get_statistics`, are not tools). A
discoverable tool (tau2's `@is_discoverable_tool`) is left out, as tau2 leaves it out of an
agent's prompt.

Which of the other public methods are helpers (a balance update another method calls with a
user record, an undocumented money formatter) is read from the source, by what they do
(synthesis/environments/analysis.py): a live class cannot show it. A session given the tools
(EnvSource.tools) offers only those; without, every candidate here.
"""

DUMPER_NAMES = ("get_env_state", "get_state", "dump_state", "export_state")
NON_TOOL_NAMES = frozenset(
    (
        *DUMPER_NAMES,
        "set_state",
        "load_state",
        "save_state",
        "restore_state",
        "reset",
        "load_scenario",
        "to_dict",
        "from_dict",
        "to_json",
        "from_json",
    )
)
NON_TOOL_PREFIXES = ("assert_",)
# The attribute a tool marker sets on the function, and the decorators that set one.
TOOL_MARKER = "__tool__"
DISCOVERABLE_MARKER = "__discoverable__"
TOOL_DECORATORS = ("is_tool", "tool")
DISCOVERABLE_DECORATORS = ("is_discoverable_tool",)
# A constructor parameter with one of these names takes the whole initial state.
CONFIG_PARAM_NAMES = (
    "config",
    "init_config",
    "initial_config",
    "env_config",
    "state",
    "initial_state",
    "scenario",
    "data",
)

_CO_VARKEYWORDS = 0x08
_CO_ASYNC = 0x80 | 0x200  # CO_COROUTINE | CO_ASYNC_GENERATOR


def is_tool_name(name):
    """Whether a function called `name` may be a tool (before the helper part of the rule)."""
    return (
        not name.startswith("_")
        and name not in NON_TOOL_NAMES
        and not name.startswith(NON_TOOL_PREFIXES)
    )


def marked_tools(candidates, marked=None):
    """The tools among candidate names: the marked ones when any is (`marked`: the names
    carrying a tool marker; None: no marker was looked for), else all of them."""
    if marked:
        return [name for name in candidates if name in marked]
    return list(candidates)


def tool_names(cls):
    """The rule applied to a live class, in definition order (most derived class first)."""
    seen = set()
    candidates = []
    marked = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name in seen or not isinstance(name, str):
                continue
            seen.add(name)
            function = _plain_function(value) if is_tool_name(name) else None
            if function is not None:
                if getattr(function, DISCOVERABLE_MARKER, False) is True:
                    continue
                if getattr(function, TOOL_MARKER, False) is True:
                    marked.add(name)
                candidates.append(name)
    return marked_tools(candidates, marked)


def _plain_function(value):
    """The function behind a class attribute that binds like a method, else None."""
    if isinstance(value, (staticmethod, classmethod, property, type)):
        return None
    if not callable(value) or not hasattr(type(value), "__get__"):
        return None
    # Decorators that keep the function reachable (functools.wraps, lru_cache) still make tools.
    function = _unwrap(value)
    if function is None or function.__code__.co_flags & _CO_ASYNC:
        return None
    return function


def _unwrap(function):
    for _ in range(10):
        if hasattr(function, "__code__"):
            return function
        function = getattr(function, "__wrapped__", None)
        if function is None:
            return None
    return None


class Signature:
    """A Python function's parameters, read from its code object (importing inspect costs ms)."""

    __slots__ = ("names", "positional", "keyword", "required", "var_keyword")

    def __init__(self, names, positional, keyword, required, var_keyword):
        # Every named parameter in order; those that can be passed positionally, and by keyword.
        self.names = names
        self.positional = positional
        self.keyword = keyword
        self.required = required
        self.var_keyword = var_keyword


def signature(function, bound=False):
    """The parameters of `function` (skipping the first when `bound`), or None if unknowable."""
    function = _unwrap(function)
    if function is None:
        return None
    code = function.__code__
    count, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames[: count + kwonly]
    defaults = getattr(function, "__defaults__", None) or ()
    kwdefaults = getattr(function, "__kwdefaults__", None) or {}
    first_default = count - len(defaults)
    skip = 1 if bound and count else 0
    required = [names[i] for i in range(skip, first_default)]
    required += [name for name in names[count:] if name not in kwdefaults]
    return Signature(
        names=list(names[skip:]),
        positional=list(names[skip:count]),
        keyword=list(names[max(skip, posonly) :]),
        required=required,
        var_keyword=bool(code.co_flags & _CO_VARKEYWORDS),
    )


def init_signature(cls):
    """`cls.__init__` without self; an empty one for object's, None when it cannot be read."""
    init = getattr(cls, "__init__", None)
    if init is object.__init__:
        return Signature([], [], [], [], False)
    return signature(init, bound=True)


def choose_loader(cls):
    """The "auto" loader: _load_scenario, else the constructor if it wants the state, else
    one attribute per top-level key."""
    if callable(getattr(cls, "_load_scenario", None)):
        return "load_scenario"
    init = init_signature(cls)
    if init is not None and (init.required or (init.names and init.names[0] in CONFIG_PARAM_NAMES)):
        return "constructor"
    return "attributes"


def construct(cls, loader, state):
    """An instance of `cls` holding `state`, by one of the loaders (see sandboxes.source)."""
    if loader == "constructor":
        args, kwargs, attributes = constructor_call(cls, state)
        obj = cls(*args, **kwargs)
    elif loader in ("load_scenario", "attributes"):
        obj, attributes = cls(), {}
        if loader == "load_scenario" and state is not None:
            obj._load_scenario(state)
        elif loader == "load_scenario":
            # The class's own default: what `_load_scenario({})` sets up (BFCL), or, when an
            # empty config is refused, what the constructor already loaded (classes that
            # load their default scenario in __init__). A fresh instance: the refused load
            # may have written half of its state.
            try:
                obj._load_scenario({})
            except Exception:
                obj = cls()
            default = module_default(cls)
            if default is not None and is_empty(obj):
                # `_load_scenario` returned early on {} and left an empty world, while the
                # module keeps its default in DEFAULT_STATE (EnvCraft's classes): load a copy
                # of that (the class may change what it is given in place).
                import copy

                obj = cls()
                obj._load_scenario(copy.deepcopy(default))
        else:
            attributes = state or {}
    else:
        raise ValueError(f"unknown loader {loader!r}")
    for key, value in attributes.items():
        setattr(obj, key, value)
    return obj


# Module-level names a class's module keeps its default state under.
DEFAULT_STATE_NAMES = ("DEFAULT_STATE", "DEFAULT_SCENARIO")


def module_default(cls):
    """The dict a class's module keeps as its default state (DEFAULT_STATE_NAMES), else None."""
    import sys

    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    for name in DEFAULT_STATE_NAMES:
        value = getattr(module, name, None)
        if isinstance(value, dict) and value:
            return value
    return None


def is_empty(obj):
    """Whether every public attribute the instance holds is empty (None, {}, [], "", 0)."""
    held = getattr(obj, "__dict__", None) or {}
    return all(not value for name, value in held.items() if not name.startswith("_"))


def constructor_call(cls, state):
    """(args, kwargs, attributes): how the "constructor" loader builds `cls` from `state`.

    No state: no arguments when the constructor allows it, else an empty dict. A single
    config-like parameter (the others optional) takes the whole dict; otherwise keys naming
    parameters (all keys, given **kwargs) are keyword arguments and the rest become attributes.
    """
    init = init_signature(cls)
    model = model_parameter(cls, init)
    if model is not None:
        # One required parameter typed as a model (tau2's `RetailTools(db: RetailDB)`): the
        # state is that model's data, or {name: data} as the class reports it back.
        name, kind = model
        data = state if state is None or set(state) != {name} else state[name]
        value = build_model(kind, {} if data is None else data)
        if init.positional[:1] == [name]:
            return (value,), {}, {}
        return (), {name: value}, {}
    if state is None:
        return ((), {}, {}) if init is None or not init.required else (({},), {}, {})
    if init is None:
        return (state,), {}, {}
    configs = [name for name in init.names if name in CONFIG_PARAM_NAMES]
    if len(configs) == 1 and all(name == configs[0] for name in init.required):
        name = configs[0]
        if init.positional[:1] == [name]:
            return (state,), {}, {}
        if name in init.keyword:
            return (), {name: state}, {}
    if init.var_keyword:
        return (), dict(state), {}
    keyword = set(init.keyword)
    kwargs = {key: value for key, value in state.items() if key in keyword}
    rest = {key: value for key, value in state.items() if key not in keyword}
    return (), kwargs, rest


def model_parameter(cls, init):
    """(name, class) of the constructor's one required parameter when it is annotated with a
    model class (a pydantic model or a dataclass), else None."""
    if init is None or len(init.required) != 1:
        return None
    name = init.required[0]
    function = _unwrap(getattr(cls, "__init__", None))
    annotation = (getattr(function, "__annotations__", None) or {}).get(name)
    if isinstance(annotation, str):
        # `from __future__ import annotations`: the class's own module names it.
        try:
            annotation = eval(annotation, function.__globals__)  # noqa: S307 - in the sandbox
        except Exception:
            return None
    if isinstance(annotation, type) and (
        callable(getattr(annotation, "model_validate", None))
        or isinstance(getattr(annotation, "__dataclass_fields__", None), dict)
    ):
        return name, annotation
    return None


def build_model(kind, data):
    """An instance of the model class `kind` from plain data (pydantic validates it; a
    dataclass takes its fields as keyword arguments)."""
    validate = getattr(kind, "model_validate", None)
    if callable(validate):
        return validate(data)
    return kind(**data)


def dumper(obj, name):
    """(name, bound method) of the state dumper `name` asks for; ("attributes", None) when the
    public attributes are the state."""
    if name == "auto":
        name = find_dumper(obj) or "attributes"
    if name == "attributes":
        return name, None
    method = getattr(obj, name, None) if isinstance(name, str) else None
    if not callable(method):
        raise LookupError(f"the state dumper {name!r} is not a method of {type(obj).__name__}")
    return name, method


def find_dumper(obj):
    """The first of DUMPER_NAMES that `obj` has as a method callable without arguments."""
    for name in DUMPER_NAMES:
        method = getattr(obj, name, None)
        if callable(method) and takes_no_arguments(method):
            return name
    return None


def takes_no_arguments(method):
    function = getattr(method, "__func__", method)
    found = signature(function, bound=function is not method)
    return found is not None and not found.required
