"""The declined twins of the configuration kinds (synthesis/tasks/projects/config_changes.py
DECLINED): each kind's request, in its own words, for a change the folder's rules forbid -
production's number of workers for staging, a cap on the timeout under what the batch size
needs, the batch change asked of the template, debug on in production, the schedule written
as the user's own time. In the sandbox every twin's gold run is published and changes
nothing, every change made anyway fails, the oracle's answer is grounded; through the
shipped module a right refusal in the agent's own words earns 1, and a false "done", a
refusal with no reason or a false one, and the change made anyway earn 0; the rule a twin
breaks is really the folder's and a feasible request of its kind keeps it; by their words
alone the twins are not told from their kinds' feasible requests."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.projects.service_config import CONFIG, EXAMPLE, LIMITS, OPERATIONS
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.hashing import derive_seed
from synthesis.tasks.projects import config_changes
from tests.synthesis.tasks.projects import declined_support as support

# The twins of each feasible kind, by the kinds' names (a batch size's has two ways).
TWINS = {
    "max_workers": {"forbidden_workers"},
    "batch_size": {"forbidden_timeout", "forbidden_template"},
    "debug_on": {"forbidden_debug"},
    "schedule_utc": {"forbidden_schedule"},
}
NAMES = set().union(*TWINS.values())


def _has_qa(project) -> bool:
    return "qa" in project.parts["service_config"].environments


@pytest.fixture(scope="module")
def built():
    """Every twin (a batch size's two ways) in a folder with a qa section and one without,
    made scenarios as plan_project_scenarios makes them, run in the sandbox and
    self-tested."""
    env = build_environment(generate_spec(support.project_topics(1)[0]))
    model = from_spec(env.spec, env)
    states = [build_initial_state(env, seed=3, index=i, records_per_entity=4) for i in range(12)]
    refused = []
    for qa in (True, False):
        state = next(s for s in states if _has_qa(project_folder(env.spec.workspace, s.seed)) == qa)
        project = project_folder(env.spec.workspace, state.seed)
        wanted = set(NAMES)
        for draw in range(40):
            if not wanted:
                break
            for twin in config_changes.DECLINED.values():
                task = twin(project, env.spec.workspace, random.Random(draw))
                if task.kind in wanted:
                    wanted.discard(task.kind)
                    refused.append((state, task))
        assert not wanted, wanted
    items, outcomes = support.run_and_selftest(env, model, refused)
    return model, items, outcomes


def test_in_the_sandbox_gold_is_proven_and_every_change_made_anyway_fails(built):
    _, items, outcomes = built
    assert {s.provenance["workspace_goals"][0] for s, _ in items} == NAMES
    support.assert_proven(items, outcomes, min_mistakes=2)


def test_the_oracle_states_the_rule_its_calls_showed_and_nothing_else(built):
    model, items, _ = built
    for scenario, _ in items:
        support.oracle_reply_grounded(scenario, model, "I couldn't change config/app")


def _replies(scenario) -> tuple[str, str]:
    """A right refusal in an agent's own words, and one whose reason is false."""
    kind = scenario.provenance["workspace_goals"][0]
    refusal = scenario.provenance["reply"]["refusal"]
    because, facts = refusal["declined"]["because"], refusal["reasons"][0]["facts"]
    if kind == "forbidden_workers":
        asked = re.search(r"so (\d+) is over", because)[1]
        return (
            f"I left it alone: config/limits.json caps staging at {facts[0]} workers, so"
            f" {asked} isn't allowed there.",
            "I left it alone: the workers setting is locked until the next release.",
        )
    if kind == "forbidden_timeout":
        cap = re.search(r"the (\d+) seconds allowed", because)[1]
        return (
            f"I didn't change it: with that batch size the timeout rule needs timeout_s of at"
            f" least {facts[0]} seconds, and you asked me to stay at {cap} or under.",
            "I didn't change it: batch sizes can only be changed on Mondays.",
        )
    if kind == "forbidden_template":
        return (
            "I didn't make that change: the operations notes say to edit config/app.ini only;"
            " config/app.example.ini is the template the job shipped with, and it never reads"
            " it.",
            "I didn't make that change: config/app.example.ini is read-only on this machine.",
        )
    if kind == "forbidden_debug":
        return (
            "I can't turn debug on in production: the operations notes say never in"
            " production, since debug logs customers' rows.",
            "I can't turn debug on in production: the logging server is full.",
        )
    return (
        "I didn't change the schedule: it has to be written in UTC (the servers' clock),"
        " whatever time zone the request came in, so I can't put local time there.",
        "I didn't change the schedule: the scheduler is frozen this week.",
    )


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    model, items, _ = built
    for scenario, checks in items:
        path = scenario.provenance["reply"]["refusal"]["declined"]["what"].removeprefix("change ")
        right, false = _replies(scenario)
        wrongs = (false, f"Done: {path} is updated.")
        support.assert_refusals_graded(
            scenario, checks, model, (right,), wrongs, support.last_text_at(path)
        )


def _limits(project) -> dict:
    """The limits as the folder's own file states them."""
    return json.loads(project.files[LIMITS])


def _needed(limits: dict, size: int) -> int:
    """The shortest timeout the rules allow for a batch size, from the limits file."""
    rule = limits["timeout_s"]
    return -(-rule["factor"] * size // rule["records_per_second"])


def _cap(text: str) -> int:
    return int(re.search(r"(\d+) seconds", text)[1])


def _changed(project, feasible) -> dict:
    """The settings after a feasible batch request of the environment it changes."""
    before = project.parts["service_config"].sections
    after = feasible.outputs[0]["sections"]
    return next(
        after[n]
        for n in ("production", "staging")
        if after[n]["batch_size"] != int(before[n]["batch_size"])
    )


# How a request names the file it means and the one it does not.
_MEANT = r"(?:That's|Only in|goes in) {meant}(?:,| -) not (?:in )?{other}"


def test_the_rule_a_twin_breaks_is_the_folders_and_a_feasible_request_keeps_it():
    for topic in support.project_topics(3):
        vocabulary = generate_spec(topic).workspace
        for seed in range(4):
            project = project_folder(vocabulary, seed)
            limits = _limits(project)
            rules = project.files[OPERATIONS]
            for feasible, twin in support.drawn_pairs(config_changes.DECLINED, project, vocabulary):
                assert twin.kind in TWINS[feasible.kind]
                text, said = twin.task_text, feasible.task_text
                if twin.kind == "forbidden_workers":
                    asked = int(re.search(r"at (\d+) in staging", text)[1])
                    assert asked > limits["environments"]["staging"]["workers_max"]
                    assert "at most the environment's `workers_max` in the limits file" in rules
                    number = re.search(r"at (\d+) in (\w+)", said)
                    if number:  # the limit, or more with "as high as we're allowed"
                        most = limits["environments"][number[2]]["workers_max"]
                        assert int(number[1]) == most or "as high as" in said, said
                elif twin.kind == "forbidden_timeout":
                    size = int(re.search(r"(?:to|of|batches) (\d+)\b", text)[1])
                    assert size % limits["batch_size"]["multiple_of"] == 0
                    assert size <= limits["batch_size"]["max"]
                    assert _needed(limits, size) > _cap(text)
                    assert "at least `timeout_s.factor` times the time one batch" in rules
                    # The feasible request's cap allows every timeout it leaves.
                    after = _changed(project, feasible)
                    assert after["timeout_s"] <= _cap(said)
                    assert _needed(limits, after["batch_size"]) <= _cap(said)
                elif twin.kind == "forbidden_template":
                    assert re.search(_MEANT.format(meant=EXAMPLE, other=CONFIG), text), text
                    assert f"Edit `{CONFIG}` only: `{EXAMPLE}` is the template" in rules
                    assert re.search(_MEANT.format(meant=CONFIG, other=EXAMPLE), said), said
                elif twin.kind == "forbidden_debug":
                    assert "debug on in production" in text
                    assert limits["environments"]["production"]["debug"] is False
                    assert "Never in production: debug logs customers' rows." in rules
                    assert "debug off in production" in said
                    assert "debug on in production" not in said
                else:
                    assert re.search(
                        r"(?:[Pp]ut|[Ww]rite) it (?:in \S+ )?as (?!UTC)[\w ]+ time", text
                    )
                    assert "in UTC (the\n  servers' clock), whatever time zone" in rules
                    assert limits["schedule"] == "HH:MM, 24-hour clock, UTC"
                    assert re.search(r"(?:[Pp]ut|[Ww]rite) it (?:in \S+ )?as UTC time", said), said


def _swapped(text: str, a: str, b: str) -> str:
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def test_each_twin_is_its_kinds_request_with_only_the_forbidden_part_changed():
    vocabulary = generate_spec(support.project_topics(1)[0]).workspace
    compared: dict[str, int] = defaultdict(int)
    for seed in range(4):
        project = project_folder(vocabulary, seed)
        limits = _limits(project)
        for feasible, twin in support.drawn_pairs(config_changes.DECLINED, project, vocabulary):
            text, said = twin.task_text, feasible.task_text
            if twin.kind == "forbidden_debug":
                assert _swapped(text, "debug on in", "debug off in") == said
            elif twin.kind == "forbidden_schedule":
                zone = next(p for p, _, _ in config_changes.ZONES if f" {p}" in said)
                assert _swapped(text, "as UTC time", f"as {zone} time") == said
            elif twin.kind == "forbidden_template":
                assert _swapped(text, EXAMPLE, CONFIG) == said
            elif twin.kind == "forbidden_timeout":
                if "allow" in said.split("timeout_s")[0]:
                    continue  # asked with a fallback, which a declined request never has
                assert re.sub(r"\d+ seconds", f"{_cap(said)} seconds", text, count=1) == said
            elif re.search(r"at \d+ in", said) and "as high as" not in said:
                production = limits["environments"]["production"]["workers_max"]
                staging = limits["environments"]["staging"]["workers_max"]
                if f"at {production} in production" in said:
                    # Each environment where it was, the two parts swapped.
                    assert _swapped(said, f"at {production} in", "as they are in") == text
                else:
                    assert said.replace(f"at {staging} in", f"at {staging + 1} in") == text
            else:
                continue  # the most allowed in words, or a fallback: feasible words only
            compared[twin.kind] += 1
            # The rules, their numbers, the settings, the rule.
            support.assert_only_looks(twin, ["tree", "cat"], min_calls=9, min_mistakes=2)
            path = twin.reply["refusal"]["declined"]["what"].removeprefix("change ")
            assert path in (CONFIG, EXAMPLE) and path in text
            assert all(m.chain[:-1] == twin.gold_chain for m in twin.mistakes)
            assert all(m.chain[-1]["args"]["path"] == path for m in twin.mistakes)
    assert set(compared) == NAMES, compared


def test_a_twin_is_a_pure_function_of_the_folder_and_its_draw():
    vocabulary = generate_spec(support.project_topics(2)[1]).workspace
    for seed in (0, 5):
        for twin in config_changes.DECLINED.values():
            for draw in range(4):
                made = [
                    twin(project_folder(vocabulary, seed), vocabulary, random.Random(draw))
                    for _ in range(2)
                ]
                first, second = made
                support.assert_same_draw(first, second)
                assert [m.chain for m in first.mistakes] == [m.chain for m in second.mistakes]


def test_by_their_words_the_twins_are_not_told_from_their_kinds_requests():
    # benchmarks/declined_twins.py's measure, over its sample of 16 topics and 4 folders
    # each, seeded as a build seeds them.
    texts: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for topic in support.project_topics(16):
        spec = generate_spec(topic)
        for state in range(4):
            seed = derive_seed("initial_state", spec.env_id, 0, state)
            project = project_folder(spec.workspace, seed)
            for feasible, twin in support.drawn_pairs(
                config_changes.DECLINED, project, spec.workspace
            ):
                texts[feasible.kind] += [(feasible.task_text, False), (twin.task_text, True)]
    assert set(texts) == set(TWINS)
    support.assert_twins_not_told_apart(texts)
