"""EnvSpec → a readable Python class that follows the environment contract
(docs/architecture.md).

The class keeps all state in public dict attributes (one per entity collection, records keyed
by id), exposes one public method per tool with type hints and a Google-style docstring (the
analysis derives the OpenAI schema from those), validates every argument, and returns
`{"success": ..., "data"|"error": ...}` instead of raising for domain errors.

Every text the compiler puts into source (vocabulary words in docstrings, messages, enum
values) is escaped for the literal it lands in, so any words give valid code that reads back
as the same text; plain text comes out exactly as written.
"""

from __future__ import annotations

import keyword

from synthesis.environments.field_forms import (
    DATETIME_EXAMPLE,
    DATETIME_FORMAT,
    EMAIL_PATTERN,
    PHONE_PATTERN,
    FieldForm,
    number_text,
    param_forms,
)
from synthesis.models import Effect, EntitySpec, EnvSpec, ParamSpec, Precondition, ToolSpec

_PY_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
# Conditions that are true when an argument has the WRONG type (bool is an int in Python).
_WRONG_TYPE = {
    "string": "not isinstance({v}, str)",
    "integer": "not isinstance({v}, int) or isinstance({v}, bool)",
    "number": "not isinstance({v}, (int, float)) or isinstance({v}, bool)",
    "boolean": "not isinstance({v}, bool)",
}
_ARTICLE = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
}


# Names the generated methods use themselves: a local variable named after an entity must not
# shadow them (an entity called "record" or "self" would otherwise break the method).
_RESERVED_LOCALS = frozenset(
    {
        "self", "record", "records", "wanted", "numbers", "key", "prefix", "_",
        "dict", "str", "int", "float", "bool", "list", "isinstance", "sorted", "max",
        "round", "repr", "Literal",
        "existing", "linked", "values", "value", "first", "second", "differences", "sum", "min",
        "len", "any",
    }
)  # fmt: skip
# The no_conflict guard's loop variables.
_RESERVED_LOCALS |= {"existing_id"}


def _escape(text: str, extra: dict[str, str]) -> str:
    """`text` spelled for the inside of a string literal: backslashes doubled, characters
    that are not printable (newlines, controls, lone surrogates) as escapes, and `extra`
    replacements (quotes, f-string braces). Printable text, non-ASCII included, stays as is."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch in extra:
            out.append(extra[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])  # "\n", "\x00", "\u2028", "\ud800"
    return "".join(out)


def _dq(text: str) -> str:
    """A double-quoted string literal of `text` (`"..."`, as the messages were always written)."""
    return '"' + _escape(text, {'"': '\\"'}) + '"'


def _fq(text: str) -> str:
    """`text` for the literal part of a double-quoted f-string (braces doubled)."""
    return _escape(text, {'"': '\\"', "{": "{{", "}": "}}"})


def _doc(text: str) -> list[str]:
    """`text` as docstring lines: the value Python reads back is `text` (after the usual
    docstring dedent). Newlines stay line breaks; triple quotes cannot end the docstring."""
    escaped = _escape(text, {"\n": "\n"}).replace('"""', '\\"\\"\\"')
    return escaped.split("\n")


def _docstring_text(code: _Code, text: str, opener: str = "", indent: str = "") -> None:
    """Emit `text` as docstring lines, the first after `opener`, later ones after `indent`."""
    first, *rest = _doc(text)
    code(opener + first)
    for line in rest:
        code(indent + line if line else "")


def _local(name: str, taken: set[str]) -> str:
    """A local variable for the record of entity `name`: the name itself unless that is a
    keyword or would shadow a parameter or a name the method uses."""
    candidate = name
    while keyword.iskeyword(candidate) or candidate in _RESERVED_LOCALS or candidate in taken:
        candidate += "_record"
    taken.add(candidate)
    return candidate


class _Code:
    """Indented line buffer; keeps the generator readable without a template engine."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, line: str = "") -> None:
        self.lines.append(("    " * self.depth + line) if line else "")

    def indent(self) -> _Code:
        self.depth += 1
        return self

    def dedent(self) -> None:
        self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def compile_spec(spec: EnvSpec) -> str:
    """Python source of the environment class for `spec` (deterministic for equal specs)."""
    entities = {e.name: e for e in spec.entities}
    code = _Code()
    _docstring_text(code, f"{spec.title}: {spec.description}", opener='"""')
    code()
    _docstring_text(
        code,
        f"Generated by EnvFoundry from spec {spec.env_id} "
        f"(archetype {spec.archetype}, schema v{spec.schema_version}).",
    )
    code('"""')
    code()
    forms = {t.name: param_forms(t, entities[t.entity].fields) for t in spec.tools}
    _form_helpers(code, {form.kind for by_param in forms.values() for form in by_param.values()})
    code(f"class {spec.class_name}:")
    code.indent()
    _docstring_text(code, spec.description, opener='"""')
    if spec.rules:
        code()
        code("Rules:")
        for rule in spec.rules:
            _docstring_text(code, rule, opener="- ", indent="  ")
    code('"""')
    code()
    code("def __init__(self) -> None:")
    code.indent()
    for entity in spec.entities:
        code(f"self.{entity.collection}: dict[str, dict] = {{}}")
    code.dedent()
    code()
    code("def _next_id(self, records: dict, prefix: str) -> str:")
    code.indent()
    code(
        'numbers = [int(key.rsplit("-", 1)[1]) for key in records '
        'if key.rsplit("-", 1)[-1].isdigit()]'
    )
    code('return f"{prefix}-{max(numbers, default=0) + 1:04d}"')
    code.dedent()
    for tool in spec.tools:
        code()
        _tool(code, tool, entities, forms[tool.name])
    code.dedent()
    return code.text()


def _form_helpers(code: _Code, kinds: set[str]) -> None:
    """The imports, and the module-level tests of the value forms the tools check (only those
    some tool needs: synthesis.environments.field_forms defines them)."""
    patterns = [("EMAIL_FORM", EMAIL_PATTERN, "email"), ("PHONE_FORM", PHONE_PATTERN, "phone")]
    patterns = [(name, pattern, kind) for name, pattern, kind in patterns if kind in kinds]
    if patterns:
        code("import re")
    if "datetime" in kinds:
        code("from datetime import datetime")
    code("from typing import Literal")
    code()
    if patterns:
        code("# How this environment writes these values; an argument in another form is refused.")
        for name, pattern, kind in patterns:
            flags = ", re.IGNORECASE" if kind == "email" else ""
            code(f'{name} = re.compile(r"{pattern}"{flags})')
        code()
    if "datetime" in kinds:
        code()
        code("def is_datetime(value: str) -> bool:")
        code.indent()
        code('"""Whether `value` is a real date and time written as this environment writes')
        code(f'them ({DATETIME_EXAMPLE})."""')
        code("try:")
        code.indent()
        code(f"return datetime.fromisoformat(value).strftime({_dq(DATETIME_FORMAT)}) == value")
        code.dedent()
        code("except ValueError:")
        code.indent()
        code("return False")
        code.dedent()
        code.dedent()
        code()
    code()


def _annotation(p: ParamSpec) -> str:
    base = f"Literal[{', '.join(repr(v) for v in p.enum)}]" if p.enum else _PY_TYPES[p.type]
    return base if p.required else f"{base} | None = None"


def _tool(
    code: _Code, tool: ToolSpec, entities: dict[str, EntitySpec], forms: dict[str, FieldForm]
) -> None:
    entity = entities[tool.entity]
    params = sorted(tool.params, key=lambda p: not p.required)  # required first, as Python wants
    signature = ", ".join(["self", *(f"{p.name}: {_annotation(p)}" for p in params)])
    code(f"def {tool.name}({signature}) -> dict:")
    code.indent()
    _docstring_text(code, tool.description, opener='"""')
    if params:
        code()
        code("Args:")
        for p in params:
            # Continuation lines indented deeper than the name, as Google style reads them.
            _docstring_text(code, p.description or p.name, f"    {p.name}: ", indent=" " * 8)
    code('"""')
    _validate_args(code, params, forms)
    body = {
        "list": _list,
        "get": _get,
        "find": _find,
        "create": _create,
        "transition": _transition,
        "update": _update,
        "search": _search,
        "aggregate": _aggregate,
        "compare": _compare,
    }[tool.operation]
    body(code, tool, entity, entities)
    code.dedent()


def _validate_args(code: _Code, params: list[ParamSpec], forms: dict[str, FieldForm]) -> None:
    # Agents send whatever they like; a wrong type or form is a domain error, never an
    # exception, and it is refused before anything is read or changed.
    for p in params:
        wrong = _WRONG_TYPE[p.type].format(v=p.name)
        code(f"if {wrong}:" if p.required else f"if {p.name} is not None and ({wrong}):")
        code.indent()
        message = _dq(f"{p.name} must be {_ARTICLE[p.type]}")
        code(f'return {{"success": False, "error": {message}}}')
        code.dedent()
        if p.enum:
            allowed = _tuple(p.enum)
            guard = f"{p.name} not in {allowed}"
            code(f"if {guard if p.required else f'{p.name} is not None and {guard}'}:")
            code.indent()
            message = _dq(f"{p.name} must be one of {list(p.enum)}")
            code(f'return {{"success": False, "error": {message}}}')
            code.dedent()
        form = forms.get(p.name)
        if form is not None:
            ill_formed = _ill_formed(p.name, form)
            code(f"if {ill_formed if p.required else f'{p.name} is not None and {ill_formed}'}:")
            code.indent()
            code(f'return {{"success": False, "error": {_dq(form.error(p.name))}}}')
            code.dedent()


def _ill_formed(name: str, form: FieldForm) -> str:
    """The condition under which argument `name` (of the right type) lacks `form`."""
    if form.kind == "datetime":
        return f"not is_datetime({name})"
    if form.kind in ("email", "phone"):
        return f"not {form.kind.upper()}_FORM.fullmatch({name}.strip())"
    if form.kind == "count":
        return f"{name} < 0"
    if form.kind == "enum":
        return f"{name} not in {_tuple(list(form.values))}"
    # Written as a range so that NaN and infinity fail it too.
    return f"not 0 <= {name} <= {number_text(form.ceiling)}"


def _tuple(values: list[str]) -> str:
    return "(" + ", ".join(repr(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _fetch(code: _Code, var: str, entity: EntitySpec, key: str) -> None:
    code(f"{var} = self.{entity.collection}.get({key})")
    code(f"if {var} is None:")
    code.indent()
    code(f'return {{"success": False, "error": f"unknown {_fq(entity.label)} {{{key}!r}}"}}')
    code.dedent()


def _list(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    for p in tool.params:
        if p.ref and p.required:
            ref = entities[p.ref]
            code(f"if {p.name} not in self.{ref.collection}:")
            code.indent()
            unknown = f"unknown {_fq(ref.label)} {{{p.name}!r}}"
            code(f'return {{"success": False, "error": f"{unknown}"}}')
            code.dedent()
    conditions = []
    for p in tool.params:
        test = f"record.get({p.field!r}) == {p.name}"
        conditions.append(test if p.required else f"({p.name} is None or {test})")
    code("records = [")
    code.indent()
    code(f"dict(record) for _, record in sorted(self.{entity.collection}.items())")
    if conditions:
        code("if " + " and ".join(conditions))
    code.dedent()
    code("]")
    code('return {"success": True, "data": records}')


def _get(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    _fetch(code, "record", entity, f"{entity.name}_id")
    code('return {"success": True, "data": dict(record)}')


def _find(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    field = tool.field
    code(f"wanted = {field}.strip().lower()")
    code(f"for _, record in sorted(self.{entity.collection}.items()):")
    code.indent()
    code(f"if str(record.get({field!r}, '')).lower() == wanted:")
    code.indent()
    code('return {"success": True, "data": dict(record)}')
    code.dedent()
    code.dedent()
    missing = f"no {_fq(entity.label)} with {_fq(field)} {{{field}!r}}"
    code(f'return {{"success": False, "error": f"{missing}"}}')


def _preconditions(
    code: _Code,
    preconditions: list[Precondition],
    ref_vars: dict[str, str],
    tool: ToolSpec | None = None,
    entity: EntitySpec | None = None,
    entities: dict | None = None,
) -> dict[str, str]:
    """Emit the guards; returns the records fetched through reference fields on the way
    (field -> local name), which effects then reuse."""
    linked: dict[str, str] = {}
    for pre in preconditions:
        if pre.kind in _WORKFLOW_GUARDS:
            test = _WORKFLOW_GUARDS[pre.kind](pre, ref_vars, tool, entity)
        elif pre.kind == "ref_field_equals":
            test = f"{ref_vars[pre.param]}.get({pre.field!r}) != {pre.value!r}"
        elif pre.kind == "ref_field_gte_param":
            test = f"{ref_vars[pre.param]}.get({pre.field!r}, 0) < {pre.other}"
        elif pre.kind == "param_positive":
            # An amount of money is positive from the first cent; a count from one.
            number = tool is not None and any(
                p.name == pre.param and p.type == "number" for p in tool.params
            )
            test = f"{pre.param} <= 0" if number else f"{pre.param} < 1"
        elif pre.kind == "param_at_most":
            test = f"{pre.param} > {pre.value!r}"
        elif pre.kind in ("count_below", "no_duplicate"):
            test = _existing_test(pre, tool, entity)
        elif pre.kind == "linked_field_gte_field":
            target = entities[entity.field(pre.param).ref]
            var = linked.get(pre.param) or f"linked_{target.name}"
            if pre.param not in linked:
                code(f"{var} = self.{target.collection}.get(record.get({pre.param!r}))")
                linked[pre.param] = var
            test = f"{var} is None or {var}.get({pre.field!r}, 0) < record.get({pre.other!r}, 0)"
        else:  # status_in
            allowed = _tuple(pre.values)
            test = f'record.get("status") not in {allowed}'
        code(f"if {test}:")
        code.indent()
        code(f'return {{"success": False, "error": {pre.error!r}}}')
        code.dedent()
    return linked


def _existing_test(pre: Precondition, tool: ToolSpec, entity: EntitySpec) -> str:
    """The condition that refuses a create over a quota (count_below) or a duplicate."""
    fields = {p.name: p.field for p in tool.params}
    matches = [f"existing.get({fields[pre.param]!r}) == {pre.param}"]
    if pre.kind == "no_duplicate":
        matches.append(f"existing.get({fields[pre.other]!r}) == {pre.other}")
    if pre.values:
        matches.append(f"existing.get({entity.status_field!r}) in {_tuple(pre.values)}")
    each = f"for existing in self.{entity.collection}.values() if {' and '.join(matches)}"
    if pre.kind == "no_duplicate":
        return f"any(True {each})"
    return f"sum(1 {each}) >= {pre.value!r}"


# --------------------------------------------------------------------------- workflow guards
# Each returns the condition under which the tool refuses (the generated `if`); SpecModel
# predicts the same refusals (synthesis.tasks.spec_model, `_workflow_guard_error`).


def _field_in_test(pre: Precondition, ref_vars: dict[str, str], tool, entity) -> str:
    return f"record.get({pre.field!r}) not in {_tuple(pre.values)}"


def _ref_field_in_test(pre: Precondition, ref_vars: dict[str, str], tool, entity) -> str:
    return f"{ref_vars[pre.param]}.get({pre.field!r}) not in {_tuple(pre.values)}"


def _ref_field_covers_test(pre: Precondition, ref_vars: dict[str, str], tool, entity) -> str:
    have = f"{ref_vars[pre.param]}.get({pre.field!r}, 0)"
    need = f"{ref_vars[pre.other]}.get({pre.other_field!r}, 0)"
    return f"{have} < {need}"


def _no_conflict_test(
    pre: Precondition, ref_vars: dict[str, str], tool: ToolSpec, entity: EntitySpec
) -> str:
    # The new values come from the parameters that set the fields; an update keeps the
    # record's own value for every field it does not change, and never conflicts with itself.
    by_field = {p.field: p.name for p in tool.params if p.field}
    own_id = f"{entity.name}_id"
    parts = []
    if tool.operation != "create":
        parts.append(f"existing_id != {own_id}")
    for name in pre.values:
        if name in by_field and (tool.operation == "create" or name == tool.field):
            new = by_field[name]
        else:
            new = f"record.get({name!r})"
        parts.append(f"existing.get({name!r}) == {new}")
    if pre.value is not None and entity.status_field:
        parts.append(f"existing.get({entity.status_field!r}) in {_tuple(list(pre.value))}")
    return (
        f"any({' and '.join(parts)} for existing_id, existing in self.{entity.collection}.items())"
    )


def _params_differ_test(pre: Precondition, ref_vars: dict[str, str], tool, entity) -> str:
    names = pre.differing_params()
    if len(names) == 2:
        return f"{names[0]} == {names[1]}"
    return f"len({{{', '.join(names)}}}) < {len(names)}"


_WORKFLOW_GUARDS = {
    "field_in": _field_in_test,
    "ref_field_in": _ref_field_in_test,
    "ref_field_covers": _ref_field_covers_test,
    "no_conflict": _no_conflict_test,
    "params_differ": _params_differ_test,
}


def _effects(
    code: _Code,
    effects: list[Effect],
    entity: EntitySpec,
    entities: dict,
    ref_vars_by_field: dict[str, str],
) -> None:
    for effect in effects:
        target = entities[entity.field(effect.via).ref]
        var = ref_vars_by_field.get(effect.via)
        if var is None:
            # The referenced record was not loaded by this tool yet (transitions).
            var = f"linked_{target.name}"
            code(f"{var} = self.{target.collection}.get(record.get({_dq(effect.via)}))")
            code(f"if {var} is not None:")
            code.indent()
        if effect.kind == "set_ref_field":
            code(f"{var}[{effect.field!r}] = {effect.value!r}")
        elif effect.digits is not None:
            sign = "-" if effect.sign < 0 else "+"
            code(
                f"{var}[{effect.field!r}] = round({var}.get({effect.field!r}, 0) "
                f"{sign} record[{effect.by_field!r}], {effect.digits})"
            )
        else:
            sign = "-" if effect.sign < 0 else "+"
            code(
                f"{var}[{effect.field!r}] = {var}.get({effect.field!r}, 0) "
                f"{sign} record[{effect.by_field!r}]"
            )
        if effect.via not in ref_vars_by_field:
            code.dedent()


def _create(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    new_id = f"{entity.name}_id"
    taken = {p.name for p in tool.params} | {new_id}
    ref_vars: dict[str, str] = {}
    for p in tool.params:
        if p.ref:
            var = _local(entities[p.ref].name, taken)
            _fetch(code, var, entities[p.ref], p.name)
            ref_vars[p.name] = var
    _preconditions(code, tool.preconditions, ref_vars, tool, entity, entities)
    code(f"{new_id} = self._next_id(self.{entity.collection}, {entity.id_prefix!r})")
    code("record = {")
    code.indent()
    code(f'"id": {new_id},')
    for p in tool.params:
        code(f"{p.field!r}: {p.name},")
    for name, (ref_param, ref_field, times) in tool.derived.items():
        code(f"{name!r}: round({ref_vars[ref_param]}[{ref_field!r}] * {times}, 2),")
    for name, value in (tool.fixed or {}).items():
        code(f"{name!r}: {value!r},")
    if entity.status_field and entity.initial_status:
        code(f"{entity.status_field!r}: {entity.initial_status!r},")
    code.dedent()
    code("}")
    code(f"self.{entity.collection}[{new_id}] = record")
    by_field = {p.field: ref_vars[p.name] for p in tool.params if p.name in ref_vars}
    _effects(code, tool.effects, entity, entities, by_field)
    code('return {"success": True, "data": dict(record)}')


def _transition(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    _fetch(code, "record", entity, f"{entity.name}_id")
    linked = _preconditions(code, tool.preconditions, {}, tool, entity, entities)
    code(f"record[{entity.status_field!r}] = {tool.target_status!r}")
    _effects(code, tool.effects, entity, entities, linked)
    code('return {"success": True, "data": dict(record)}')


def _update(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    _fetch(code, "record", entity, f"{entity.name}_id")
    _preconditions(code, tool.preconditions, {}, tool, entity, entities)
    value = next(p.name for p in tool.params if p.field == tool.field)
    code(f"if record.get({tool.field!r}) == {value}:")
    code.indent()
    already = _dq(f"{tool.field} is already ")
    code(f'return {{"success": False, "error": {already} + repr({value})}}')
    code.dedent()
    code(f"record[{tool.field!r}] = {value}")
    code('return {"success": True, "data": dict(record)}')


# --------------------------------------------------------------------------- read tools


def _check_refs_given(code: _Code, tool: ToolSpec, entities: dict) -> None:
    # An id filter naming no record is a mistake the agent should hear about, not an empty
    # result it may take for "there are none".
    for p in tool.params:
        if p.ref and p.role in (None, "eq"):
            ref = entities[p.ref]
            given = f"{p.name} not in self.{ref.collection}"
            code(f"if {given if p.required else f'{p.name} is not None and {given}'}:")
            code.indent()
            unknown = f"unknown {_fq(ref.label)} {{{p.name}!r}}"
            code(f'return {{"success": False, "error": f"{unknown}"}}')
            code.dedent()


def _filter_conditions(tool: ToolSpec) -> list[str]:
    """One condition per filter parameter, true when the record passes (or it is not given)."""
    conditions = []
    for p in tool.params:
        role = p.role or ("eq" if p.field else None)
        if role == "eq":
            test = f"record.get({p.field!r}) == {p.name}"
        elif role == "min":
            test = f"record.get({p.field!r}, 0) >= {p.name}"
        elif role == "max":
            test = f"record.get({p.field!r}, 0) <= {p.name}"
        elif role == "contains":
            test = f"{p.name}.strip().lower() in str(record.get({p.field!r}, '')).lower()"
        else:
            continue
        conditions.append(test if p.required else f"({p.name} is None or {test})")
    return conditions


def _param_with_role(tool: ToolSpec, role: str) -> ParamSpec | None:
    return next((p for p in tool.params if p.role == role), None)


def _search(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    limit = _param_with_role(tool, "limit")
    if limit is not None:
        code(f"if {limit.name} is not None and {limit.name} < 1:")
        code.indent()
        code(f'return {{"success": False, "error": {_dq(f"{limit.name} must be at least 1")}}}')
        code.dedent()
    _check_refs_given(code, tool, entities)
    conditions = _filter_conditions(tool)
    code("records = [")
    code.indent()
    code(f"dict(record) for _, record in sorted(self.{entity.collection}.items())")
    if conditions:
        code("if " + conditions[0])
        for condition in conditions[1:]:
            code("and " + condition)
    code.dedent()
    code("]")
    sort_by, order = _param_with_role(tool, "sort_by"), _param_with_role(tool, "order")
    if sort_by is not None:
        # sorted() is stable: records with equal keys stay in id order, either direction.
        reverse = f'{order.name} == "desc"' if order is not None else "False"
        code(f"if {sort_by.name} is not None:")
        code.indent()
        code(
            f"records = sorted(records, key=lambda record: record.get({sort_by.name}, 0), "
            f"reverse={reverse})"
        )
        code.dedent()
    if limit is not None:
        code(f"if {limit.name} is not None:")
        code.indent()
        code(f"records = records[:{limit.name}]")
        code.dedent()
    code('return {"success": True, "data": records}')


def _aggregate(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    _check_refs_given(code, tool, entities)
    conditions = _filter_conditions(tool)
    measured = f"record.get({tool.field!r}, 0)" if tool.field else 'record.get("id")'
    code("values = [")
    code.indent()
    code(f"{measured} for _, record in sorted(self.{entity.collection}.items())")
    if conditions:
        code("if " + conditions[0])
        for condition in conditions[1:]:
            code("and " + condition)
    code.dedent()
    code("]")
    chooser = _param_with_role(tool, "function")
    lines = {
        "count": "value = len(values)",
        "sum": "value = round(sum(values), 2)",
        "min": "value = min(values, default=None)",
        "max": "value = max(values, default=None)",
        "average": "value = round(sum(values) / len(values), 2) if values else None",
    }
    if chooser is None:
        function = repr(tool.aggregate)
        code(lines[tool.aggregate])
    else:
        function = chooser.name
        functions = list(chooser.enum or lines)
        for i, name in enumerate(functions):
            if i == len(functions) - 1:
                code("else:")
            else:
                code(f"{'if' if i == 0 else 'elif'} {chooser.name} == {name!r}:")
            code.indent()
            code(lines[name])
            code.dedent()
    code(
        f'data = {{"function": {function}, "field": {tool.field!r}, '
        '"count": len(values), "value": value}'
    )
    code('return {"success": True, "data": data}')


def _compare(code: _Code, tool: ToolSpec, entity: EntitySpec, entities: dict) -> None:
    first, second = (p.name for p in tool.params if p.ref == entity.name)
    _fetch(code, "first", entity, first)
    _fetch(code, "second", entity, second)
    names = _tuple([f.name for f in entity.fields])
    code("differences = {")
    code.indent()
    code(f"name: [first.get(name), second.get(name)] for name in {names}")
    code("if first.get(name) != second.get(name)")
    code.dedent()
    code("}")
    code(
        'return {"success": True, "data": '
        '{"records": [dict(first), dict(second)], "differences": differences}}'
    )
