"""Into trainers' hands: the shards of a real (tiny) build used as a trainer without EnvFoundry
uses them, in a virtualenv holding only the standard library and `datasets`; a multi-turn
line is played with the shipped simulated user (`envfoundry_user.py`) answering the agent."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import jinja2
import pyarrow.parquet as pq
import pytest

from synthesis import codec
from synthesis.export.shards import verify_manifest, write_shards
from synthesis.models import Check, EnvOrigin, Scenario, Trajectory
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks import envfoundry_user as efu
from tests.build_support import query
from tests.clean_venv import run_clean
from tests.fakes.shard_envs import shard_environment
from tests.shard_support import first_topic, planned_task, replay_in_clean_venv, task_shards
from tests.synthesis.test_workspace import TOPICS as WORKSPACE_TOPICS

pytestmark = pytest.mark.slow

FOREIGN = Path(__file__).parents[2] / "fakes" / "foreign_unseen" / "needs_missing_module.py"

# Replays an RL line as a trainer would: stdlib json for the line, `datasets` for the
# trajectories, the shipped modules for the environment and a multi-turn line's user. Prints
# one JSON report.
TRAINER_SCRIPT = r"""
import json, sys
shards, foreign = sys.argv[1], sys.argv[2]
sys.path.insert(0, shards)
import datasets
import envfoundry_reward as efr
import envfoundry_user as efu

report = {"envfoundry_importable": True}
try:
    import synthesis  # noqa: F401
except ImportError:
    report["envfoundry_importable"] = False

tasks = [json.loads(line) for line in open(f"{shards}/rl/train.jsonl")]
oracle = {}
for row in datasets.load_dataset(
    "parquet", data_files={"train": f"{shards}/trajectories/train.parquet"}, split="train"
):
    if row["policy"] == "oracle":
        oracle.setdefault(row["scenario_id"], json.loads(row["messages_json"]))
report["episodes"] = []
for task in tasks:
    env = efr.load_env(task)
    untouched = efr.score(task, efr.load_env(task), final_reply="")
    reply = ""
    for message in oracle[task["scenario_id"]]:
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or []:
                efr.step(env, call["function"]["name"], call["function"]["arguments"])
            if isinstance(message.get("content"), str):
                reply = message["content"]
    report["episodes"].append(
        {"task": task["scenario_id"], "gold": efr.score(task, env, reply), "nothing": untouched}
    )

# A multi-turn line, played as a rollout plays it: the conversation opens with the line's
# prompt, the agent (the oracle's recorded turns: its questions, its calls, its final reply)
# acts, and the shipped user answers each text turn until it says nothing (None).
report["multi_turn"] = []
for task in tasks:
    user = efu.for_task(task)
    if user is None:
        continue
    env, messages, answers, reply = efr.load_env(task), list(task["prompt"]), [], ""
    turns = [m for m in oracle[task["scenario_id"]] if m["role"] == "assistant"]
    for turn in turns:
        messages.append(turn)
        for call in turn.get("tool_calls") or []:
            function = call["function"]
            result = json.dumps(efr.step(env, function["name"], function["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if turn.get("content"):
            reply = turn["content"]
            answers.append(user.answer(messages))
            if answers[-1] is None:
                break
            messages.append({"role": "user", "content": answers[-1]})
    report["multi_turn"].append({
        "task": task["scenario_id"],
        "told": [m["content"] for m in task["prompt"] if m["role"] == "user"],
        "first_turn": turns[0].get("content"),
        "answers": answers,
        "user": user.metadata(),
        "score": efr.score(task, env, reply),
    })

line = json.loads(open(f"{foreign}/rl/train.jsonl").readline())
try:
    efr.load_env(line)
    report["foreign"] = "loaded"
except efr.UntrustedEnvironment as exc:
    report["foreign"] = str(exc)
try:
    efr.load_env(line, trust=True, root=foreign)
    report["foreign_trusted"] = "loaded"
except ModuleNotFoundError as exc:
    report["foreign_trusted"] = f"ModuleNotFoundError: {exc.name}"

trl = datasets.load_dataset(
    "parquet", data_files={"train": f"{shards}/sft/train.parquet"}, split="train"
)
report["trl_features"] = str(trl.features)
report["trl_rows"] = [{"messages": r["messages"], "tools": r["tools"]} for r in trl]
print(json.dumps(report))
"""

# The part of the Qwen2.5 / Llama 3.1 chat templates that matters here: tool schemas and
# tool-call arguments written with `tojson`.
CHAT_TEMPLATE = """\
{%- for tool in tools %}<tool>{{ tool | tojson }}</tool>
{% endfor -%}
{%- for message in messages %}<|{{ message.role }}|>
{%- if message.content %}{{ message.content }}{% endif %}
{%- if message.tool_calls %}{% for call in message.tool_calls %}
<tool_call>{"name": {{ call.function.name | tojson }}, \
"arguments": {{ call.function.arguments | tojson }}}</tool_call>
{%- endfor %}{% endif %}
{% endfor -%}
"""


def _foreign_shards(out: Path) -> Path:
    """Shards of one task of a foreign class that imports a module nobody has installed."""
    code = FOREIGN.read_text()
    env = shard_environment(
        "needs_missing_module",
        code=code,
        class_name="TicketingAPI",
        origin=EnvOrigin(kind="code", path=str(FOREIGN), requires=["pandas_nope_not_installed"]),
    )
    scenario = Scenario(
        scenario_id="f1",
        env_id=env.env_id,
        state_id="st",
        task_text="Refund ticket TKT-000801.",
        initial_state=None,
        gold_chain=[],
    )
    check = Check(
        check_id="k1",
        scenario_id="f1",
        description="d.",
        spec={"type": "record_absent", "collection": "tickets", "id": "TKT-000801"},
    )
    traj = Trajectory(
        traj_id="t-f1",
        scenario_id="f1",
        env_id=env.env_id,
        policy="oracle",
        reward=1.0,
        success=True,
        n_steps=0,
        messages=[{"role": "system", "content": "sys"}, {"role": "user", "content": "x"}],
    )
    write_shards([traj], out, seed=0, scenarios=[scenario], checks=[check], environments=[env])
    return out


@pytest.fixture(scope="module")
def trainer_report(tiny_home, tmp_path_factory):
    home, _ = tiny_home
    work = tmp_path_factory.mktemp("trainer")
    foreign = _foreign_shards(work / "foreign")
    proc = run_clean(TRAINER_SCRIPT, str(home / "shards"), str(foreign), cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_trainer_without_envfoundry_resets_replays_and_scores(trainer_report, tiny_home):
    home, _ = tiny_home
    assert trainer_report["envfoundry_importable"] is False
    published = {
        sid
        for (sid,) in query(home, "SELECT scenario_id FROM scenarios WHERE status = 'published'")
    }
    episodes = trainer_report["episodes"]
    assert {e["task"] for e in episodes} == published
    for e in episodes:
        assert e["gold"] == {"reward": 1.0, "success": True}, e
        assert e["nothing"] == {"reward": 0.0, "success": False}, e


def test_a_multi_turn_line_plays_with_the_shipped_user_alone(trainer_report, tiny_home):
    """Without EnvFoundry, the shipped user answers the oracle's question with the held
    details, byte for byte what the build's own episode was told (the simulator is
    deterministic), the recorded calls then earn the full reward, and the final reply ends
    the conversation."""
    home, _ = tiny_home
    shards = home / "shards"
    assert (shards / "envfoundry_user.py").read_bytes() == Path(efu.__file__).read_bytes()
    lines = [json.loads(x) for x in (shards / "rl/train.jsonl").read_text().splitlines()]
    multi = {t["scenario_id"]: t for t in lines if t.get("user")}
    played = trainer_report["multi_turn"]
    assert played and {p["task"] for p in played} == set(multi)
    for episode in played:
        task = multi[episode["task"]]
        record, sid = task["user"], task["scenario_id"]
        # The agent is told the opening; the whole request is the line's task_text only.
        assert episode["told"] == [record["opening"]] and task["task_text"] != record["opening"]
        # Its first turn asks every held detail, in the detail's own question.
        details = record["details"]
        assert all(d["question"][1:] in episode["first_turn"] for d in details)
        ((messages_json, reward),) = query(
            home,
            "SELECT messages_json, reward FROM trajectories WHERE policy = 'oracle' "
            f"AND scenario_id = '{sid}' ORDER BY traj_id LIMIT 1",
        )
        recorded = [m["content"] for m in codec.loads(messages_json) if m["role"] == "user"]
        assert episode["answers"] == [*recorded[1:], None], sid
        assert all(d["say"] in episode["answers"][0] for d in details)
        withheld = len(details)
        assert episode["user"] == {
            "turns": len(recorded),
            "user_sim": "offline",
            "withheld": withheld,
            "revealed": withheld,
        }
        assert reward == 1.0 and episode["score"] == {"reward": 1.0, "success": True}


def test_foreign_code_is_refused_without_trust_and_names_what_it_requires(trainer_report):
    refusal = trainer_report["foreign"]
    assert "not compiled by EnvFoundry" in refusal and "trust=True" in refusal
    assert "pandas_nope_not_installed" in refusal
    # With trust the code does run in the caller's process: it fails on its own import.
    assert trainer_report["foreign_trusted"] == "ModuleNotFoundError: pandas_nope_not_installed"


def test_trl_parquet_renders_arguments_once_and_exactly(trainer_report, tiny_home):
    home, _ = tiny_home
    assert "'arguments': Json(" in trainer_report["trl_features"]
    gold_lines = [json.loads(x) for x in (home / "shards/sft/train.jsonl").read_text().splitlines()]
    rows = trainer_report["trl_rows"]
    assert len(rows) == len(gold_lines) > 0
    template = jinja2.Environment().from_string(CHAT_TEMPLATE)
    n_calls = 0
    for row, gold in zip(rows, gold_lines, strict=True):
        assert row["tools"] == gold["tools"]  # no null keys added across rows
        rendered = [
            json.loads(block)
            for block in re.findall(r"<tool_call>(.*?)</tool_call>", template.render(**row))
        ]
        expected = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in gold["messages"]
            for c in m.get("tool_calls") or []
        ]
        assert [(r["name"], r["arguments"]) for r in rendered] == expected
        assert all(isinstance(r["arguments"], dict) for r in rendered)
        n_calls += len(expected)
        # The OpenAI JSONL's string arguments are what such a template encodes twice.
        twice = re.findall(r"<tool_call>(.*?)</tool_call>", template.render(**gold))
        assert all(isinstance(json.loads(b)["arguments"], str) for b in twice)
    assert n_calls > 0


def test_shipped_module_is_the_repo_module_and_verifies(tiny_home):
    home, _ = tiny_home
    shards = home / "shards"
    assert (shards / "envfoundry_reward.py").read_bytes() == Path(efr.__file__).read_bytes()
    manifest = codec.read_json(shards / "manifest.json")
    kinds = {f["path"]: f["kind"] for f in manifest["files"]}
    assert kinds["envfoundry_reward.py"] == "reward_module"
    assert sum(k == "environment_code" for k in kinds.values()) == len(
        query(home, "SELECT DISTINCT env_id FROM scenarios WHERE status = 'published'")
    )
    assert verify_manifest(shards / "manifest.json", seed=7) == []
    # The parquet itself keeps arguments as tagged JSON text (arrow.json), for any reader.
    arguments = pq.read_schema(shards / "sft/train.parquet").field("messages").type.value_type
    call = arguments.field("tool_calls").type.value_type
    assert str(call.field("function").type.field("arguments").type) == "extension<arrow.json>"


def test_shipped_grading_is_the_project_rule_and_replays_every_episode(tiny_home):
    """The engine grades with the shipped module itself (one implementation), and every
    episode the build played on a published task, replayed with the shipped module, earns
    what the project recorded."""
    from synthesis.tasks import checks

    assert checks.grade is efr.grade_episode and checks.evaluate_check is efr.evaluate_check
    home, _ = tiny_home
    shards = home / "shards"
    tasks = {
        t["scenario_id"]: t
        for split in ("train", "test")
        if (shards / f"rl/{split}.jsonl").is_file()
        for t in map(json.loads, (shards / f"rl/{split}.jsonl").read_text().splitlines())
    }
    episodes = query(
        home, "SELECT scenario_id, policy, reward, success, messages_json FROM trajectories"
    )
    assert len({p for _, p, *_ in episodes}) >= 4  # oracle, baselines, guesser
    replayed = 0
    for sid, policy, reward, success, messages_json in episodes:
        if sid not in tasks:
            continue  # a quarantined task's episode ships nowhere
        task = tasks[sid]
        env = efr.load_env(task, root=str(shards))
        reply = ""
        for message in codec.loads(messages_json):
            for call in message.get("tool_calls") or []:
                efr.step(env, call["function"]["name"], call["function"]["arguments"])
            if message["role"] == "assistant" and isinstance(message.get("content"), str):
                reply = message["content"]
        assert efr.score(task, env, reply) == {"reward": reward, "success": success}, policy
        replayed += 1
    assert replayed > 50


def test_a_workspace_task_replays_in_a_temporary_folder(tmp_path):
    """A workspace environment's state is a file tree: the shipped module plays it in a
    temporary folder and sees what the sandbox saw, call for call. Its tools (no `run`) are
    EnvFoundry's compiled file verbs, held to that folder: no trust is needed."""
    env, scenario, checks = planned_task(WORKSPACE_TOPICS[0], max_chain_length=6)
    task_shards(tmp_path, env, scenario, checks, "You operate a file tree.")
    task = json.loads((tmp_path / f"rl/{scenario.split}.jsonl").read_text().splitlines()[0])
    assert task["environment"]["kind"] == "workspace"
    played = efr.load_env(task, root=str(tmp_path))
    folder = played.workspace
    assert efr.score(task, played) == {"reward": 0.0, "success": False}
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(played, call.tool, call.args) == expected
    assert efr.state(played) == scenario.final_state
    assert efr.score(task, played) == {"reward": 1.0, "success": True}
    del played
    gc.collect()
    assert not Path(folder).exists()  # the temporary folder goes with the environment


def test_a_project_task_replays_its_program_and_a_mistake_earns_nothing(tmp_path):
    """A project task's gold chain runs a program (the `run` verb) over the data folder: the
    shipped module plays it in a temporary folder, its commands under bwrap (without bwrap,
    only with trust=True), call for call as the sandbox did, and pays 1; doing nothing and
    the planner's mistakes (a stale backup read, void rows kept...) pay 0."""
    env, scenario, checks = planned_task(first_topic("project"))
    # An output read by its format: a report's table or JSON, or a settings file's INI.
    assert {"file_table", "file_json", "file_ini"} & {c.spec["type"] for c in checks}
    task_shards(tmp_path, env, scenario, checks, "You work in a project folder.")
    task = json.loads((tmp_path / f"rl/{scenario.split}.jsonl").read_text().splitlines()[0])
    assert "run" in {t["function"]["name"] for t in task["tools"]}
    trust = efr.bwrap_unusable_reason() is not None
    if trust:
        with pytest.raises(efr.UntrustedEnvironment, match="bwrap"):
            efr.load_env(task, root=str(tmp_path))
    played = efr.load_env(task, trust=trust, root=str(tmp_path))
    assert played.commands == ("unsandboxed" if trust else "bwrap")
    assert efr.score(task, played) == {"reward": 0.0, "success": False}
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(played, call.tool, call.args) == expected
    assert efr.state(played) == scenario.final_state
    assert efr.score(task, played) == {"reward": 1.0, "success": True}
    for mistake in scenario.provenance["mistakes"]:
        wrong = efr.load_env(task, trust=trust, root=str(tmp_path))
        for call in mistake["chain"]:
            efr.step(wrong, call["tool"], call["args"])
        assert efr.score(task, wrong)["reward"] == 0.0, mistake["label"]
    # The trainers' test: the shipped files alone, in a virtualenv without EnvFoundry.
    chains = {
        "gold": [c.model_dump(mode="json") for c in scenario.gold_chain],
        **{m["label"]: m["chain"] for m in scenario.provenance["mistakes"]},
    }
    paid = replay_in_clean_venv(tmp_path, tmp_path / f"rl/{scenario.split}.jsonl", chains)
    assert paid.pop("envfoundry_importable") is False
    assert paid.pop("commands") == ("unsandboxed" if trust else "bwrap")
    assert paid.pop("nothing") == {"reward": 0.0, "success": False}
    assert paid.pop("gold") == {"reward": 1.0, "success": True}
    assert paid and all(v["reward"] == 0.0 for v in paid.values()), paid
