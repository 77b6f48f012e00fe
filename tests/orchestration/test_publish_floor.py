"""Never "ok" with nothing: the inputs are checked wherever they come from, a dataset under its
publish floor keeps the current one, an environment that publishes (almost) nothing says why,
and the summary shows those reasons and every failed asset check.

Fast: no build. The builds that lose every task are in tests/test_build_floor.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from rich.console import Console

from assets import _settings
from assets._resources import BuildSettings
from assets.topics import mined_topics, topics
from orchestration import cli, console
from orchestration.build import BuildOutcome, FailedCheck, failed_checks, floor_refusal
from orchestration.io_managers import JsonArtifactIOManager
from orchestration.runs import FinishedRun
from orchestration.summary import print_summary
from synthesis import codec
from synthesis.config import get_profile, publish_floor
from synthesis.export import datasets, losses

SETTING_VARIABLES = [*_settings.VARIABLES.values(), "OPENAI_BASE_URL"]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No ENVFOUNDRY_* setting from the suite's environment; the home is tmp_path/home."""
    for name in SETTING_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(home))
    empty = tmp_path / "topics.json"
    codec.write_json(empty, {"topics": []})
    return home, empty


def _screen(monkeypatch) -> io.StringIO:
    screen = io.StringIO()
    monkeypatch.setattr(console, "terminal", Console(file=screen, width=400))
    return screen


# --- inputs, from wherever they come -------------------------------------------------------


def test_an_empty_catalogue_from_the_environment_is_refused_naming_it(clean_env, monkeypatch):
    home, empty = clean_env
    monkeypatch.setenv("ENVFOUNDRY_CATALOGUE", str(empty))
    screen = _screen(monkeypatch)
    code = cli.main(["build", "--profile", "tiny", "--home", str(home)])
    out = screen.getvalue()
    assert code == 2, out
    assert out.count("\n") == 1 and "Traceback" not in out
    assert f"ENVFOUNDRY_CATALOGUE={empty}: the catalogue is empty" in out
    assert "pass --allow-empty to build nothing on purpose" in out
    assert not home.exists()  # refused before any work
    # The flag names itself the same way; the floor at 0 lets it through.
    screen.truncate(0)
    code = cli.main(["build", "--home", str(home), "--catalogue", str(empty)])
    assert code == 2 and f"--catalogue {empty}: the catalogue is empty" in screen.getvalue()
    monkeypatch.setenv("ENVFOUNDRY_MIN_PUBLISHED", "0")
    assert _settings.input_problem(_settings.resolve()) is None


def test_an_empty_catalogue_from_build_settings_is_refused_before_any_work(clean_env):
    """What `make ui` and the daemon's runs read: the home's build-settings.json."""
    home, empty = clean_env
    home.mkdir()
    codec.write_json(home / _settings.SETTINGS_FILE, {"profile": "tiny", "catalogue": str(empty)})
    settings = BuildSettings.from_env()
    assert settings.catalogue == str(empty)
    named = f"catalogue {empty} (from {home / _settings.SETTINGS_FILE})"
    problem = _settings.run_input_problem(settings.model_dump())
    assert problem is not None and problem.startswith(f"{named}: the catalogue is empty")
    # A catalogue run launched from the UI stops at its first step, having made nothing.
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [mined_topics, topics],
            instance=instance,
            resources={
                "settings": settings,
                "io_manager": JsonArtifactIOManager(root=str(home / "artifacts")),
            },
            raise_on_error=False,
        )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failure.step_key == "mined_topics"
    message = failure.step_failure_data.user_failure_data.description
    assert message.startswith(f"refused before any work: {named}: the catalogue is empty")
    assert not (home / "artifacts").exists()


def test_every_input_names_where_it_came_from(clean_env, monkeypatch, tmp_path):
    home, _ = clean_env
    monkeypatch.setenv("ENVFOUNDRY_CORPUS", str(tmp_path / "nope.jsonl"))
    problem = _settings.input_problem(_settings.resolve())
    assert problem == f"ENVFOUNDRY_CORPUS={tmp_path / 'nope.jsonl'}: no such file (a JSONL of " \
        "user requests, or 'none')"  # fmt: skip
    monkeypatch.delenv("ENVFOUNDRY_CORPUS")
    monkeypatch.setenv("ENVFOUNDRY_ENVS", json.dumps(["no/such/env.py"]))
    assert _settings.input_problem(_settings.resolve()).startswith("ENVFOUNDRY_ENVS: ")
    monkeypatch.delenv("ENVFOUNDRY_ENVS")
    monkeypatch.setenv("ENVFOUNDRY_SANDBOX_MESSAGE_MB", "big")
    assert _settings.input_problem(_settings.resolve()).startswith(
        "ENVFOUNDRY_SANDBOX_MESSAGE_MB='big': the sandbox message limit is a whole number"
    )
    fingerprints = []
    for mb in ("", "16", "32"):  # the default hashes as no setting; another value does not
        monkeypatch.setenv("ENVFOUNDRY_SANDBOX_MESSAGE_MB", mb)
        fingerprints.append(_settings.run_fingerprint(_settings.resolve().values))
    assert fingerprints[0] == fingerprints[1] != fingerprints[2]
    monkeypatch.delenv("ENVFOUNDRY_SANDBOX_MESSAGE_MB")
    monkeypatch.setenv("ENVFOUNDRY_MIN_PUBLISHED", "some")
    with pytest.raises(ValueError, match="ENVFOUNDRY_MIN_PUBLISHED: 'some' is not a whole"):
        _settings.resolve()
    screen = _screen(monkeypatch)
    assert cli.main(["build", "--home", str(home)]) == 2
    assert "ENVFOUNDRY_MIN_PUBLISHED: 'some' is not a whole number" in screen.getvalue()


# --- the floor ------------------------------------------------------------------------------


def test_the_profiles_floors():
    assert publish_floor(get_profile("tiny"), 4) == 1
    assert publish_floor(get_profile("small"), 6) == 1
    assert publish_floor(get_profile("default"), 13) == 16  # a tenth of 156 candidates
    assert publish_floor(get_profile("default"), 0) == 1
    assert BuildSettings(profile="default").publish_floor(12)[0] == 15
    assert BuildSettings(profile="default", min_published=0).publish_floor(12)[0] == 0


def _dataset(home: Path, run: str, tasks: int) -> Path:
    staged = datasets.staging_dir(home, run)
    (staged / datasets.PARTS["warehouse"]).write_bytes(b"")
    shards = staged / datasets.PARTS["shards"]
    shards.mkdir(exist_ok=True)
    files = [{"path": "rl/train.jsonl", "kind": "rl_tasks", "rows": tasks}]
    codec.write_json(shards / "manifest.json", {"files": files})
    return staged


def test_a_dataset_under_its_floor_is_not_swapped_in(tmp_path):
    home = tmp_path / "home"
    good = _dataset(home, "good", 5)
    datasets.publish(home, good, floor=1)
    assert datasets.current_dir(home) == good.resolve()
    empty = _dataset(home, "empty", 0)
    with pytest.raises(datasets.BelowFloor) as refused:
        datasets.publish(home, empty, floor=1, why_short=lambda tasks: f"lost {tasks}")
    assert (refused.value.tasks, refused.value.floor, refused.value.why) == (0, 1, "lost 0")
    assert datasets.current_dir(home) == good.resolve()
    assert (home / "shards").resolve() == good / "shards"
    assert (empty / datasets.UNPUBLISHED).is_file()
    # A second refusal replaces the first (never published, nothing to keep of it).
    again = _dataset(home, "again", 0)
    with pytest.raises(datasets.BelowFloor):
        datasets.publish(home, again, floor=1)
    assert not empty.exists() and again.is_dir()
    # A publish keeps the dataset it replaces, not the newer one that was refused.
    newer = _dataset(home, "newer", 3)
    datasets.publish(home, newer, floor=1)
    assert datasets.current_dir(home) == newer.resolve()
    assert sorted(p.name for p in (home / datasets.DATASETS).iterdir()) == ["good", "newer"]
    # Floor 0 (--allow-empty): even nothing publishes.
    datasets.publish(home, _dataset(home, "nothing", 0), floor=0)
    assert datasets.published_tasks(datasets.current_dir(home)) == 0


# --- where tasks were lost ------------------------------------------------------------------


def _q(scenario_id: str, stage: str, reason: str) -> dict:
    return {"artifact_type": "scenario", "artifact_id": scenario_id, "stage": stage,
            "reason": reason}  # fmt: skip


def test_an_environment_publishing_fewer_than_three_tasks_says_why():
    outcomes = [
        ("e1", "a", "quarantined"),
        ("e1", "b", "quarantined"),
        ("e1", "c", "published"),
        ("e2", "d", "quarantined"),
        *[("e3", s, "published") for s in "xyz"],
    ]
    quarantine = [
        _q("a", "checks", "checks not proven: noop_fail false"),
        _q("b", "scenarios", "gold_fails: the call failed"),
        _q("d", "difficulty_calibration", "difficulty: solved 0/3 by the LLM agent"),
    ]
    reasons = losses.environment_reasons(
        ["e1", "e2", "e3", "e4"], outcomes, quarantine, asked=4, tools={"e4": (2, 0)}
    )
    assert set(reasons) == {"e1", "e2", "e4"}  # e3 publishes three
    assert reasons["e1"] == (
        "1 of 3 candidate task(s) published, fewer than 3: the planner made 3 of the 4 "
        "candidates asked; 1 rejected by their gold run at scenarios (gold_fails x1; e.g. "
        "gold_fails: the call failed); 1 not proven by the self-test at checks (checks not "
        "proven x1; e.g. checks not proven: noop_fail false)"
    )
    assert "1 dropped by the difficulty filter at difficulty_calibration" in reasons["e2"]
    assert reasons["e4"] == (
        "0 of 0 candidate task(s) published, fewer than 3: the planner made no candidate task "
        "of the 4 asked from its 2 tool(s) (2 that read, 0 that change state) (scenarios)"
    )


def _funnel(path: Path, counts: dict[str, int], quarantine: list[tuple] = ()) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE mart_funnel (stage VARCHAR, n_items BIGINT, n_base BIGINT)")
        for stage in losses.FUNNEL:
            con.execute("INSERT INTO mart_funnel VALUES (?, ?, NULL)", [stage, counts[stage]])
        con.execute(
            "CREATE TABLE quarantine (artifact_type VARCHAR, artifact_id VARCHAR, stage VARCHAR, "
            "reason VARCHAR, reason_kind VARCHAR)"
        )
        if quarantine:
            con.executemany("INSERT INTO quarantine VALUES (?, ?, ?, ?, ?)", list(quarantine))
        con.execute("CREATE TABLE environments (env_id VARCHAR, status VARCHAR)")
    return path


def test_the_stage_that_lost_the_tasks_is_named(tmp_path):
    counts = dict(zip(losses.FUNNEL, [1, 1, 1, 1, 4, 4, 0], strict=True))
    dropped = [
        ("scenario", s, "difficulty_calibration", "difficulty: solved 0/3", "difficulty")
        for s in "abcd"
    ]
    loss = losses.lost_where(_funnel(tmp_path / "zero.duckdb", counts, dropped), 4)
    assert (loss.stage, loss.before, loss.n_before, loss.n_after) == (
        "scenarios_published", "scenarios_proven", 4, 0
    )  # fmt: skip
    assert loss.text().startswith("scenarios_published, which went to zero (scenarios_proven 4")
    assert "4 quarantined: 4 at difficulty_calibration: difficulty" in loss.why
    # Nothing at zero: the step that kept the smallest share (1 of 8 candidates proven).
    counts = dict(zip(losses.FUNNEL, [2, 2, 2, 2, 8, 1, 1], strict=True))
    loss = losses.lost_where(_funnel(tmp_path / "fell.duckdb", counts), 4)
    assert (loss.stage, loss.n_before, loss.n_after) == ("scenarios_proven", 8, 1)
    assert "fell most" in loss.text()
    assert losses.lost_where(tmp_path / "missing.duckdb", 4) is None


# --- the summary ----------------------------------------------------------------------------


def _unpublished_home(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    staged = datasets.staging_dir(home, "run-1")
    counts = dict(zip(losses.FUNNEL, [1, 1, 1, 1, 0, 0, 0], strict=True))
    warehouse_file = _funnel(staged / datasets.PARTS["warehouse"], counts)
    with duckdb.connect(str(warehouse_file)) as con:
        con.execute("DROP TABLE environments")
        con.execute("CREATE TABLE environments (env_id VARCHAR, status VARCHAR, reason VARCHAR)")
        con.execute(
            "INSERT INTO environments VALUES ('wall_clock', 'accepted', 'the planner made no "
            "candidate task of the 4 asked (scenarios)'), ('fine', 'accepted', NULL)"
        )
        con.execute("ALTER TABLE mart_funnel ADD COLUMN n_quarantined BIGINT")
        con.execute("ALTER TABLE mart_funnel ADD COLUMN stage_order INTEGER")
    return home, staged


def test_the_summary_prints_the_reasons_the_failed_checks_and_why_nothing_published(tmp_path):
    home, staged = _unpublished_home(tmp_path)
    check = FailedCheck(
        check="has_published_scenarios",
        asset="checks",
        partition="wall_clock",
        severity="WARN",
        description="0 of 0 scenarios published",
    )
    why = "nothing published: 0 task(s), under the publish floor of 1 (profile tiny's floor)"
    outcome = BuildOutcome(
        failed={"publish": "published_dataset: Failure"},
        publish_run_id="run-1",
        failed_checks=[check],
        below_floor=why,
    )
    screen = io.StringIO()
    print_summary(Console(file=screen, width=400, soft_wrap=True), home, outcome, 1.0)
    out = screen.getvalue()
    assert f"of this build's UNPUBLISHED dataset {staged}" in out
    assert (
        "  wall_clock (accepted): the planner made no candidate task of the 4 asked (scenarios)"
        in out
    )
    assert "fine (" not in out
    assert "Failed asset checks (1)" in out
    assert (
        "CHECK has_published_scenarios on checks[wall_clock] (WARN): 0 of 0 scenarios published"
        in out
    )
    assert f"NOT PUBLISHED {why}" in out and "FAILED publish" not in out
    assert "Build finished with nothing published: under the publish floor (exit 3)" in out


# --- failed checks and the floor, read back from the instance ------------------------------


@dg.asset
def shelf() -> int:
    return 1


@dg.asset_check(asset=shelf, description="the shelf holds at least two books")
def two_books(shelf: int) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=shelf >= 2, metadata={"summary": f"{shelf} book on it"})


@dg.asset_check(asset=shelf)
def explained(shelf: int) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=False, severity=dg.AssetCheckSeverity.WARN, description="said by the check"
    )


@dg.asset(deps=[shelf])
def refused_publish() -> None:
    raise dg.Failure(description="under the floor", metadata={"publish_floor": 1})


def test_failed_checks_and_the_floor_are_read_back_from_the_instance():
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [shelf, refused_publish, two_books, explained], instance=instance, raise_on_error=False
        )
        run = FinishedRun(result.run_id, "__ephemeral_asset_job__", None, False, "", "")
        found = sorted(failed_checks(instance, run), key=lambda c: c.check)
        assert [c.line() for c in found] == [
            "explained on shelf (WARN): said by the check",
            "two_books on shelf (ERROR): 1 book on it",
        ]
        assert floor_refusal(instance, result.run_id) == "under the floor"
