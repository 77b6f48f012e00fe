"""Any environment in, proven tasks out: foreign classes built through the CLI, as users do.

Three builds run side by side (a CI machine has two cores): the seven stateful BFCL
multi-turn classes plus MathAPI, the committed corpus (tests/fakes/foreign) and the hold-out
corpus nobody tuned the inference to (tests/fakes/foreign_unseen) in one home; the corpus
again in a second home, to compare bytes; and the default compiled build, whose artifacts
must keep the sha256 values pinned before the environment model existed.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from build_support import REPO, query, start_build

from assets._util import PER_ENVIRONMENT_ASSETS
from synthesis import codec
from synthesis.hashing import sha256_file

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("bfcl_eval") is None,
        reason="bfcl-eval is not installed (make installs it: pip install --no-deps bfcl-eval)",
    ),
]

BFCL = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BFCL_CLASSES = {
    "GorillaFileSystem": ("gorilla_file_system", "gorilla_file_system"),
    "MessageAPI": ("message_api", "message_api"),
    "TwitterAPI": ("posting_api", "twitter_api"),
    "TicketAPI": ("ticket_api", "ticket_api"),
    "TradingBot": ("trading_bot", "trading_bot"),
    "TravelAPI": ("travel_booking", "travel_api"),
    "VehicleControlAPI": ("vehicle_control", "vehicle_control_api"),
}
CORPUS = REPO / "tests" / "fakes" / "foreign"
UNSEEN = REPO / "tests" / "fakes" / "foreign_unseen"
PINNED = REPO / "tests" / "data" / "default_build.sha256"
# Corpus classes whose state cannot give three initial states: the dump of dataclass records
# does not load back (so no variants), and there is no states file.
FEWER_STATES = {"parcel_tracking-parcel_tracker"}
# A cart whose stock refuses most quantities: exploring finds few distinct tasks in it.
FEW_TASKS = {"product_catalogue"}
# Tasks an explored environment should publish at least. Besides the self-test, a task must
# now earn nothing for the three baselines (a decoy record included) and survive the
# publish stage's screening (an identical chain planned from another initial state is a
# duplicate), which quarantines one or two of the six planned per environment.
ENOUGH = 3


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("foreign_builds")
    homes = {name: root / name for name in ("all", "corpus", "default")}
    envs = [f"{BFCL}.{m}:{cls}" for cls, (m, _) in BFCL_CLASSES.items()]
    envs += [f"{BFCL}.math_api:MathAPI", str(CORPUS), str(UNSEEN)]
    everything = ["--catalogue", "none"] + [a for e in envs for a in ("--envs", e)]
    corpus_only = ["--catalogue", "none", "--envs", str(CORPUS)]
    started = {
        "all": start_build(
            homes["all"], profile="small", seed=0, extra=everything, log=root / "all.log"
        ),
        "corpus": start_build(
            homes["corpus"], profile="small", seed=0, extra=corpus_only, log=root / "corpus.log"
        ),
    }
    started["corpus"].wait(timeout=1200)
    started["default"] = start_build(
        homes["default"], profile="default", seed=0, log=root / "default.log"
    )
    for name, process in started.items():
        code = process.wait(timeout=1500)
        log = (root / f"{name}.log").read_text()
        assert code == 0, f"build {name} failed:\n{log[-3000:]}"
    return homes


def _published(home: Path) -> dict[str, int]:
    rows = query(
        home,
        "select e.env_id, count(s.scenario_id) from environments e left join scenarios s "
        "on s.env_id = e.env_id and s.status = 'published' group by 1",
    )
    return dict(rows)


def _kill_rates(home: Path) -> dict[str, float]:
    rows = query(
        home,
        "select s.env_id, avg(t.mutation_kill_rate) from scenarios s join check_selftests t "
        "using (scenario_id) where s.status = 'published' group by 1",
    )
    return dict(rows)


def _model(home: Path, env_id: str) -> dict:
    return codec.read_json(home / "artifacts" / "env_models" / f"{env_id}.json")


def test_bfcl_classes_build_into_proven_scenarios(builds):
    home = builds["all"]
    published, kill = _published(home), _kill_rates(home)
    unproven = query(
        home,
        "select count(*) from scenarios s join check_selftests t using (scenario_id) "
        "where s.status = 'published' and not (t.gold_pass and t.noop_fail and t.deterministic)",
    )
    assert unproven == [(0,)]
    for _, env_id in BFCL_CLASSES.values():
        assert published[env_id] >= ENOUGH, (env_id, published[env_id])
        assert kill[env_id] >= 0.9, (env_id, kill[env_id])
    sources = dict(query(home, "select env_id, source from environments"))
    assert {sources[e] for _, e in BFCL_CLASSES.values()} == {"foreign"}


def test_math_api_loads_and_is_audited(builds):
    (row,) = query(
        builds["all"],
        "select status, audit_score, n_tools from environments where env_id = 'math_api'",
    )
    assert row[0] == "accepted" and row[1] >= 0.85 and row[2] >= 15
    model = _model(builds["all"], "math_api")
    assert {t["kind"] for t in model["tools"] if t["kind_evidence"] == "probe"} == {"query"}


def test_bfcl_tool_kinds_match_the_reference_table(builds):
    """mutate = some BFCL ground-truth call of the tool changes the state dump
    (tests/data/bfcl_tool_kinds.json, made by tests/data/bfcl_reference.py)."""
    reference = codec.read_json(REPO / "tests" / "data" / "bfcl_tool_kinds.json")
    wrong = {}
    for cls, (_, env_id) in BFCL_CLASSES.items():
        kinds = {t["name"]: t["kind"] for t in _model(builds["all"], env_id)["tools"]}
        wrong.update(
            {
                f"{cls}.{n}": (k, kinds.get(n))
                for n, k in reference[cls].items()
                if kinds.get(n) != k
            }
        )
    assert wrong == {}
    assert sum(len(tools) for tools in reference.values()) >= 70


def test_ast_labels_that_behaviour_contradicts_are_recorded(builds):
    disagreements = {
        (env_id, d["tool"]): (d["ast_kind"], d["observed_kind"])
        for _, env_id in BFCL_CLASSES.values()
        for d in _model(builds["all"], env_id)["disagreements"]
    }
    # The AST cannot see writes made through a helper's return value or a node object.
    for tool in ("mkdir", "touch", "rm"):
        assert disagreements[("gorilla_file_system", tool)] == ("query", "mutate")
    for tool in ("close_ticket", "resolve_ticket", "edit_ticket"):
        assert disagreements[("ticket_api", tool)] == ("query", "mutate")


def test_the_corpus_builds_into_proven_scenarios_from_three_states(builds):
    home = builds["all"]
    corpus = {p.stem for p in CORPUS.glob("*.py")}
    envs = dict(query(home, "select env_id, status from environments"))
    ours = {e: s for e, s in envs.items() if e.split("-")[0] in corpus}
    assert len(ours) == len(corpus) >= 12
    assert set(ours.values()) == {"accepted"}, ours
    published, kill = _published(home), _kill_rates(home)
    assert min(published[e] for e in ours) >= 1
    thin = {e for e in ours if published[e] < ENOUGH}
    assert thin <= FEW_TASKS, {e: published[e] for e in thin}
    assert min(kill[e] for e in ours) >= 0.9
    states = dict(query(home, "select env_id, count(*) from initial_states group by 1"))
    few = {e for e in ours if states[e] < 3}
    assert few == FEWER_STATES


def test_two_builds_of_the_corpus_agree_byte_for_byte(builds):
    corpus_envs = sorted(p.stem for p in (builds["corpus"] / "artifacts" / "scenarios").glob("*"))
    assert len(corpus_envs) >= 12
    differ = [
        f"{asset}/{env}"
        for asset in PER_ENVIRONMENT_ASSETS
        for env in corpus_envs
        if sha256_file(builds["corpus"] / "artifacts" / asset / f"{env}.json")
        != sha256_file(builds["all"] / "artifacts" / asset / f"{env}.json")
    ]
    assert differ == []


def test_classes_never_seen_build_the_same_way(builds):
    home = builds["all"]
    unseen = {p.stem for p in UNSEEN.glob("*.py")}
    envs = {
        e: codec.read_json(home / "artifacts" / "environments" / f"{e}.json")
        for (e,) in query(home, "select env_id from environments")
        if e.split("-")[0] in unseen
    }
    assert len(envs) == len(unseen)
    stdlib_only = [e for e, env in envs.items() if not env["origin"]["requires"]]
    published = _published(home)
    good = [e for e in stdlib_only if published[e] >= ENOUGH]
    assert len(good) >= 0.8 * len(stdlib_only), {e: published[e] for e in stdlib_only}
    (missing,) = [e for e, env in envs.items() if env["origin"]["requires"]]
    (reason,) = query(home, f"select reason from quarantine where artifact_id = '{missing}'")[0]
    assert "No module named 'pandas_nope_not_installed'" in reason


def test_foreign_environments_show_in_the_marts_and_the_report(builds):
    home = builds["all"]
    rows = query(home, "select source, count(*) from mart_env_quality group by 1")
    assert dict(rows)["foreign"] >= 30
    report = (home / "reports" / "report.md").read_text()
    assert "| ticket_api | foreign | foreign | accepted |" in report


def test_the_default_build_keeps_its_pinned_bytes(builds):
    home = builds["default"]
    pinned = [line.split("  ", 1) for line in PINNED.read_text().splitlines() if line]
    assert len(pinned) >= 80
    changed = [path for digest, path in pinned if sha256_file(home / path) != digest]
    assert changed == []
    summary = json.loads(json.dumps(_published(home)))
    assert sum(summary.values()) == 156  # 144 of the twelve tool and file topics, 12 project
