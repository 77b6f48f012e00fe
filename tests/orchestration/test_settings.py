"""The build settings without Dagster (orchestration/settings.py) are the resource's
(`BuildSettings`): the same fields and defaults, read from the same places, hashed alike. The
CLI fingerprints the first to decide that nothing changed; the runs read the second."""

from __future__ import annotations

import dataclasses

from orchestration.resources import BuildSettings
from orchestration.settings import SETTINGS_FILE, Settings
from synthesis import codec


def test_the_plain_settings_have_the_resources_fields_and_defaults():
    plain = {f.name: f for f in dataclasses.fields(Settings)}
    resource = BuildSettings.model_fields
    assert list(plain) == list(resource)
    for name, field in plain.items():
        default = field.default_factory() if callable(field.default_factory) else field.default
        assert default == resource[name].get_default(call_default_factory=True), name


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
    plain, resource = Settings.from_env(), BuildSettings.from_env()
    assert dataclasses.asdict(plain) == resource.model_dump()
    assert (plain.profile, plain.seed, plain.sandbox_backend) == ("tiny", 5, "process")
    assert plain.inputs_sha256 == resource.inputs_sha256
    assert plain.run_fingerprint == resource.run_fingerprint
    monkeypatch.setenv("ENVFOUNDRY_SEED", "6")  # a setting that changes every stage
    assert Settings.from_env().run_fingerprint != plain.run_fingerprint
