"""Incremental builds: a build redoes only what changed since the last one, and says so.

One small home (three catalogue topics, tiny profile) goes through: a rebuild with nothing
changed, one topic edited, a stage's code changed, the spec schema bumped, the schedule and
the sensor, and a build killed with SIGKILL then resumed. What re-ran is read from the
materialization events of each build's runs, not from what the build prints. Its builds keep
their code server and run host warm (orchestration/fastrun/warm.py), as a user's do: the first
starts them and the others adopt them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections import defaultdict
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest
from build_support import run_build, small_catalogue, start_build, stop_warm

from assets._staleness import staleness
from assets._util import BUILD_TAG, PER_ENVIRONMENT_ASSETS
from orchestration.fastrun import warm
from orchestration.fastrun.dagster_internals import InstanceRef
from orchestration.reuse import EXPLAIN
from synthesis import codec
from synthesis.config import llm_attempts_dir
from synthesis.export import warehouse as wh
from synthesis.export.artifacts import read_trajectories
from synthesis.export.warehouse_parts import CHECK_TABLES
from synthesis.hashing import sha256_file
from synthesis.models import Check, CheckSelftest, QuarantineRecord, Scenario
from synthesis.tasks.contamination import installed_benchmarks
from synthesis.tasks.screening import apply_screening, screen_tasks

TOPICS = ("audio_gear", "barber_shop", "church_fund_requests")
EDITED = "barber_shop-booking"
NEW_TOPIC = "campus_store_cards"
PUBLISH_ASSETS = {"warehouse/environments", "training_shards", "published_dataset"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental")
    catalogue = small_catalogue(root / "topics.json", TOPICS)
    home = root / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm.IDLE_VARIABLE, "300")  # every build of this module, killed one too
        first = _build(home, catalogue)
        assert "Code server and run host: started; kept warm 300 s" in first.stdout
        # What they cost while they wait is said, not just that they wait.
        assert re.search(r"meanwhile they hold \d+\.\d GB of memory", first.stdout)
        assert "Environments: 3 made, all new" in first.stdout
        yield home, catalogue
        assert "Stopped the code server" in stop_warm(home)


def _build(home: Path, catalogue: Path, *extra: str):
    result = run_build(home, seed=7, extra=["--catalogue", str(catalogue), *extra])
    assert result.returncode == 0, result.stdout[-3000:]
    return result


def _instance(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home / "dagster")))


def _latest_build(instance: dg.DagsterInstance) -> dict[str, set[tuple[str, str | None]]]:
    """job → the (asset, partition) pairs the runs of the newest build materialized."""
    runs = instance.get_runs()  # newest first
    build_id = runs[0].tags[BUILD_TAG]
    made: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for run in runs:
        if run.tags.get(BUILD_TAG) != build_id:
            continue
        made[run.job_name]  # a run that made nothing still counts as a run of its job
        for record in instance.get_records_for_run(
            run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ).records:
            event = record.event_log_entry.dagster_event
            made[run.job_name].add((event.asset_key.to_user_string(), event.partition))
    return dict(made)


def _artifacts(home: Path, env_id: str) -> dict[str, str]:
    return {
        stage: sha256_file(home / "artifacts" / stage / f"{env_id}.json")
        for stage in PER_ENVIRONMENT_ASSETS
    }


def _published_trajectories(home: Path) -> pa.Table:
    return wh.read_table(home / "warehouse.duckdb", "trajectories")


def _trajectories_from_artifacts(home: Path) -> pa.Table:
    parts = [
        read_trajectories(home / "artifacts" / "trajectories" / f"{e}.json") for e in _env_ids(home)
    ]
    return wh.conform("trajectories", wh.trajectory_part_rows(parts)).sort_by("traj_id")


def _published_from_artifacts(home: Path) -> list[Scenario]:
    return [
        Scenario.model_validate(s)
        for e in _env_ids(home)
        for s in _all_checks(home, e)["scenarios"]
        if s["status"] == "published"
    ]


def _check_tables(home: Path) -> dict[str, pa.Table]:
    """The scenarios, checks and self-tests tables made from every checks artifact of the
    home, with the screening's verdicts applied."""
    dumped = {e: _all_checks(home, e) for e in _env_ids(home)}
    screened = codec.read_json(home / "artifacts" / "task_screening" / "_all.json")["quarantine"]
    scenarios = apply_screening(
        [Scenario.model_validate(s) for part in dumped.values() for s in part["scenarios"]],
        [QuarantineRecord.model_validate(q) for q in screened],
    )
    env_of = {s.scenario_id: s.env_id for s in scenarios}
    checks = [Check.model_validate(c) for part in dumped.values() for c in part["checks"]]
    tests = [CheckSelftest.model_validate(t) for part in dumped.values() for t in part["selftests"]]
    return {
        "scenarios": wh.conform("scenarios", wh.scenario_rows(scenarios)),
        "checks": wh.conform("checks", wh.check_rows(checks, env_of)),
        "check_selftests": wh.conform("check_selftests", wh.check_selftest_rows(tests, env_of)),
    }


def _all_checks(home: Path, env_id: str) -> dict:
    return codec.read_json(home / "artifacts" / "checks" / f"{env_id}.json")


def _env_ids(home: Path) -> list[str]:
    with _instance(home) as instance:
        return sorted(instance.get_dynamic_partitions("environments"))


def test_a_rebuild_with_nothing_changed_starts_no_run_and_never_imports_dagster(built):
    """It answers from the last build's record (orchestration/last_build.py) before Dagster's
    import, which would be most of its time: Python's import log of the build has none."""
    home, catalogue = built
    before = {e: _artifacts(home, e) for e in _env_ids(home)}
    with _instance(home) as instance:
        runs = len(instance.get_runs())
    result = run_build(
        home,
        seed=7,
        extra=["--catalogue", str(catalogue)],
        env={"PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Nothing changed since build" in result.stdout
    # The import log goes to stderr, which the build points at its log file once it starts.
    imported = result.stderr + (home / "logs" / "latest.log").read_text()
    assert re.search(r"\| +orchestration\.last_build$", imported, re.M)  # the log is there
    assert not re.search(r"\| +dagster(\.|$)", imported, re.M)
    with _instance(home) as instance:
        assert len(instance.get_runs()) == runs
    assert {e: _artifacts(home, e) for e in before} == before


def test_without_the_last_build_record_the_catalogue_run_finds_nothing_stale(built):
    """The record is only a shortcut: the staleness check comes to the same answer."""
    home, catalogue = built
    before = {e: _artifacts(home, e) for e in _env_ids(home)}
    (home / "last-build.json").unlink()
    result = _build(home, catalogue)
    assert "0 made, 3 reused" in result.stdout
    assert "Publish: reused the current dataset" in result.stdout
    with _instance(home) as instance:
        assert set(_latest_build(instance)) == {"catalogue_job"}
    assert {e: _artifacts(home, e) for e in before} == before
    assert (home / "last-build.json").is_file()


def test_editing_one_topic_makes_that_environment_and_the_publish_again(built):
    home, catalogue = built
    others = {e: _artifacts(home, e) for e in _env_ids(home) if e != EDITED}
    edited = _artifacts(home, EDITED)
    _edit(catalogue, "barber_shop", "A barber shop whose chairs are booked a week ahead.")
    result = _build(home, catalogue)
    assert "1 made, 2 reused" in result.stdout and "its definition changed" in result.stdout
    with _instance(home) as instance:
        made = _latest_build(instance)
    assert set(made) == {"catalogue_job", "environment_job", "publish_job"}
    assert {p for _, p in made["environment_job"]} == {EDITED}
    assert {a for a, _ in made["environment_job"]} == set(PER_ENVIRONMENT_ASSETS)
    assert PUBLISH_ASSETS <= {a for a, _ in made["publish_job"]}
    assert {e: _artifacts(home, e) for e in others} == others
    assert _artifacts(home, EDITED)["environments"] != edited["environments"]
    # The publish read the edited environment's trajectories only: the others' rows are the
    # last dataset's, and the table is what reading every artifact makes.
    with _instance(home) as instance:
        record = instance.get_latest_materialization_event(
            dg.AssetKey(["warehouse", "trajectories"])
        )
    metadata = record.asset_materialization.metadata
    assert metadata["environments_read"].value == 1
    assert metadata["environments_kept"].value.startswith(f"{len(others)} environment(s)")
    assert _published_trajectories(home) == _trajectories_from_artifacts(home)
    # Screening read the checks of no environment but the edited one, and of that one only
    # when they changed (the others' task features are the last publish's; the first build
    # read every environment's), and screened what screening every checks artifact screens.
    with _instance(home) as instance:
        records = instance.fetch_materializations(dg.AssetKey("task_screening"), limit=100).records
    # Newest first: this build's, then the first build's (no build between published).
    last, first = (r.asset_materialization.metadata for r in records)
    assert first["environments_read"].value == len(TOPICS)
    changed = _artifacts(home, EDITED)["checks"] != edited["checks"]
    assert last["environments_read"].value == int(changed)
    kept = len(TOPICS) - int(changed)
    assert last["environments_kept"].value.startswith(f"{kept} environment(s)")
    assert last["published_before"].value == len(_published_from_artifacts(home))
    # Its LLM agent attempts (none offline) likewise, by the trajectories' versions.
    assert first["attempts_read"].value == len(TOPICS)
    traj_changed = _artifacts(home, EDITED)["trajectories"] != edited["trajectories"]
    assert last["attempts_read"].value == int(traj_changed)
    assert sorted(p.stem for p in llm_attempts_dir(home).glob("*.arrow")) == _env_ids(home)
    screened = codec.read_json(home / "artifacts" / "task_screening" / "_all.json")
    every = screen_tasks(_published_from_artifacts(home), installed_benchmarks())
    assert screened["quarantine"] == [q.model_dump(mode="json") for q in every]
    # The warehouse's scenario, check and self-test rows likewise: the first build read every
    # environment's checks, this one the edited environment's only when they changed, and
    # the tables are what reading every checks artifact makes.
    expected = _check_tables(home)
    with _instance(home) as instance:
        materialized = {
            table: instance.fetch_materializations(
                dg.AssetKey(["warehouse", table]), limit=100
            ).records
            for table in CHECK_TABLES
        }
    for table, records in materialized.items():
        last, first = (r.asset_materialization.metadata for r in records)
        assert first["environments_read"].value == len(TOPICS)
        assert last["environments_read"].value == int(changed)
        assert last["environments_kept"].value.startswith(f"{kept} environment(s)")
        assert wh.read_table(home / "warehouse.duckdb", table) == expected[table]


def test_the_builds_of_a_home_adopt_its_warm_code_server_and_run_host(built):
    """The first build's code server and run host served the later ones. The runs they forked
    for a build wrote their step logs into that build's log, not the warm processes' log,
    and they carried that build's lifeline (the killed build below checks it works)."""
    home, _ = built
    servers = warm.read(home / "dagster")
    assert servers is not None and servers.alive()
    log = (home / "logs" / "latest.log").read_text()
    with _instance(home) as instance:
        runs = [r for r in instance.get_runs() if r.tags.get(BUILD_TAG) == _latest_id(log)]
    assert runs and all(f" - {r.run_id} - " in log for r in runs)
    assert "STEP_SUCCESS" in log and "trajectories" in log
    assert "STEP_SUCCESS" not in Path(servers.log).read_text()
    first_build = min((home / "logs").glob("2*.log")).name.split("-")[-1][: -len(".log")]
    assert servers.build_id == first_build
    latest = run_build(home, seed=7, extra=["--catalogue", str(built[1]), "--full"])
    assert latest.returncode == 0, latest.stdout[-3000:]
    assert f"Code server and run host: adopted from build {first_build}" in latest.stdout
    # The build itself ran in a child of the warm run host, not in the CLI (warm_build.py).
    assert f"this build forked by the run host (pid {servers.host_pid})" in latest.stdout
    assert warm.read(home / "dagster") == servers


def _latest_id(log: str) -> str:
    return re.search(r"^==== build (\w+) ", log, re.M).group(1)


class _ChangedCode:
    """The code location's asset graph with one stage's code version changed."""

    def __init__(self, graph, stage: str):
        self._graph, self._stage = graph, dg.AssetKey(stage)

    def get(self, key):
        node = self._graph.get(key)
        if key != self._stage:
            return node
        return type("Node", (), {**_attributes(node), "code_version": "changed"})()


def _attributes(node) -> dict:
    names = ("key", "parent_keys", "child_keys", "is_partitioned", "is_materializable")
    return {name: getattr(node, name) for name in names}


def _graph():
    from orchestration.definitions import defs

    return defs.resolve_asset_graph()


def test_a_code_change_in_one_stage_makes_it_and_the_stages_after_it(built):
    home, _ = built
    with _instance(home) as instance:
        found = staleness(
            instance, _ChangedCode(_graph(), "checks"), PER_ENVIRONMENT_ASSETS, _env_ids(home)
        )
    assert found.stale_partitions() == _env_ids(home)
    for env_id in _env_ids(home):
        assert found.redo(env_id) == ["checks", "trajectories"]
        assert found.why(env_id) == "checks code changed"


def test_the_schedule_asks_for_nothing_while_all_is_current(built):
    from orchestration.automation import refresh_stale

    home, _ = built
    with _instance(home) as instance:
        context = dg.build_schedule_context(
            instance=instance, repository_def=_repository(), scheduled_execution_time=None
        )
        result = refresh_stale.evaluate_tick(context)
    assert not result.run_requests and "nothing is stale" in result.skip_message


def test_a_schema_bump_makes_every_environment_stale_and_the_schedule_remakes_them(built):
    from assets._staleness import DATA_VERSION_TAG
    from assets.env_specs import TOPIC_CATALOGUE, definition_versions
    from orchestration.automation import refresh_stale

    home, _ = built
    specs = json.loads((home / "artifacts" / "env_specs" / "_all.json").read_text())["specs"]
    before = definition_versions(specs, [])
    bumped = definition_versions(
        [{**s, "schema_version": s["schema_version"] + 1} for s in specs], []
    )
    assert set(before) == set(bumped) == set(_env_ids(home))
    assert all(bumped[e] != before[e] for e in before)
    with _instance(home) as instance:
        for env_id, version in bumped.items():  # what the catalogue run would observe
            instance.report_runless_asset_event(
                dg.AssetObservation(
                    TOPIC_CATALOGUE, partition=env_id, tags={DATA_VERSION_TAG: version}
                )
            )
        found = staleness(
            instance, _graph(), PER_ENVIRONMENT_ASSETS, _env_ids(home), explain=EXPLAIN
        )
        assert {e: found.redo(e) for e in _env_ids(home)} == {
            e: list(PER_ENVIRONMENT_ASSETS) for e in _env_ids(home)
        }
        assert {found.why(e) for e in _env_ids(home)} == {"its definition changed"}
        context = dg.build_schedule_context(instance=instance, repository_def=_repository())
        requests = refresh_stale.evaluate_tick(context).run_requests
    assert sorted(r.partition_key for r in requests) == _env_ids(home)
    assert all(
        [k.to_user_string() for k in r.asset_selection] == list(PER_ENVIRONMENT_ASSETS)
        for r in requests
    )
    # Observed back as they are: the catalogue's own versions, nothing stale any more.
    with _instance(home) as instance:
        for env_id, version in before.items():
            instance.report_runless_asset_event(
                dg.AssetObservation(
                    TOPIC_CATALOGUE, partition=env_id, tags={DATA_VERSION_TAG: version}
                )
            )
        assert not staleness(instance, _graph(), PER_ENVIRONMENT_ASSETS, _env_ids(home)).reasons


def test_the_sensor_opens_a_partition_for_a_new_topic(built, monkeypatch):
    from orchestration.automation import new_topics

    home, catalogue = built
    grown = small_catalogue(catalogue.with_name("grown.json"), (*TOPICS, NEW_TOPIC))
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(home))
    monkeypatch.setenv("ENVFOUNDRY_CATALOGUE", str(grown))
    monkeypatch.setenv("ENVFOUNDRY_PROFILE", "tiny")
    with _instance(home) as instance:
        result = new_topics(dg.build_sensor_context(instance=instance))
        (added,) = result.dynamic_partitions_requests
        assert [p for p in added.partition_keys if p.startswith(NEW_TOPIC)] == added.partition_keys
        assert len(added.partition_keys) == 1 and len(result.run_requests) == 1
        monkeypatch.setenv("ENVFOUNDRY_CATALOGUE", str(catalogue))
        skipped = new_topics(dg.build_sensor_context(instance=instance))
        assert isinstance(skipped, dg.SkipReason)


def test_the_publish_sensor_waits_for_the_refresh_then_publishes_what_changed(built, monkeypatch):
    from assets._staleness import DATA_VERSION_TAG
    from assets._util import PUBLISH_INPUTS_TAG
    from assets.env_specs import TOPIC_CATALOGUE
    from orchestration.automation import publish_refreshed, refresh_run_key
    from orchestration.fastrun.dagster_internals import RUN_KEY_TAG
    from orchestration.reuse import publish_inputs

    home, _ = built
    # The daemon's settings: the home's last build (profile, seed, catalogue) as it ran.
    for name in ("ENVFOUNDRY_PROFILE", "ENVFOUNDRY_SEED", "ENVFOUNDRY_CATALOGUE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(home))

    def tick(instance):
        return publish_refreshed(
            dg.build_sensor_context(instance=instance, repository_def=_repository())
        )

    with _instance(home) as instance:
        # What the builds published is what the sensor would publish: nothing to do.
        assert tick(instance).skip_message == "the published dataset is current"

        # A run in flight: a publish now could read an environment half made.
        running = instance.add_run(
            dg.DagsterRun(job_name="environment_job", status=dg.DagsterRunStatus.STARTED)
        )
        assert tick(instance).skip_message == "waiting for 1 unfinished run(s)"
        instance.delete_run(running.run_id)

        # A changed definition makes an environment stale: wait for refresh_stale's run.
        edited = _env_ids(home)[0]
        record = instance.get_latest_data_version_record(TOPIC_CATALOGUE, partition_key=edited)
        was = record.asset_observation.tags[DATA_VERSION_TAG]
        instance.report_runless_asset_event(
            dg.AssetObservation(TOPIC_CATALOGUE, partition=edited, tags={DATA_VERSION_TAG: "x"})
        )
        skipped = tick(instance).skip_message
        assert "1 stale environment(s) not remade yet" in skipped and edited in skipped
        # Its refresh ran and failed: the environment is left out as a build leaves it out,
        # and nothing else changed, so the published dataset stays.
        found = staleness(
            instance, _graph(), PER_ENVIRONMENT_ASSETS, _env_ids(home), explain=EXPLAIN
        )
        failed = instance.add_run(
            dg.DagsterRun(
                job_name="environment_job",
                status=dg.DagsterRunStatus.FAILURE,
                tags={RUN_KEY_TAG: refresh_run_key(found, edited)},
            )
        )
        assert tick(instance).skip_message == "the published dataset is current"
        instance.delete_run(failed.run_id)
        instance.report_runless_asset_event(
            dg.AssetObservation(TOPIC_CATALOGUE, partition=edited, tags={DATA_VERSION_TAG: was})
        )

        # The published dataset is behind what the environments now hold: publish, once.
        inputs = publish_inputs(instance, _graph(), _env_ids(home))
        published = instance.get_latest_materialization_event(dg.AssetKey("published_dataset"))
        metadata = published.asset_materialization.metadata
        instance.report_runless_asset_event(
            dg.AssetMaterialization("published_dataset", metadata={"publish_inputs": "older"})
        )
        request = tick(instance)
        assert isinstance(request, dg.RunRequest)
        assert request.run_key == f"publish:{inputs}"
        assert request.tags[PUBLISH_INPUTS_TAG] == inputs
        instance.report_runless_asset_event(
            dg.AssetMaterialization("published_dataset", metadata=metadata)
        )
        assert tick(instance).skip_message == "the published dataset is current"


def test_ctrl_c_at_the_cli_stops_the_build_the_warm_run_host_runs_for_it(built, tmp_path):
    """The CLI stays the build when the warm run host runs it: a Ctrl-C there reaches the
    host's child, which stops as a CLI build stops, and its runs end with the CLI."""
    home, catalogue = built
    _edit(catalogue, "audio_gear", "Audio gear, as a shop that was interrupted describes it.")
    with _instance(home) as instance:
        earlier = {run.run_id for run in instance.get_runs()}
    build = start_build(
        home, profile="tiny", seed=7, extra=["--catalogue", str(catalogue)], log=tmp_path / "log"
    )
    deadline = time.monotonic() + 600
    while not _runs_started(home, earlier):
        assert build.poll() is None and time.monotonic() < deadline, "nothing to interrupt"
        time.sleep(0.1)
    served = _served_build(tmp_path / "log", home)
    build.send_signal(signal.SIGINT)
    assert build.wait(timeout=120) == 130
    time.sleep(2)  # the runs' lifelines poll every 0.25 s
    assert not Path(f"/proc/{served}").exists() or _zombie(str(served)), "the build lived on"
    for pid in _runs_started(home, earlier):
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), f"run process {pid}"
    # One line at the console on what was kept and how to go on; the trace in the log.
    console = (tmp_path / "log").read_text()
    assert "Traceback" not in console and "KeyboardInterrupt" not in console, console[-3000:]
    (said,) = [line for line in console.splitlines() if "Interrupted" in line]
    assert re.fullmatch(
        r"Interrupted: (\d+ of the 1 environments it had to make are made( and kept)?|before "
        r"any environment was made)[^;]*; nothing was published: the published dataset is "
        rf"{re.escape(str(home))}/datasets/\S+\. The same command goes on from there, reusing "
        r"what is kept \(details: .+\)\.",
        said,
    ), said
    assert "KeyboardInterrupt" in (home / "logs" / "latest.log").read_text()


def _runs_started(home: Path, earlier: set[str]) -> list[str]:
    """The processes of the runs started since `earlier`."""
    with _instance(home) as instance:
        runs = [r for r in instance.get_runs() if r.run_id not in earlier]
    return [p for r in runs if (p := r.tags.get("envfoundry/run_process", "").partition(":")[0])]


def test_a_build_killed_with_sigkill_resumes_with_what_it_had_not_finished(built, tmp_path):
    home, catalogue = built
    for topic in TOPICS:
        _edit(catalogue, topic, f"{topic.replace('_', ' ')}, as its owners describe it today.")
    with _instance(home) as instance:
        earlier = {run.run_id for run in instance.get_runs()}
    build = start_build(
        home, profile="tiny", seed=7, extra=["--catalogue", str(catalogue)], log=tmp_path / "log"
    )
    _wait_for_an_environment(home, build, earlier)
    servers = warm.read(home / "dagster")
    served = _served_build(tmp_path / "log", home)
    os.kill(build.pid, signal.SIGKILL)
    build.wait(timeout=30)
    time.sleep(2)  # its runs end with it (the lifeline polls every 0.25 s), as does the
    # process the warm run host forked for the build
    assert not Path(f"/proc/{served}").exists() or _zombie(str(served)), "the build lived on"
    with _instance(home) as instance:
        for run in instance.get_runs():
            pid = run.tags.get("envfoundry/run_process", "").partition(":")[0]
            if run.run_id not in earlier and pid:
                assert not Path(f"/proc/{pid}").exists() or _zombie(pid), f"run {run.run_id}"
    assert servers is not None and servers.alive(), "the warm processes died with a build"
    # Done is what the killed build materialized whole: a run killed after its last
    # materialization but before it recorded success has nothing left to do either.
    with _instance(home) as instance:
        killed = _latest_build(instance).get("environment_job", set())
    made: dict[str, set[str]] = defaultdict(set)
    for asset, partition in killed:
        made[partition].add(asset)
    done = {p for p, assets in made.items() if assets == set(PER_ENVIRONMENT_ASSETS)}
    assert done and done != set(_env_ids(home)), "the kill came too late to leave work undone"
    result = _build(home, catalogue)
    assert f"{len(done)} reused" in result.stdout
    assert "Code server and run host: adopted" in result.stdout
    with _instance(home) as instance:
        made = _latest_build(instance)
    assert {p for _, p in made["environment_job"]} == set(_env_ids(home)) - done
    assert "publish_job" in made


def _served_build(console_log: Path, home: Path) -> int:
    """The pid of the process the warm run host forked for the build being run, which the
    build's log names."""
    log = (home / "logs" / "latest.log").read_text()
    found = re.findall(r"^build process: pid (\d+), forked by the warm run host", log, re.M)
    assert found, console_log.read_text()[-2000:]
    return int(found[-1])


def _zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def _wait_for_an_environment(home: Path, build, earlier: set[str]) -> None:
    """Until one environment run of `build` has succeeded."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert build.poll() is None, "the build ended before it could be killed"
        with _instance(home) as instance:
            if any(
                r.run_id not in earlier
                and r.job_name == "environment_job"
                and r.status == dg.DagsterRunStatus.SUCCESS
                for r in instance.get_runs()
            ):
                return
        time.sleep(0.1)
    raise AssertionError("no environment run finished within 600 s")


def _observe(instance: dg.DagsterInstance, versions: dict[str, str]) -> None:
    from assets._staleness import DATA_VERSION_TAG
    from assets.env_specs import TOPIC_CATALOGUE

    for env_id, version in versions.items():
        instance.report_runless_asset_event(
            dg.AssetObservation(TOPIC_CATALOGUE, partition=env_id, tags={DATA_VERSION_TAG: version})
        )


def _edit(catalogue: Path, topic_id: str, description: str) -> None:
    data = json.loads(catalogue.read_text())
    for topic in data["topics"]:
        if topic["topic_id"] == topic_id:
            topic["description"] = description
    catalogue.write_text(json.dumps(data))


def _repository():
    from orchestration.definitions import defs

    return defs.get_repository_def()
