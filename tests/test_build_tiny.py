"""A whole tiny build through Dagster, checked end to end (every scenario, not a sample)."""

from __future__ import annotations

import dagster as dg
import pytest

from synthesis import codec
from synthesis.hashing import sha256_file
from tests.build_support import REPO, query, run_build

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_build(tiny_home):
    return tiny_home


def test_summary_reports_stages_and_outputs(tiny_build):
    home, stdout = tiny_build
    assert "EnvFoundry build summary" in stdout
    assert "scenarios_published" in stdout and "trajectories_successful" in stdout
    assert str(home / "warehouse.duckdb") in stdout


def test_each_build_keeps_its_own_log_with_the_step_logs(tiny_build):
    home, stdout = tiny_build
    (log,) = [p for p in (home / "logs").glob("*.log") if not p.is_symlink()]
    assert str(log) in stdout  # the summary says where it is
    assert (home / "logs" / "latest.log").resolve() == log
    text = log.read_text()
    # Every run's step events, from the run processes the build launched.
    for job in ["catalogue_job", "environment_job", "publish_job"]:
        assert f"- {job} - " in text
    assert 'STEP_SUCCESS - Finished execution of step "scenarios"' in text
    assert "dbt" in text and "RUN_SUCCESS" in text


def test_dbt_reuses_the_parsed_project_and_runs_in_the_dataset(tiny_build):
    """dbt builds the published warehouse on the manifest the project was parsed into once
    (assets/dbt.py): it parses nothing, not even partially, and reads no partial-parse file."""
    home, _ = tiny_build
    dataset = (home / "warehouse.duckdb").resolve().parent
    dbt_log = (dataset / "dbt" / "logs" / "dbt.log").read_text()
    assert '"name": "PartialParsing' not in dbt_log
    assert "Unable to do partial parsing" not in dbt_log
    assert '"name": "LogTestResult"' in dbt_log  # the JSON file log, as the dbt CLI wrote it
    assert "Completed successfully" in dbt_log
    # The marts are in the dataset's warehouse, not in a file beside the dbt project.
    assert query(home, "select count(*) from mart_funnel")[0][0] > 0
    assert not list((REPO / "dbt_project").glob("*.duckdb"))


def test_warehouse_tables_and_funnel_are_populated(tiny_build):
    home, _ = tiny_build
    for table in [
        "environments",
        "tools",
        "scenarios",
        "checks",
        "check_selftests",
        "trajectories",
        "mart_funnel",
    ]:
        (count,) = query(home, f"SELECT count(*) FROM {table}")[0]
        assert count > 0, table
    (accepted,) = query(home, "SELECT count(*) FROM environments WHERE status='accepted'")[0]
    assert accepted >= 2


def test_every_published_scenario_gold_passes_and_noop_fails(tiny_build):
    """Replays every published gold chain in a fresh sandbox, independently of the self-test."""
    from sandboxes import EnvSource, run_episode

    home, _ = tiny_build
    envs = {
        env_id: (code, cls)
        for env_id, code, cls in query(home, "SELECT env_id, code, class_name FROM environments")
    }
    checks: dict[str, list] = {}
    for scenario_id, spec_json, check_id, description in query(
        home, "SELECT scenario_id, spec_json, check_id, description FROM checks"
    ):
        checks.setdefault(scenario_id, []).append(
            {
                "check_id": check_id,
                "scenario_id": scenario_id,
                "description": description,
                "spec": codec.loads(spec_json),
            }
        )
    scenarios = query(
        home,
        "SELECT scenario_id, env_id, initial_state_json, gold_chain_json "
        "FROM scenarios WHERE status='published'",
    )
    assert scenarios
    from synthesis.models import Check, Scenario
    from synthesis.tasks.answers import oracle_answer
    from synthesis.tasks.checks import grade
    from synthesis.tasks.gold import call_payload

    stored = {
        s["scenario_id"]: Scenario.model_validate(s)
        for path in sorted((home / "artifacts" / "checks").glob("*.json"))
        for s in codec.read_json(path)["scenarios"]
    }
    for scenario_id, env_id, state_json, chain_json in scenarios:
        code, class_name = envs[env_id]
        initial = codec.loads(state_json)
        chain = [(c["tool"], c["args"]) for c in codec.loads(chain_json)]
        episode = run_episode(EnvSource(code=code, class_name=class_name), initial, chain)
        assert episode.status == "ok", (scenario_id, episode.reason)
        scenario_checks = [Check.model_validate(c) for c in checks[scenario_id]]
        # The reply an agent that ran this chain gives (a question's answer, a refusal
        # naming the rule's fact), from this replay's own results.
        results = [call_payload(r) for r in episode.results]
        reply = oracle_answer(stored[scenario_id], episode.final_state, results)
        gold = grade(scenario_checks, initial, episode.final_state, reply)
        noop = grade(scenario_checks, initial, initial, "")
        assert gold.success and gold.reward == 1.0, (scenario_id, gold, reply)
        assert noop.reward == 0.0 and not noop.success, scenario_id


def test_shard_manifest_matches_every_file(tiny_build):
    home, _ = tiny_build
    manifest_path = home / "shards" / "manifest.json"
    manifest = codec.read_json(manifest_path)
    assert manifest["files"]
    formats = {f["format"] for f in manifest["files"]}
    assert {"jsonl", "parquet"} <= formats
    for entry in manifest["files"]:
        path = manifest_path.parent / entry["path"]
        assert sha256_file(path) == entry["sha256"], entry["path"]
        if entry["format"] in ("jsonl", "parquet"):
            assert entry["rows"] > 0 and entry["split"] in {"train", "test"}
        else:  # code, the card and its plots are for every split and have no rows
            assert entry["rows"] is None and entry["split"] == "all", entry["path"]


def test_a_broken_topic_is_quarantined_and_the_build_goes_on(tmp_path):
    topics = [
        t
        for t in codec.read_json(REPO / "data" / "topics.json")["topics"]
        if t["topic_id"] in ("bookshop", "tennis_club")
    ]
    topics.append(
        {
            "topic_id": "broken_vocab",
            "title": "Broken",
            "archetype": "booking",
            "description": "No vocabulary at all.",
            "vocabulary": {},
        }
    )
    catalogue = tmp_path / "topics.json"
    catalogue.write_bytes(codec.dumps({"topics": topics}))
    home = tmp_path / "home"
    proc = run_build(home, env={"ENVFOUNDRY_CATALOGUE": str(catalogue)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Top quarantine reasons" in proc.stdout and "broken_vocab" in proc.stdout
    rows = query(home, "SELECT artifact_type, artifact_id, stage FROM quarantine")
    assert ("env_spec", "broken_vocab", "env_specs") in rows
    # Whatever else is quarantined is a task the self-test could not prove (a baseline
    # earned reward on it), never an environment of the two good topics.
    others = [r for r in rows if r[1] != "broken_vocab"]
    assert all(kind == "scenario" and stage == "checks" for kind, _, stage in others), others
    assert query(
        home, "SELECT n_items, n_quarantined FROM mart_funnel WHERE stage = 'env_specs'"
    ) == [(2, 1)]
    assert query(home, "SELECT count(*) FROM environments WHERE status = 'accepted'") == [(2,)]
    (published,) = query(home, "SELECT count(*) FROM scenarios WHERE status = 'published'")[0]
    assert published > 0


def test_a_second_build_with_the_same_seed_makes_the_same_bytes_as_a_backfill(tiny_build, tmp_path):
    """Same seed, same bytes: every artifact and shard of a second build equals the first's.
    The second is a `--daemon` build, whose environment runs come from a backfill the daemon
    starts from the queue, as the UI's would: how runs are launched changes no byte either."""
    home, _ = tiny_build
    proc = run_build(tmp_path, extra=["--daemon"])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "as backfill" in proc.stdout and "Overview → Backfills" in proc.stdout
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        (backfill,) = instance.get_backfills()
        runs = instance.get_runs(dg.RunsFilter.for_backfill(backfill.backfill_id))
        env_ids = {e for (e,) in query(tmp_path, "select env_id from environments")}
        assert {r.tags["dagster/partition"] for r in runs} == env_ids
        assert {r.job_name for r in runs} == {"environment_job"}
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        # The backfill carries the build's tags to its runs: the publish run took them.
        assert len({r.tags["envfoundry/build"] for r in runs}) == 1
    manifest = codec.read_json(home / "shards" / "manifest.json")
    assert codec.read_json(tmp_path / "shards" / "manifest.json") == manifest
    for entry in manifest["files"]:
        assert sha256_file(tmp_path / "shards" / entry["path"]) == entry["sha256"]
    for sub in ["shards", "artifacts"]:
        first = {p.relative_to(home / sub): p for p in (home / sub).rglob("*") if p.is_file()}
        second = {
            p.relative_to(tmp_path / sub): p for p in (tmp_path / sub).rglob("*") if p.is_file()
        }
        assert first.keys() == second.keys(), sub
        different = [str(k) for k in first if first[k].read_bytes() != second[k].read_bytes()]
        assert not different, different
