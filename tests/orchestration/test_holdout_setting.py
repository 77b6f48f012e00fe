"""`--holdout-archetypes`: checked before a build, carried like the other build settings."""

from __future__ import annotations

import io

from rich.console import Console

from assets._resources import BuildSettings
from assets._settings import SETTINGS_FILE
from orchestration import build_process, cli, console
from synthesis import codec
from synthesis.hashing import content_hash, sha256_file


def test_an_unknown_archetype_is_refused_naming_it():
    problem = build_process.preflight([], None, "auto", holdout_archetypes=["booking", "ledgr"])
    assert problem is not None and "ledgr" in problem and "unknown archetype" in problem
    assert "booking" in problem.split("known:")[1]  # the known ones are listed
    assert build_process.preflight([], None, "auto", holdout_archetypes=["booking"]) is None


def test_the_cli_refuses_a_bad_holdout_in_one_line_and_builds_nothing(tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(console, "terminal", Console(file=screen, width=200))
    home = tmp_path / "home"
    code = cli.main(["build", "--home", str(home), "--holdout-archetypes", "booking,nope"])
    assert code == 2
    out = screen.getvalue()
    assert out.count("\n") == 1 and "--holdout-archetypes" in out and "nope" in out
    assert not home.exists()


def test_settings_carry_the_holdout_and_it_enters_the_inputs_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    monkeypatch.delenv("ENVFOUNDRY_HOLDOUT_ARCHETYPES", raising=False)
    assert BuildSettings.from_env().holdout_archetypes == []
    codec.write_json(tmp_path / SETTINGS_FILE, {"profile": "tiny", "holdout_archetypes": ["x"]})
    assert BuildSettings.from_env().holdout_archetypes == ["x"]  # the UI runs as the build did
    monkeypatch.setenv("ENVFOUNDRY_HOLDOUT_ARCHETYPES", "ledger, booking")
    settings = BuildSettings.from_env()
    assert settings.holdout_archetypes == ["booking", "ledger"]
    plain = BuildSettings(profile="tiny", home=str(tmp_path))
    held = BuildSettings(profile="tiny", home=str(tmp_path), holdout_archetypes=["ledger"])
    assert held.inputs_sha256 != plain.inputs_sha256
    # A build without held-out archetypes hashes its inputs as before the option existed.
    catalogue = sha256_file(plain.catalogue_path)
    assert plain.inputs_sha256 == content_hash([plain.profile, catalogue, sorted(plain.envs)])
