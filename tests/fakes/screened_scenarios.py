"""Scenarios for screening tests: a task text worth copying, and a published scenario of any
text and gold chain (by default one paying the order named after the scenario)."""

from __future__ import annotations

from synthesis.models import Scenario, ToolCall

TEXT = (
    "Please look up the reader Susan Malone by her email address and pay her pending "
    "order so that its status becomes paid, then ship that order to her home address."
)


def scenario(sid, env_id="env-a", text=TEXT, chain=None, results=None, **kw) -> Scenario:
    chain = chain or [ToolCall(tool="pay_order", args={"order_id": f"ORD-{sid}"})]
    return Scenario(
        scenario_id=sid,
        env_id=env_id,
        state_id="st",
        task_text=text,
        initial_state={},
        gold_chain=chain,
        gold_results=results if results is not None else [{"success": True}],
        **kw,
    )
