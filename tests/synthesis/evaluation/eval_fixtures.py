"""A hand-made home with known evaluations, for the marts, the leaderboard and --compare.

No build and no model: `make_home` writes a published dataset (`datasets/d1` behind the
`current` link, a `shards/manifest.json`, a warehouse holding only the tables the leaderboard
reads) and `evals/evals.duckdb` through the eval store, with the episodes of `EPISODES`.
Every figure the tests expect is worked out by hand below, from these rows.

Tasks (split test): s1 booking feasible (tier easy), s2 booking infeasible (hard), s3 ledger
feasible (medium), s4 ledger feasible (no final tier: structural expert), s5 and s6 ledger
feasible (easy, only gamma played them), s9 a task of a foreign environment (a class brought
with --envs: archetype "foreign", origin foreign; easy; only gamma played it). s7 booking is
a published train task and s8 a quarantined test task: neither is a reference task of the
test split.

Models on the current dataset (the latest episode of each attempt):

* alpha, 3 attempts at s1-s4: s1 TTT, s2 TFF, s3 FFF (the last an LLM error), s4 TTF (the
  failure with reward 0.5). 12 episodes, 6 successes (0.5), mean reward 6.5/12.
  pass^2 = mean(1, 0, 0, 1/3) = 1/3, pass@2 = mean(1, 2/3, 0, 1) = 2/3,
  pass^3 = mean(1, 0, 0, 0) = 1/4, pass@3 = mean(1, 1, 0, 1) = 3/4.
* beta: s1 TF, s2 T, s3 T, s4 F (an older row of s4 attempt 0 under other episode settings
  succeeded: not counted). 5 episodes, 3 successes (0.6). pass^1 = mean(1/2, 1, 1, 0) =
  0.625 (a mean over tasks); k = 2 only s1 has two attempts: pass^2 = 0, pass@2 = 1.
* gamma: s5 T, s6 F, s9 F. 3 episodes, 1 success (1/3), mean reward 1/3; on the synthesized
  environments 1 of 2 (0.5), on the foreign one 0 of 1: a transfer gap of -50 points.

Ranks: beta (0.6), alpha (0.5), gamma (1/3). alpha also has one
episode on an older dataset (manifest "old-manifest"), which the current leaderboard leaves
out.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from synthesis import codec
from synthesis.evaluation.store import EvalStore, evals_path
from synthesis.hashing import sha256_file

DATASET = "d1"
OLD_MANIFEST = "old-manifest"
ALPHA, BETA, GAMMA = "alpha", "beta", "gamma"
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

# scenario → (env, archetype, kind, final tier, structural tier, split, status)
TASKS = {
    "s1": ("e_book", "booking", "feasible", "easy", "easy", "test", "published"),
    "s2": ("e_book", "booking", "infeasible", "hard", "medium", "test", "published"),
    "s3": ("e_ledger", "ledger", "feasible", "medium", "medium", "test", "published"),
    "s4": ("e_ledger", "ledger", "feasible", None, "expert", "test", "published"),
    "s5": ("e_ledger", "ledger", "feasible", "easy", "easy", "test", "published"),
    "s6": ("e_ledger", "ledger", "feasible", "easy", "easy", "test", "published"),
    "s7": ("e_book", "booking", "feasible", "easy", "easy", "train", "published"),
    "s8": ("e_book", "booking", "feasible", "easy", "easy", "test", "quarantined"),
    "s9": ("e_files", "foreign", "feasible", "easy", "easy", "test", "published"),
}
# env → its source in the warehouse's environments table
SOURCES = {"e_book": "programmatic", "e_ledger": "llm", "e_files": "foreign"}
# (model, scenario, attempt, success, reward, failure, error)
EPISODES = [
    (ALPHA, "s1", 0, True, 1.0, "none", None),
    (ALPHA, "s1", 1, True, 1.0, "none", None),
    (ALPHA, "s1", 2, True, 1.0, "none", None),
    (ALPHA, "s2", 0, True, 1.0, "none", None),
    (ALPHA, "s2", 1, False, 0.0, "complied_infeasible", None),
    (ALPHA, "s2", 2, False, 0.0, "complied_infeasible", None),
    (ALPHA, "s3", 0, False, 0.0, "no_action", None),
    (ALPHA, "s3", 1, False, 0.0, "wrong_record", None),
    (ALPHA, "s3", 2, False, 0.0, "llm_error", "http_500: server error"),
    (ALPHA, "s4", 0, True, 1.0, "none", None),
    (ALPHA, "s4", 1, True, 1.0, "none", None),
    (ALPHA, "s4", 2, False, 0.5, "wrong_or_missing_answer", None),
    (BETA, "s1", 0, True, 1.0, "none", None),
    (BETA, "s1", 1, False, 0.0, "out_of_turns", None),
    (BETA, "s2", 0, True, 1.0, "none", None),
    (BETA, "s3", 0, True, 1.0, "none", None),
    (BETA, "s4", 0, False, 0.0, "refused_feasible", None),
    (GAMMA, "s5", 0, True, 1.0, "none", None),
    (GAMMA, "s6", 0, False, 0.0, "no_action", None),
    (GAMMA, "s9", 0, False, 0.0, "invalid_tool_or_arguments", None),
]
# Not counted on the current dataset: beta's s4 attempt 0 recorded earlier under other
# episode settings, and alpha's episode on an older dataset.
SUPERSEDED = (BETA, "s4", 0, True, 1.0, "none", None)
OLD_DATASET = (ALPHA, "s1", 0, False, 0.0, "no_action", None)
# Per episode of each model: prompt tokens, completion tokens, cost.
SPEND = {ALPHA: (100, 10, 0.01), BETA: (200, 20, 0.05), GAMMA: (0, 0, 0.0)}
# The build's trajectories on the published tasks: (policy, scenario, success, reward).
TRAJECTORIES = [
    *[("oracle", s, True, 1.0) for s in ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9")],
    *[("noop", s, False, 0.0) for s in ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s9")],
    ("guesser", "s1", True, 1.0),
    ("guesser", "s1", True, 1.0),
    ("guesser", "s3", False, 0.5),
    ("wrong_record", "s1", False, 0.0),
    ("wrong_record", "s7", False, 0.0),
]
# The self-test's shortcut rewards per scenario.
SHORTCUTS = {
    **{s: {"dump": 0.0, "hedge": 0.0} for s in ("s1", "s3", "s4", "s5", "s6", "s7", "s8", "s9")},
    "s2": {"dump": 0.0, "hedge": 0.5},
}


def make_warehouse(path: Path) -> None:
    """Only the tables and columns the leaderboard reads, as the warehouse has them."""
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE environments (env_id VARCHAR, archetype VARCHAR, source VARCHAR)")
        archetypes = {t[0]: t[1] for t in TASKS.values()}
        con.executemany(
            "INSERT INTO environments VALUES (?, ?, ?)",
            [[e, archetypes[e], source] for e, source in SOURCES.items()],
        )
        con.execute(
            "CREATE TABLE scenarios (scenario_id VARCHAR, env_id VARCHAR, status VARCHAR, "
            "split VARCHAR, kind VARCHAR)"
        )
        con.executemany(
            "INSERT INTO scenarios VALUES (?, ?, ?, ?, ?)",
            [[s, t[0], t[6], t[5], t[2]] for s, t in TASKS.items()],
        )
        con.execute(
            "CREATE TABLE trajectories (traj_id VARCHAR, scenario_id VARCHAR, policy VARCHAR, "
            "success BOOLEAN, reward DOUBLE)"
        )
        con.executemany(
            "INSERT INTO trajectories VALUES (?, ?, ?, ?, ?)",
            [[f"t{i}", s, p, ok, r] for i, (p, s, ok, r) in enumerate(TRAJECTORIES)],
        )
        con.execute(
            "CREATE TABLE check_selftests (scenario_id VARCHAR, shortcut_rewards_json VARCHAR)"
        )
        con.executemany(
            "INSERT INTO check_selftests VALUES (?, ?)",
            [[s, codec.dumps_str(r)] for s, r in SHORTCUTS.items()],
        )
    finally:
        con.close()


def _episode(key: str, run_id: str, manifest: str, row: tuple, settings: str, at: datetime):
    model, scenario, attempt, success, reward, failure, error = row
    env, archetype, kind, final_tier, structural_tier, split, _ = TASKS[scenario]
    tokens_in, tokens_out, cost = SPEND[model]
    return {
        "episode_key": key,
        "run_id": run_id,
        "model": model,
        "dataset_id": DATASET,
        "manifest_sha256": manifest,
        "settings_sha256": settings,
        "scenario_id": scenario,
        "env_id": env,
        "archetype": archetype,
        "origin": "foreign" if SOURCES[env] == "foreign" else "synthesized",
        "kind": kind,
        "family": "chain",
        "structural_tier": structural_tier,
        "final_tier": final_tier,
        "split": split,
        "multi_turn": False,
        "attempt": attempt,
        "reward": reward,
        "success": success,
        "failure": failure,
        "failed_checks_json": "[]",
        "turns": 1,
        "agent_turns": 1,
        "tool_calls": 1,
        "tool_errors": 0,
        "hit_step_limit": failure == "out_of_turns",
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "cost_usd": cost,
        "error": error,
        "started_at": at - timedelta(seconds=2),
        "finished_at": at,
        "seconds": 2.0,
    }


def _call(call_id: str, run_id: str, model: str, tokens_in: int, cost: float) -> dict:
    return {
        "call_id": call_id,
        "run_id": run_id,
        "stage": "agent",
        "artifact_id": "s1",
        "model": model,
        "attempt": 0,
        "status": "accepted",
        "tokens_in": tokens_in,
        "tokens_out": 10,
        "cost_usd": cost,
        "latency_ms": 100.0,
        "cache_hit": False,
        "created_at": T0,
    }


def make_home(root: Path) -> Path:
    """The hand-made home under `root` (see the module's docstring)."""
    home = root / "home"
    dataset = home / "datasets" / DATASET
    (dataset / "shards").mkdir(parents=True)
    (dataset / "shards" / "manifest.json").write_text('{"fixture": "eval marts"}\n')
    make_warehouse(dataset / "warehouse.duckdb")
    (home / "current").symlink_to(Path("datasets") / DATASET)
    (home / "warehouse.duckdb").symlink_to(Path("current") / "warehouse.duckdb")
    manifest = sha256_file(dataset / "shards" / "manifest.json")
    runs = {
        ALPHA: ("run-a1", manifest),
        BETA: ("run-b1", manifest),
        GAMMA: ("run-g1", manifest),
    }
    with EvalStore(evals_path(home)) as store:
        for run_id, model, mf, settings in [
            ("run-a0", ALPHA, OLD_MANIFEST, "set1"),
            ("run-b0", BETA, manifest, "set0"),
            *[(r, m, mf, "set1") for m, (r, mf) in runs.items()],
        ]:
            store.start_run(
                {
                    "run_id": run_id,
                    "model": model,
                    "dataset_id": DATASET,
                    "manifest_sha256": mf,
                    "settings_sha256": settings,
                    "split": "test",
                    "status": "finished",
                    "started_at": T0,
                    "finished_at": T0,
                }
            )
        store.write_episode(
            _episode("k-old-data", "run-a0", OLD_MANIFEST, OLD_DATASET, "set1", T0),
            [_call("c-a0", "run-a0", ALPHA, 900, 0.2)],
        )
        store.write_episode(
            _episode("k-superseded", "run-b0", manifest, SUPERSEDED, "set0", T0),
            [_call("c-b0", "run-b0", BETA, 300, 0.05)],
        )
        for i, row in enumerate(EPISODES):
            run_id = runs[row[0]][0]
            later = T0 + timedelta(minutes=10 + i)
            store.write_episode(_episode(f"k{i:02d}", run_id, manifest, row, "set1", later))
        store.write_calls(
            [
                _call("c-a1", "run-a1", ALPHA, 700, 0.1),
                _call("c-a2", "run-a1", ALPHA, 500, 0.03),
                _call("c-b1", "run-b1", BETA, 400, 0.3),
            ]
        )
    return home
