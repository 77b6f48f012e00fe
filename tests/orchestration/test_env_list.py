"""`envfoundry env list --home H`: what the session's tiny build (tiny_home) published, as the
ids the player and the shards use, filtered by kind, status and split."""

from __future__ import annotations

import json

import pytest

from orchestration.cli import main
from orchestration.player.listing import env_list_main
from tests.build_support import query

pytestmark = pytest.mark.slow


def listed(argv: list[str], capsys) -> tuple[int, list[dict], str]:
    code = env_list_main(argv)
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_the_environments_and_scenarios_are_the_published_ones(tiny_home, capsys):
    home, _ = tiny_home
    code, environments, _ = listed(["--home", str(home), "--json"], capsys)
    assert code == 0
    assert [e["env_id"] for e in environments] == [
        env_id for (env_id,) in query(home, "SELECT env_id FROM environments ORDER BY 1")
    ]
    published = dict(
        query(
            home,
            "SELECT env_id, count(*) FROM scenarios WHERE status = 'published' GROUP BY 1",
        )
    )
    assert {e["env_id"]: e["scenarios"] for e in environments} == {
        e["env_id"]: published.get(e["env_id"], 0) for e in environments
    }
    assert any(e["scenarios"] for e in environments)

    chosen = environments[0]["env_id"]
    code, scenarios, _ = listed(["--home", str(home), "--env", chosen, "--json"], capsys)
    assert code == 0 and scenarios
    expected = query(
        home,
        f"SELECT scenario_id, task_text FROM scenarios WHERE env_id = '{chosen}' ORDER BY 1",
    )
    assert [(s["scenario_id"], s["task"]) for s in scenarios] == expected  # the whole request


def test_filters_keep_only_the_rows_asked_for(tiny_home, capsys):
    home, _ = tiny_home
    code, everything, _ = listed(["--home", str(home), "--scenarios", "--json"], capsys)
    kinds = {s["kind"] for s in everything}
    assert code == 0 and len(kinds) >= 2  # feasible and infeasible, at least
    for kind in kinds:
        code, some, _ = listed(
            ["--home", str(home), "--scenarios", "--kind", kind, "--json"], capsys
        )
        assert code == 0
        assert [s["scenario_id"] for s in some] == [
            s["scenario_id"] for s in everything if s["kind"] == kind
        ]
    # A value nothing has (a typo, or an empty selection) says what values there are.
    code, _, err = listed(["--home", str(home), "--scenarios", "--status", "publishd"], capsys)
    assert code == 2
    assert "no scenarios with status 'publishd'" in err and "statuses there: published" in err


def test_an_unknown_environment_or_home_is_a_usage_error_naming_what_there_is(
    tiny_home, tmp_path, capsys
):
    home, _ = tiny_home
    code, _, err = listed(["--home", str(home), "--env", "no_such_env"], capsys)
    first = query(home, "SELECT min(env_id) FROM environments")[0][0]
    assert code == 2 and "unknown environment 'no_such_env'" in err and first in err
    code, _, err = listed(["--home", str(tmp_path)], capsys)
    assert code == 2 and "no published dataset" in err


def test_the_table_shows_every_id_whole_and_how_to_play_one(tiny_home, capsys):
    home, _ = tiny_home
    assert main(["env", "list", "--home", str(home), "--scenarios"]) == 0
    out = capsys.readouterr().out
    for (scenario_id,) in query(home, "SELECT scenario_id FROM scenarios"):
        assert scenario_id in out
    assert f"play one: envfoundry env shell --home {home} --env " in out
    assert " --scenario " in out
