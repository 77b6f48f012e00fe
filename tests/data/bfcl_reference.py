"""Regenerate bfcl_tool_kinds.json: which tools of the BFCL multi-turn classes change state.

A tool is `mutate` when some call of it in BFCL's own ground truth (multi_turn_base) changes
the class's state dump, `query` when it is called there and never does. Tools the ground
truth never calls are left out. Every call runs in the sandbox, like any foreign code.

    .venv/bin/python tests/data/bfcl_reference.py
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from sandboxes import EnvSource, open_session
from synthesis import codec

BFCL = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASSES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
HERE = Path(__file__).resolve().parent


def _data(name: str) -> list[dict]:
    import bfcl_eval

    root = Path(bfcl_eval.__file__).parent / "data"
    return [json.loads(line) for line in (root / name).read_text().splitlines() if line.strip()]


def _parameters(module: str, cls: str) -> dict[str, list[str]]:
    from synthesis.environments.foreign import _module_file

    tree = ast.parse(_module_file(module).read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {
        f.name: [a.arg for a in f.args.args[1:]]
        for f in node.body
        if isinstance(f, ast.FunctionDef)
    }


def _call(text: str, params: dict[str, list[str]]) -> tuple[str, dict] | None:
    expr = ast.parse(text, mode="eval").body
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Name):
        return None
    name = expr.func.id
    if name not in params:
        return None
    args = {params[name][i]: ast.literal_eval(a) for i, a in enumerate(expr.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in expr.keywords})
    return name, args


def main() -> None:
    questions = {q["id"]: q for q in _data("BFCL_v4_multi_turn_base.json")}
    answers = _data("possible_answer/BFCL_v4_multi_turn_base.json")
    kinds: dict[str, dict[str, str]] = {cls: {} for cls in CLASSES}
    for answer in answers:
        config = questions[answer["id"]]["initial_config"]
        for cls, module_name in CLASSES.items():
            if cls not in config and cls not in questions[answer["id"]].get("involved_classes", []):
                continue
            module = f"{BFCL}.{module_name}"
            params = _parameters(module, cls)
            calls = [c for turn in answer["ground_truth"] for t in turn if (c := _call(t, params))]
            if not calls:
                continue
            source = EnvSource(module=f"{module}:{cls}")
            with open_session(source, config.get(cls, {})) as session:
                before = session.final_state()
                for name, args in calls:
                    session.call(name, args)
                    after = session.final_state()
                    if after is None:
                        break
                    if after != before:
                        kinds[cls][name] = "mutate"
                    else:
                        kinds[cls].setdefault(name, "query")
                    before = after
    out = {cls: dict(sorted(tools.items())) for cls, tools in sorted(kinds.items())}
    codec.write_json(HERE / "bfcl_tool_kinds.json", out)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
