"""Predicts what a compiled environment's tools do to JSON state, so planning runs no code.

Generated tool code runs only in the sandbox; planning needs to know in-process which targets
are feasible and which ids each step reveals. For a compiled environment the model is exact
(read off the spec the code was compiled from), so its outcomes can be predicted here.
"""

from __future__ import annotations

import copy
from typing import Any

from synthesis import codec
from synthesis.environments.field_forms import argument_error
from synthesis.environments.model import CollectionModel, EnvModel, ToolModel
from synthesis.environments.topology import id_params, target_param

# Immutable JSON scalars: a copy may share them.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data, several times faster than copy.deepcopy (the planner copies
    whole states thousands of times per environment). Dicts, lists and scalars are copied
    by type; anything else (a tuple, a subclass) goes to copy.deepcopy as before."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else json_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else json_copy(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


class SpecModel:
    """The planner's expectation of what a compiled tool does, interpreted from its model.

    It only decides which targets are feasible and which ids each step reveals; the gold run
    in the sandbox is the truth, and any disagreement quarantines the scenario there.
    """

    def __init__(self, model: EnvModel, state: dict[str, Any]):
        if not model.exact:
            raise ValueError(f"{model.env_id}: only an exact (compiled) model predicts outcomes")
        self.env_model = model
        self.state = state

    # Copy on write: the planner makes thousands of models and snapshots per environment and
    # most change a record or two, so a model copies its collections (a record added goes to
    # its own) and shares the records until it changes one, which it copies first. What it
    # was made from, and every checkpoint, stays as it was. Whoever holds a record dict
    # across a change of that record sees the old one (a change replaces it in its
    # collection): read records again after a call, as after `restore`.

    @property
    def state(self) -> dict[str, Any]:
        return self._state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        self._state = _collections_copy(state)
        self._own: set[int] = set()  # ids of the record dicts this model may change in place

    def checkpoint(self) -> dict[str, Any]:
        """The state as it is now, left as it is by later calls (the planner's snapshots)."""
        self._own.clear()  # the checkpoint shares every record now: the next change copies
        return _collections_copy(self._state)

    def fork(self) -> SpecModel:
        """Another model from this one's state, playing on without changing this one."""
        return SpecModel(self.env_model, self.checkpoint())

    def records(self, entity: str) -> dict[str, dict[str, Any]]:
        return self._state.setdefault(self.env_model.entity(entity).collection, {})

    def _writable(self, records: dict[str, Any], rid: Any) -> dict[str, Any]:
        """Record `rid` of `records` (a collection of this model's), this model's own copy."""
        rec = records[rid]
        if id(rec) not in self._own:
            rec = json_copy(rec)
            records[rid] = rec
            self._own.add(id(rec))
        return rec

    def next_id(self, entity: str) -> str:
        ent = self.env_model.entity(entity)
        nums = [_id_number(rid) for rid in self.records(entity)]
        return f"{ent.id_prefix}-{max([n for n in nums if n is not None], default=0) + 1:04d}"

    def call(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        tool = self.env_model.tool(tool_name)
        if tool.entity is not None:
            # An argument not in its field's form is refused first, as the compiled tool does.
            ill_formed = argument_error(tool, self.env_model.entity(tool.entity).fields, args)
            if ill_formed is not None:
                return {"success": False, "error": ill_formed}
        op = getattr(self, f"_{tool.operation}")
        return op(tool, args)

    def _list(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        filters = {
            (p.field or p.name): args[p.name] for p in tool.params if args.get(p.name) is not None
        }
        recs = self.records(tool.entity)
        data = [
            json_copy(recs[rid])
            for rid in sorted(recs)
            if all(recs[rid].get(f) == v for f, v in filters.items())
        ]
        return {"success": True, "data": data}

    def _get(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        rec = self.records(tool.entity).get(args.get(target_param(tool) or ""))
        if rec is None:
            return {"success": False, "error": f"{tool.entity} not found"}
        return {"success": True, "data": json_copy(rec)}

    def _find(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        value = next(iter(args.values()), None)
        recs = self.records(tool.entity)
        for rid in sorted(recs):
            if same_value(recs[rid].get(tool.field or ""), value):
                return {"success": True, "data": json_copy(recs[rid])}
        return {"success": False, "error": f"{tool.entity} not found"}

    def _create(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        entity = self.env_model.entity(tool.entity)
        for param, ref in id_params(tool).items():
            if args.get(param) not in self.records(ref):
                return {"success": False, "error": f"{ref} not found"}
        error = self.guard_error(tool, args, None)
        if error:
            return {"success": False, "error": error}
        field_names = {f.name for f in entity.fields}
        rid = self.next_id(tool.entity)
        rec: dict[str, Any] = {"id": rid}
        for p in tool.params:
            name = p.field or p.name
            if name in field_names and p.name in args:
                rec[name] = args[p.name]
        for name, value in (tool.fixed or {}).items():
            rec[name] = json_copy(value)
        if entity.status_field and entity.initial_status:
            rec[entity.status_field] = entity.initial_status
        params = {p.name: p for p in tool.params}
        for name, (ref_param, ref_field, mult_param) in tool.derived.items():
            ref_rec = self.records(params[ref_param].takes or "")[args[ref_param]]
            value = ref_rec[ref_field] * args[mult_param]
            rec[name] = round(value, 2) if isinstance(value, float) else value
        self.records(tool.entity)[rid] = rec
        self._own.add(id(rec))
        self._apply_effects(tool, entity, rec)
        return {"success": True, "data": json_copy(rec)}

    def _transition(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        entity = self.env_model.entity(tool.entity)
        rid = args.get(target_param(tool) or "")
        rec = self.records(tool.entity).get(rid)
        if rec is None:
            return {"success": False, "error": f"{tool.entity} not found"}
        error = self.guard_error(tool, args, rec)
        if error:
            return {"success": False, "error": error}
        rec = self._writable(self.records(tool.entity), rid)
        if entity.status_field:
            rec[entity.status_field] = tool.target_status
        self._apply_effects(tool, entity, rec)
        return {"success": True, "data": json_copy(rec)}

    def _update(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        entity = self.env_model.entity(tool.entity)
        tp = target_param(tool)
        rec = self.records(tool.entity).get(args.get(tp or ""))
        if rec is None:
            return {"success": False, "error": f"{tool.entity} not found"}
        error = self.guard_error(tool, args, rec)
        if error:
            return {"success": False, "error": error}
        rec = self._writable(self.records(tool.entity), args.get(tp or ""))
        value_param = next((p for p in tool.params if p.name != tp), None)
        if value_param is not None and tool.field:
            rec[tool.field] = args.get(value_param.name)
        self._apply_effects(tool, entity, rec)
        return {"success": True, "data": json_copy(rec)}

    def guard_error(
        self, tool: ToolModel, args: dict[str, Any], rec: dict[str, Any] | None
    ) -> str | None:
        """The error the tool would refuse `args` with (on `rec`), or None if its guards hold."""
        refused = self.violated(tool, args, rec, first=True)
        return refused[0].error if refused else None

    def violated(
        self,
        tool: ToolModel,
        args: dict[str, Any],
        rec: dict[str, Any] | None,
        *,
        first: bool = False,
    ) -> list[Any]:
        """Every guard of the tool that refuses `args` (on `rec`), in the order the tool
        checks them (the first is the error it answers with); only the first when `first`.
        An infeasible request may break several rules, and a refusal naming any is true."""
        params = {p.name: p for p in tool.params}
        out: list[Any] = []
        for pre in tool.preconditions:
            if first and out:
                break
            if pre.kind in _WORKFLOW_GUARDS:
                if self._workflow_guard_error(pre, tool, args, rec):
                    out.append(pre)
            elif pre.kind == "param_positive":
                v = args.get(pre.param or "")
                if not (is_number(v) and v > 0):
                    out.append(pre)
            elif pre.kind == "status_in":
                status_field = self.env_model.entity(tool.entity).status_field or "status"
                if rec is None or rec.get(status_field) not in pre.values:
                    out.append(pre)
            elif pre.kind == "param_at_most":
                v = args.get(pre.param or "")
                if not (is_number(v) and v <= pre.value):
                    out.append(pre)
            elif pre.kind in ("count_below", "no_duplicate"):
                if self._existing_refuses(tool, pre, args, params):
                    out.append(pre)
            elif pre.kind == "linked_field_gte_field":
                entity = self.env_model.entity(tool.entity)
                ref = entity.field(pre.param or "").ref if rec is not None else None
                linked = self.records(ref).get(rec.get(pre.param or "")) if ref else None
                have, need = (linked or {}).get(pre.field or "", 0), rec.get(pre.other or "", 0)
                if linked is None or have < need:
                    out.append(pre)
            else:
                p = params.get(pre.param or "")
                ref = self.records(p.takes).get(args.get(p.name)) if p and p.takes else None
                if ref is None:
                    out.append(pre)
                elif pre.kind == "ref_field_equals" and ref.get(pre.field or "") != pre.value:
                    out.append(pre)
                elif pre.kind == "ref_field_gte_param":
                    have, need = ref.get(pre.field or ""), args.get(pre.other or "")
                    if not (is_number(have) and is_number(need) and have >= need):
                        out.append(pre)
        return out

    def _existing_refuses(
        self, tool: ToolModel, pre: Any, args: dict[str, Any], params: dict[str, Any]
    ) -> bool:
        """Whether a quota (count_below) or a duplicate (no_duplicate) refuses a create."""
        wanted = [(params[pre.param].field, args.get(pre.param))]
        if pre.kind == "no_duplicate":
            wanted.append((params[pre.other].field, args.get(pre.other)))
        status_field = self.env_model.entity(tool.entity).status_field
        n = sum(
            1
            for r in self.records(tool.entity).values()
            if all(r.get(f) == v for f, v in wanted)
            and (not pre.values or r.get(status_field) in pre.values)
        )
        return n >= 1 if pre.kind == "no_duplicate" else n >= pre.value

    # -- read tools ------------------------------------------------------------------

    def _matching(self, tool: ToolModel, args: dict[str, Any]) -> list[dict[str, Any]] | str:
        """The records a search/aggregate's filters keep, in id order (or why it fails)."""
        for p in tool.params:
            if p.takes and p.role in (None, "eq") and args.get(p.name) is not None:
                if args[p.name] not in self.records(p.takes):
                    return f"{p.takes} not found"
        recs = self.records(tool.entity)
        kept = []
        for rid in sorted(recs):
            rec = recs[rid]
            if all(_passes(p, args.get(p.name), rec) for p in tool.params):
                kept.append(rec)
        return kept

    def _search(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        roles = {p.role: p.name for p in tool.params if p.role}
        limit = args.get(roles.get("limit", ""))
        if limit is not None and limit < 1:
            return {"success": False, "error": "limit must be at least 1"}
        kept = self._matching(tool, args)
        if isinstance(kept, str):
            return {"success": False, "error": kept}
        data = [json_copy(r) for r in kept]
        sort_by = args.get(roles.get("sort_by", ""))
        if sort_by is not None:
            descending = args.get(roles.get("order", "")) == "desc"
            data = sorted(data, key=lambda r: r.get(sort_by, 0), reverse=descending)
        if limit is not None:
            data = data[:limit]
        return {"success": True, "data": data}

    def _aggregate(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        kept = self._matching(tool, args)
        if isinstance(kept, str):
            return {"success": False, "error": kept}
        values = [r.get(tool.field, 0) if tool.field else r.get("id") for r in kept]
        chooser = next((p.name for p in tool.params if p.role == "function"), None)
        function = args.get(chooser) if chooser else tool.aggregate
        return {
            "success": True,
            "data": {
                "function": function,
                "field": tool.field,
                "count": len(values),
                "value": aggregate_value(function, values),
            },
        }

    def _compare(self, tool: ToolModel, args: dict[str, Any]) -> dict[str, Any]:
        recs = self.records(tool.entity)
        pair = [recs.get(args.get(p.name)) for p in tool.params if p.takes == tool.entity]
        if len(pair) != 2 or any(r is None for r in pair):
            return {"success": False, "error": f"{tool.entity} not found"}
        first, second = pair
        names = [f.name for f in self.env_model.entity(tool.entity).fields]
        differences = {
            n: [first.get(n), second.get(n)] for n in names if first.get(n) != second.get(n)
        }
        return {
            "success": True,
            "data": {
                "records": [json_copy(first), json_copy(second)],
                "differences": json_copy(differences),
            },
        }

    # -- workflow guards (compiled by synthesis.environments.compiler `_WORKFLOW_GUARDS`) --

    def _workflow_guard_error(
        self, pre: Any, tool: ToolModel, args: dict[str, Any], rec: dict[str, Any] | None
    ) -> bool:
        """Whether a field_in / ref_field_in / ref_field_covers / no_conflict guard refuses."""
        if pre.kind == "field_in":
            return rec is None or rec.get(pre.field or "") not in pre.values
        if pre.kind == "no_conflict":
            return self._conflicts(pre, tool, args, rec)
        if pre.kind == "params_differ":
            given = [codec.dumps_str(args.get(name)) for name in pre.differing_params()]
            return len(set(given)) < len(given)
        ref = self._ref_record(tool, pre.param, args)
        if ref is None:
            return True
        if pre.kind == "ref_field_in":
            return ref.get(pre.field or "") not in pre.values
        other = self._ref_record(tool, pre.other, args)  # ref_field_covers
        if other is None:
            return True
        have, need = ref.get(pre.field or "", 0), other.get(pre.other_field or "", 0)
        return not (is_number(have) and is_number(need) and have >= need)

    def _ref_record(
        self, tool: ToolModel, param: str | None, args: dict[str, Any]
    ) -> dict[str, Any] | None:
        p = tool.param(param or "")
        return self.records(p.takes).get(args.get(p.name)) if p and p.takes else None

    def _conflicts(
        self, pre: Any, tool: ToolModel, args: dict[str, Any], rec: dict[str, Any] | None
    ) -> bool:
        by_field = {p.field: p.name for p in tool.params if p.field}
        new: dict[str, Any] = {}
        for name in pre.values:
            if name in by_field and (tool.operation == "create" or name == tool.field):
                new[name] = args.get(by_field[name])
            else:
                new[name] = rec.get(name) if rec is not None else None
        status_field = self.env_model.entity(tool.entity or "").status_field
        own = rec.get("id") if rec is not None and tool.operation != "create" else None
        for rid, other in self.records(tool.entity or "").items():
            if own is not None and rid == own:
                continue
            if any(other.get(name) != value for name, value in new.items()):
                continue
            if pre.value is not None and status_field and other.get(status_field) not in pre.value:
                continue
            return True
        return False

    def _apply_effects(self, tool: ToolModel, entity: CollectionModel, rec: dict[str, Any]) -> None:
        for eff in tool.effects:
            ref_entity = entity.field(eff.via).ref
            target = self.records(ref_entity).get(rec.get(eff.via)) if ref_entity else None
            if target is None:
                continue
            target = self._writable(self.records(ref_entity), rec.get(eff.via))
            if eff.kind == "set_ref_field":
                target[eff.field] = eff.value
            else:
                value = target.get(eff.field, 0) + eff.sign * rec.get(eff.by_field or "", 0)
                target[eff.field] = round(value, eff.digits) if eff.digits is not None else value


def _collections_copy(state: dict[str, Any]) -> dict[str, Any]:
    """`state` with each collection a dict of its own (its records shared), anything else
    copied whole."""
    return {k: dict(v) if type(v) is dict else json_copy(v) for k, v in state.items()}


def _passes(p: Any, value: Any, rec: dict[str, Any]) -> bool:
    """Whether `rec` passes the filter parameter `p` given `value` (None: not filtering)."""
    role = p.role or ("eq" if p.field else None)
    if value is None or role not in ("eq", "min", "max", "contains"):
        return True
    field = p.field or ""
    if role == "eq":
        return rec.get(field) == value
    if role == "min":
        return rec.get(field, 0) >= value
    if role == "max":
        return rec.get(field, 0) <= value
    return str(value).strip().lower() in str(rec.get(field, "")).lower()


def aggregate_value(function: Any, values: list[Any]) -> Any:
    """An aggregate over values as the compiled tools compute it (money rounded to cents)."""
    if function == "count":
        return len(values)
    if function == "sum":
        return round(sum(values), 2)
    if function == "min":
        return min(values, default=None)
    if function == "max":
        return max(values, default=None)
    return round(sum(values) / len(values), 2) if values else None


_WORKFLOW_GUARDS = (
    "field_in",
    "ref_field_in",
    "ref_field_covers",
    "no_conflict",
    "params_differ",
)


def _id_number(rid: str) -> int | None:
    tail = str(rid).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def same_value(a: Any, b: Any) -> bool:
    """How a find compares a field with the value looked up: text ignoring case."""
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return a == b


def is_number(v: Any) -> bool:
    """Whether a JSON value is a number (a bool is an int to Python, not to the spec)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)
