"""The build settings without Dagster (assets/_settings.py) are the resource's
(`BuildSettings`): a value for each of its fields and the same defaults, read from the same
places, hashed alike. The CLI fingerprints the first to decide that nothing changed; the runs
read the second."""

from __future__ import annotations

from assets._resources import BuildSettings
from assets._settings import (
    SETTINGS_FILE,
    inputs_sha256,
    run_fingerprint,
    values_from_env,
)
from synthesis import codec


def test_the_plain_settings_have_the_resources_fields_and_defaults(tmp_path, monkeypatch):
    for name in [
        "ENVFOUNDRY_PROFILE", "ENVFOUNDRY_SEED", "ENVFOUNDRY_SANDBOX", "ENVFOUNDRY_CATALOGUE",
        "ENVFOUNDRY_CORPUS", "ENVFOUNDRY_ENVS", "ENVFOUNDRY_HOLDOUT_ARCHETYPES",
    ]:  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))  # no settings file there
    plain = values_from_env()
    resource = BuildSettings.model_fields
    assert list(plain) == list(resource)
    for name, value in plain.items():
        if name != "home":  # the home's default is where it is, not "var"
            assert value == resource[name].get_default(call_default_factory=True), name


def test_both_read_the_same_settings_and_hash_them_alike(tmp_path, monkeypatch):
    catalogue = tmp_path / "topics.json"
    catalogue.write_text('{"topics": []}')
    codec.write_json(
        tmp_path / SETTINGS_FILE,
        {"profile": "tiny", "seed": 5, "holdout_archetypes": ["ledger"], "envs": []},
    )
    for name in ("ENVFOUNDRY_PROFILE", "ENVFOUNDRY_SEED", "ENVFOUNDRY_ENVS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    monkeypatch.setenv("ENVFOUNDRY_CATALOGUE", str(catalogue))
    monkeypatch.setenv("ENVFOUNDRY_SANDBOX", "process")
    plain, resource = values_from_env(), BuildSettings.from_env()
    assert plain == resource.model_dump()
    assert (plain["profile"], plain["seed"], plain["sandbox_backend"]) == ("tiny", 5, "process")
    assert inputs_sha256(plain) == resource.inputs_sha256
    assert run_fingerprint(plain) == resource.run_fingerprint
    monkeypatch.setenv("ENVFOUNDRY_SEED", "6")  # a setting that changes every stage
    assert run_fingerprint(values_from_env()) != run_fingerprint(plain)
