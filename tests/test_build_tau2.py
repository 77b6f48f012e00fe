"""tau2-bench's domains as their users have them: `envfoundry build --catalogue none --envs
'tau2.domains.retail.tools:RetailTools@.../data/retail/db.json'` (and airline, telecom), with
the package's `src` on PYTHONPATH and each domain's full database, no adapter file.

The package and databases are read from `../shared/fixtures/tau2` beside the checkout
(TAU2_FIXTURE names another place); the module skips, saying why, where it is absent or its
toolkits' dependencies are not installed (`make` installs them: pyproject.toml's `tau2`
extra). One build holds the three domains (the pipeline runs them side by side).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from build_support import REPO, query, run_build

FIXTURE = Path(os.environ.get("TAU2_FIXTURE", REPO.parent / "shared" / "fixtures" / "tau2"))
DOMAINS = {
    "retail": ("RetailTools", "db.json"),
    "airline": ("AirlineTools", "db.json"),
    "telecom": ("TelecomTools", "db.toml"),
}
MISSING = [
    m for m in ("loguru", "addict", "toml", "deepdiff") if importlib.util.find_spec(m) is None
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (FIXTURE / "src" / "tau2").is_dir(),
        reason=f"no tau2-bench fixture at {FIXTURE} (TAU2_FIXTURE names another place)",
    ),
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"tau2's toolkits need {MISSING}: make installs them (pyproject's tau2 extra)",
    ),
]
# Proven tasks each domain must publish from its full database.
ENOUGH = 5


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("tau2") / "home"
    envs = []
    for domain, (cls, db) in DOMAINS.items():
        envs += ["--envs", f"tau2.domains.{domain}.tools:{cls}@{FIXTURE / 'data' / domain / db}"]
    path = os.pathsep.join(filter(None, [str(FIXTURE / "src"), os.environ.get("PYTHONPATH")]))
    built = run_build(
        home,
        profile="small",
        seed=0,
        env={"PYTHONPATH": path},
        extra=["--catalogue", "none", "--no-warm", *envs],
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return home


def test_each_domain_publishes_proven_tasks_from_its_full_database(home):
    published = dict(
        query(
            home,
            "select e.env_id, count(s.scenario_id) from environments e left join scenarios s "
            "on s.env_id = e.env_id and s.status = 'published' group by 1",
        )
    )
    assert set(published) == {"retail_tools", "airline_tools", "telecom_tools"}
    assert all(n >= ENOUGH for n in published.values()), published
    unproven = query(
        home,
        "select count(*) from scenarios s join check_selftests t using (scenario_id) "
        "where s.status = 'published' and not (t.gold_pass and t.noop_fail and t.deterministic)",
    )
    assert unproven == [(0,)]


def test_the_toolkits_marked_tools_are_the_tools_with_their_declared_kinds(home):
    counts = query(home, "select env_id, n_tools, n_mutate_tools from environments order by 1")
    # @is_tool-marked methods only (ToolKitBase's own public helpers are not tools); WRITE
    # ones change state (each confirmed or overruled by probing).
    assert [(env, n) for env, n, _ in counts] == [
        ("airline_tools", 14),
        ("retail_tools", 16),
        ("telecom_tools", 13),
    ]
    assert all(writes >= 4 for _, _, writes in counts), counts


def test_task_values_come_from_the_database_or_their_kind_not_made_up_words(home):
    """A country in a retail task is one the database holds, or a new one that is a country
    (synthesis/environments/arguments.py draws it from Faker), never words made up for it."""
    import json
    import re

    from faker.providers.address.en_US import Provider

    db = json.loads((FIXTURE / "data" / "retail" / "db.json").read_text())
    countries = {user["address"]["country"] for user in db["users"].values()}
    countries |= set(Provider.countries)
    texts = [
        t
        for (t,) in query(
            home,
            "select task_text from scenarios where status = 'published' "
            "and env_id = 'retail_tools'",
        )
    ]
    named = set(re.findall(r'country "?([^",.;)]+?)"?[,.;)]', " ".join(texts)))
    assert named <= countries, named - countries


def test_a_trainer_replaying_the_gold_calls_through_the_shipped_module_earns_full_reward(
    home, monkeypatch
):
    """The shards' own envfoundry_reward.py loads each toolkit from its database (the
    model-typed constructor), and every gold chain earns 1.0 there, as in the sandbox."""
    import importlib.util
    import json
    import sys

    monkeypatch.syspath_prepend(str(FIXTURE / "src"))
    shards = home / "shards"
    spec = importlib.util.spec_from_file_location(
        "envfoundry_reward", shards / "envfoundry_reward.py"
    )
    efr = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "envfoundry_reward", efr)
    spec.loader.exec_module(efr)
    gold = dict(query(home, "select scenario_id, gold_chain_json from scenarios"))
    tasks = [
        json.loads(line)
        for path in sorted((shards / "rl").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    rewards = {}
    for task in tasks:
        env = efr.load_env(task, trust=True, root=str(shards))
        for call in json.loads(gold[task["scenario_id"]]):
            efr.step(env, call["tool"], call["args"])
        rewards[task["scenario_id"]] = efr.score(task, env, final_reply="")["reward"]
    assert len(rewards) >= 3 * ENOUGH and set(rewards.values()) == {1.0}, rewards
