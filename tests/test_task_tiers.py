"""Every published task of a tiny build carries its tier, and kill rates split by answer kind.

Reads the shared tiny build (`tiny_home`): the guesser's attempts are trajectories, the
final tier is in the mart and in the RL shard's task records (and both use one rule), and
mart_kill_rates equals a hand computation over the staging tables.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from synthesis.config import get_profile
from synthesis.tasks.difficulty import DIFFICULTY_POLICY, final_tier
from tests.build_support import query

pytestmark = pytest.mark.slow

TIERS = {"easy", "medium", "hard", "expert"}


def _published(home) -> set[str]:
    return {
        r[0]
        for r in query(home, "SELECT scenario_id FROM stg_scenarios WHERE status = 'published'")
    }


def test_the_guesser_makes_k_seeded_attempts_per_published_task(tiny_home):
    home, _ = tiny_home
    k = get_profile("tiny").difficulty_attempts
    assert k > 0
    rows = query(
        home,
        "SELECT scenario_id, attempt_seed, traj_id, n_steps FROM stg_trajectories "
        f"WHERE policy = '{DIFFICULTY_POLICY}'",
    )
    seeds = defaultdict(list)
    for scenario_id, seed, _traj, _steps in rows:
        seeds[scenario_id].append(seed)
    assert set(seeds) == _published(home)
    assert all(sorted(s) == list(range(k)) for s in seeds.values())
    assert len({r[2] for r in rows}) == len(rows)  # every attempt is its own row
    # Only the guesser's rows carry an attempt seed.
    (others,) = query(
        home,
        "SELECT count(*) FROM stg_trajectories "
        f"WHERE policy <> '{DIFFICULTY_POLICY}' AND attempt_seed IS NOT NULL",
    )[0]
    assert others == 0


def test_every_published_task_has_one_final_tier_in_the_mart_and_the_shards(tiny_home):
    home, _ = tiny_home
    k = get_profile("tiny").difficulty_attempts
    mart = {
        r[0]: r[1:]
        for r in query(
            home,
            "SELECT scenario_id, structural_tier, baseline_attempts, baseline_solves, "
            "baseline_solve_rate, final_tier FROM mart_task_difficulty WHERE status = 'published'",
        )
    }
    assert set(mart) == _published(home)
    for structural, attempts, solves, rate, final in mart.values():
        assert structural in TIERS and final in TIERS
        assert attempts == k and rate == pytest.approx(solves / attempts)
        # The SQL rule and the Python rule agree.
        assert final == final_tier(structural, attempts, solves)
    tasks = [
        json.loads(line)
        for path in sorted((home / "shards" / "rl").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert {t["scenario_id"] for t in tasks} == set(mart)
    for task in tasks:
        structural, attempts, solves, rate, final = mart[task["scenario_id"]]
        d = task["difficulty"]
        assert (d["tier"], d["baseline_attempts"], d["final_tier"]) == (structural, attempts, final)
        assert d["baseline_solve_rate"] == pytest.approx(rate)
    # Offline there is no agent under test: the guesser is a control policy.
    assert {r[0] for r in query(home, "SELECT difficulty_band FROM mart_task_difficulty")} == {
        "unrated"
    }
    (agent_rate,) = query(home, "SELECT count(agent_success_rate) FROM mart_env_quality")[0]
    assert agent_rate == 0


def test_kill_rates_by_answer_kind_match_a_hand_computation(tiny_home):
    home, _ = tiny_home
    reply_tasks = {
        sid
        for sid, spec in query(home, "SELECT scenario_id, spec_json FROM stg_checks")
        if json.loads(spec)["type"] in ("reply_contains", "reply_excludes")
    }
    archetype = dict(query(home, "SELECT env_id, archetype FROM stg_environments"))
    rates = dict(query(home, "SELECT scenario_id, mutation_kill_rate FROM stg_check_selftests"))
    groups = defaultdict(list)
    for sid, env_id in query(
        home, "SELECT scenario_id, env_id FROM stg_scenarios WHERE status = 'published'"
    ):
        kind = "reply" if sid in reply_tasks else "state"
        for key in [
            (archetype[env_id], kind),
            (archetype[env_id], "all"),
            ("all", kind),
            ("all", "all"),
        ]:
            groups[key].append(rates[sid])
    mart = {
        (a, k): (n, mean)
        for a, k, n, mean in query(
            home,
            "SELECT archetype, task_answer_kind, n_published, mean_mutation_kill_rate "
            "FROM mart_kill_rates",
        )
    }
    assert set(mart) == set(groups)
    for key, values in groups.items():
        assert mart[key][0] == len(values)
        assert mart[key][1] == pytest.approx(sum(values) / len(values))
    # Both kinds occur in a tiny build, so the split is really exercised.
    assert ("all", "state") in mart and ("all", "reply") in mart
    kinds = dict(query(home, "SELECT scenario_id, task_answer_kind FROM mart_task_difficulty"))
    assert {s for s, k in kinds.items() if k == "reply"} == reply_tasks & set(kinds)
