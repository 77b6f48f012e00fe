"""Into trainers' hands, with `verifiers`: the RL shard of a real (tiny) build played as a
verifiers 0.4 taskset, in a virtualenv holding verifiers and no EnvFoundry, by the loopback
fake model server, and rewarded by the project's checks. A multi-turn line is played with
its simulated user (the shipped `envfoundry_user.py`) answering the model's text turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesis import codec
from synthesis.export import rl_tasks
from synthesis.export.shards import verify_manifest
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.checks import grade
from tests.build_support import query
from tests.clean_venv import VERIFIERS, run_clean
from tests.fakes.openai_server import FakeOpenAIServer, final_answer
from tests.synthesis.export.test_trainers import _foreign_shards

pytestmark = pytest.mark.slow

IDLE_REPLY = "I looked around and changed nothing."

# A trainer's evaluation, as `vf-eval` runs it (env, served resources, one slot per rollout),
# of rollouts TASK_ID:MODEL: of a single-turn task with two models, one playing the task's
# gold chain and one doing nothing, and of a multi-turn task with the gold one. Prints one
# JSON report.
VERIFIERS_SCRIPT = r"""
import asyncio, json, sys
shards, base_url, foreign, *rollouts = sys.argv[1:]
sys.path.insert(0, shards)
import verifiers.v1 as vf
import envfoundry_reward as efr

report = {"envfoundry_importable": True}
try:
    import synthesis  # noqa: F401
except ImportError:
    report["envfoundry_importable"] = False

config = vf.resolve_env_config({"taskset": {"id": "envfoundry-verifiers"}})
env = vf.load_environment(config)
report["env"] = type(env).__name__
report["harness"] = config.agent_harnesses()["agent"].id
tasks = {task.data.id: task for task in env.taskset}
report["tasks"] = sorted(tasks)


async def play():
    async with env.serving():
        client = vf.EvalClientConfig(base_url=base_url, api_key_var="FAKE_MODEL_API_KEY")
        runs = [tuple(rollout.split(":")) for rollout in rollouts]
        episodes = await asyncio.gather(*(
            env.run_slot(env.slots(tasks[t])[0], vf.ModelContext(model=m, client=client))
            for t, m in runs
        ))
    for (task_id, model), episode in zip(runs, episodes):
        (trace,) = episode.traces
        report.setdefault(task_id, {})[model] = {
            "ok": episode.ok,
            "errors": [str(e) for e in [*episode.errors, *trace.errors]],
            "reward": trace.reward,
            "rewards": {k: v.score for k, v in trace.rewards.items() if v is not None},
            "metrics": dict(trace.metrics),
            "reply": trace.last_reply,
            "tool_calls": trace.state.tool_calls,
            "shown": [call["tool"] for call in trace.state.shown],
            "user": trace.state.user,
            "roles": [m.role for m in trace.branches[-1].messages],
        }


asyncio.run(play())

for trust in (False, True):
    foreign_config = {"id": "envfoundry-verifiers", "shards": foreign, "trust": trust}
    try:
        taskset = vf.load_environment(vf.resolve_env_config({"taskset": foreign_config})).taskset
        report[f"foreign_trust_{trust}"] = [task.data.id for task in taskset]
    except efr.UntrustedEnvironment as exc:
        report[f"foreign_trust_{trust}"] = str(exc)
print(json.dumps(report))
"""


def _gold_responder(shards: Path):
    """The fake model: `gold-model` answers each turn of a task with the oracle's assistant
    message of that turn (found by the prompt's user message: the task text, or a multi-turn
    task's opening), `idle-model` replies at once."""
    tasks = [json.loads(x) for x in (shards / "rl/train.jsonl").read_text().splitlines()]
    by_text = {_opening(t): t["scenario_id"] for t in tasks}
    oracle: dict[str, list[dict]] = {}
    for sid, messages_json in query(
        shards.parent, "SELECT scenario_id, messages_json FROM trajectories WHERE policy = 'oracle'"
    ):
        turns = [m for m in codec.loads(messages_json) if m["role"] == "assistant"]
        oracle.setdefault(sid, turns)

    def respond(body: dict) -> dict:
        if body["model"] == "idle-model":
            return final_answer(IDLE_REPLY)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        turns = oracle[by_text[user]]
        played = sum(m["role"] == "assistant" for m in body["messages"])
        turn = turns[min(played, len(turns) - 1)]
        return {k: turn[k] for k in ("role", "content", "tool_calls") if k in turn}

    return respond


def _opening(task: dict) -> str:
    """The prompt's user message: what the model is first told."""
    return next(m["content"] for m in task["prompt"] if m["role"] == "user")


def _requests_for(requests: list[dict], task: dict, model: str) -> list[dict]:
    """The requests `model` was sent while playing `task`, in order."""
    return [
        r
        for r in requests
        if r["model"] == model
        and next(m["content"] for m in r["messages"] if m["role"] == "user") == _opening(task)
    ]


@pytest.fixture(scope="module")
def played(tiny_home, tmp_path_factory):
    """(report, a single-turn task, a multi-turn task, the requests the fake model got)."""
    home, _ = tiny_home
    shards = home / "shards"
    work = tmp_path_factory.mktemp("verifiers")
    foreign = _foreign_shards(work / "foreign")
    lines = [json.loads(x) for x in (shards / "rl/train.jsonl").read_text().splitlines()]
    task = next(t for t in lines if not t.get("user"))
    multi = next(t for t in lines if t.get("user"))
    with FakeOpenAIServer(_gold_responder(shards)) as server:
        proc = run_clean(
            VERIFIERS_SCRIPT,
            str(shards),
            server.base_url,
            str(foreign),
            # Each rollout starts its own tool server (a Python importing verifiers): a few
            # seconds of CPU each, so the multi-turn task is played by the gold model only.
            f"{task['scenario_id']}:gold-model",
            f"{task['scenario_id']}:idle-model",
            f"{multi['scenario_id']}:gold-model",
            cwd=work,
            requirements=VERIFIERS,
            env={"FAKE_MODEL_API_KEY": "not-a-secret"},
        )
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), task, multi, requests


def test_a_verifiers_rollout_scores_with_the_project_checks(played, tiny_home):
    report, task, _, requests = played
    home, _ = tiny_home
    assert report["envfoundry_importable"] is False
    assert (report["env"], report["harness"]) == ("EnvFoundryEnv", "envfoundry-verifiers")
    published = query(home, "SELECT scenario_id FROM scenarios WHERE status = 'published'")
    train = {json.loads(x)["scenario_id"] for x in (home / "shards/rl/train.jsonl").open()}
    assert set(report["tasks"]) == train and train <= {sid for (sid,) in published}

    rollouts = report[task["scenario_id"]]
    gold, idle = rollouts["gold-model"], rollouts["idle-model"]
    assert gold["ok"] and idle["ok"], (gold["errors"], idle["errors"])
    # What the build's checker recorded for the oracle's play of this task.
    ((recorded, recorded_success),) = query(
        home,
        "SELECT reward, success FROM trajectories WHERE policy = 'oracle' "
        f"AND scenario_id = '{task['scenario_id']}' ORDER BY traj_id LIMIT 1",
    )
    assert (recorded, recorded_success) == (1.0, True)
    assert gold["rewards"] == {"envfoundry_reward": recorded}
    assert gold["metrics"]["envfoundry_success"] == 1.0
    assert gold["reward"] == recorded
    assert gold["tool_calls"] > 0
    # The rollout state carries each call (what `score_state` holds the reply to).
    gold_calls = [c["function"]["name"] for m in requests_of(requests, task) for c in m]
    assert gold["shown"] == gold_calls and idle["shown"] == []
    # Doing nothing: the project's grade of the untouched state and the idle reply.
    untouched = efr.load_env(task, root=str(home / "shards"))
    specs = [c["spec"] for c in task["checks"]]
    initial = untouched.initial_state
    assert grade(specs, initial, initial, IDLE_REPLY).reward == 0.0
    assert idle["rewards"] == {"envfoundry_reward": 0.0} and idle["reward"] == 0.0
    assert idle["metrics"]["envfoundry_success"] == 0.0 and idle["tool_calls"] == 0
    assert idle["reply"] == IDLE_REPLY
    # A single-turn line plays as it always did: one user message, no simulated user.
    assert gold["user"] is None and idle["user"] is None
    assert gold["roles"].count("user") == idle["roles"].count("user") == 1
    for request in _requests_for(requests, task, "gold-model"):
        assert [m["content"] for m in request["messages"] if m["role"] == "user"] == [
            task["task_text"]
        ]


def requests_of(requests: list[dict], task: dict) -> list[list[dict]]:
    """The tool calls of each assistant turn the gold model made on `task`, in order."""
    offered = _requests_for(requests, task, "gold-model")
    turns = [m for m in offered[-1]["messages"] if m["role"] == "assistant"]
    return [m.get("tool_calls") or [] for m in turns]


def test_the_model_is_offered_the_task_tools_under_their_own_schemas(played):
    report, task, _, requests = played
    offered = _requests_for(requests, task, "gold-model")
    assert len(offered) == len([m for m in offered[-1]["messages"] if m["role"] == "assistant"]) + 1
    for request in offered:
        assert sorted(request["tools"], key=lambda t: t["function"]["name"]) == sorted(
            task["tools"], key=lambda t: t["function"]["name"]
        )
    # Every call the model made got the environment's answer (no tool failed).
    answers = [m for m in offered[-1]["messages"] if m["role"] == "tool"]
    assert len(answers) == report[task["scenario_id"]]["gold-model"]["tool_calls"] > 0
    results = [json.loads(m["content"]) for m in answers]
    assert not [r for r in results if isinstance(r, dict) and r.get("success") is False]


def test_foreign_code_is_refused_when_the_taskset_loads_unless_trusted(played):
    report, _, _, _ = played
    refusal = report["foreign_trust_False"]
    assert "not compiled by EnvFoundry" in refusal and "pandas_nope_not_installed" in refusal
    assert report["foreign_trust_True"] == ["f1"]


def test_a_multi_turn_line_is_played_with_its_simulated_user(played, tiny_home):
    """The model is told the user's opening, never the whole request; its question gets the
    held detail from the shipped simulator (the answers the build's oracle got, byte for
    byte), the gold play then scores 1, and its final reply ends the conversation."""
    report, _, multi, requests = played
    home, _ = tiny_home
    record, sid = multi["user"], multi["scenario_id"]
    gold = report[sid]["gold-model"]
    assert gold["ok"], gold["errors"]

    offered = _requests_for(requests, multi, "gold-model")
    assert offered[0]["messages"] == multi["prompt"]
    assert multi["prompt"][-1]["content"] == record["opening"] != multi["task_text"]
    for request in offered:
        assert multi["task_text"] not in json.dumps(request, ensure_ascii=False)
    # The first turn asks; the user's answer (every held detail) is the next user message.
    conversation = offered[-1]["messages"]
    said = [m["content"] for m in conversation if m["role"] == "user"]
    assert said[0] == record["opening"] and len(said) >= 2
    assert all(d["say"] in said[1] for d in record["details"])
    # Byte for byte what the build's own oracle episode of this task was answered.
    ((messages_json, recorded),) = query(
        home,
        "SELECT messages_json, reward FROM trajectories WHERE policy = 'oracle' "
        f"AND scenario_id = '{sid}' ORDER BY traj_id LIMIT 1",
    )
    oracle = codec.loads(messages_json)
    oracle_said = [m["content"] for m in oracle if m["role"] == "user"]
    assert said == oracle_said and recorded == 1.0
    assert gold["rewards"] == {"envfoundry_reward": 1.0} and gold["reward"] == 1.0
    assert gold["metrics"]["envfoundry_success"] == 1.0 and gold["tool_calls"] > 0
    # The final reply ended the conversation: the trace ends on it, the user said no more.
    n = len(record["details"])
    turns = len(said)
    assert gold["user"] == {"turns": turns, "user_sim": "offline", "withheld": n, "revealed": n}
    assert gold["roles"].count("user") == turns and gold["roles"][-1] == "assistant"
    assert len(offered) == gold["roles"].count("assistant")
    assert gold["reply"] == oracle[-1]["content"]


def test_the_taskset_ships_beside_the_shards(tiny_home):
    home, _ = tiny_home
    shards = home / "shards"
    source = rl_tasks.VERIFIERS_MODULE_SOURCE
    assert (shards / "envfoundry_verifiers.py").read_bytes() == source.read_bytes()
    manifest = codec.read_json(shards / "manifest.json")
    (entry,) = [f for f in manifest["files"] if f["path"] == "envfoundry_verifiers.py"]
    assert (entry["kind"], entry["split"], entry["rows"]) == ("verifiers_taskset", "all", None)
    assert verify_manifest(shards / "manifest.json", seed=7) == []
