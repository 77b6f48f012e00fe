"""The mined_topics asset in a Dagster run: offline it mines nothing and `topics` is the
catalogue's choice as before; with an endpoint the mined topics follow the catalogue's and the
stage's ledger rows are spooled for the warehouse."""

from __future__ import annotations

import dagster as dg
import pytest

from assets._resources import BuildSettings
from assets.topics import mined_topics, topics
from orchestration.io_managers import JsonArtifactIOManager
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.llm import spool
from synthesis.llm.topic_mining import CORPUS_PATH
from tests.fakes.llm_topics import answer_topic
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ENVFOUNDRY_CORPUS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    return tmp_path


def _materialize(home, **settings):
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [mined_topics, topics],
            instance=instance,
            resources={
                "settings": BuildSettings(profile="tiny", home=str(home), **settings),
                "io_manager": JsonArtifactIOManager(root=str(home / "artifacts")),
            },
        )
        run_id = result.run_id
    return result.output_for_node("mined_topics"), result.output_for_node("topics"), run_id


def _catalogue_choice() -> list[dict]:
    chosen = select_topics(load_catalogue(), supported_archetypes(), 4)  # tiny's max_topics
    return [t.model_dump(mode="json") for t in chosen]


def test_offline_nothing_is_mined_and_topics_are_the_catalogues(home):
    mined, chosen, _ = _materialize(home)
    assert mined == {"topics": [], "dropped": []}
    assert chosen == _catalogue_choice()
    assert not (home / "ledger").exists()  # no spool file offline


def test_with_an_endpoint_mined_topics_follow_the_catalogues(home, monkeypatch):
    with FakeOpenAIServer(answer_topic) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        mined, chosen, run_id = _materialize(home)
    # tiny takes one mined topic: the most useful stateful request (ties by id).
    assert [t["topic_id"] for t in mined["topics"]] == ["mined_broadband_support"]
    assert chosen == _catalogue_choice() + mined["topics"]
    assert len(mined["dropped"]) == sum(1 for line in CORPUS_PATH.open() if line.strip()) - 1
    rows = spool.read_rows([spool.spool_file(home, run_id, "mined_topics", None)])
    assert rows and {r["stage"] for r in rows} == {"topic"}


def test_the_corpus_setting_comes_from_the_environment(home, monkeypatch):
    assert BuildSettings.from_env().corpus_path == CORPUS_PATH
    monkeypatch.setenv("ENVFOUNDRY_CORPUS", str(home / "mine.jsonl"))
    assert BuildSettings.from_env().corpus_path == home / "mine.jsonl"
    monkeypatch.setenv("ENVFOUNDRY_CORPUS", "none")
    assert BuildSettings.from_env().corpus_path is None


def test_the_corpus_is_an_input_of_online_builds_only(tmp_path, monkeypatch):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text('{"id": "r1", "request": "cancel my booking"}\n')
    two.write_text('{"id": "r1", "request": "refund my order"}\n')
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    offline = {BuildSettings(profile="tiny", corpus=str(p)).inputs_sha256 for p in (one, two)}
    assert len(offline) == 1  # an offline build never reads the corpus
    assert offline == {BuildSettings(profile="tiny", corpus="none").inputs_sha256}
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    online = {BuildSettings(profile="tiny", corpus=str(p)).inputs_sha256 for p in (one, two)}
    assert len(online) == 2
