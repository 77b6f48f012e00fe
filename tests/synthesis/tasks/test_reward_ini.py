"""`file_ini` in the shipped reward module: an INI file read by its values as the program it
configures reads it (configparser, interpolation off), every section and key compared, so a
right file in another layout passes and a wrong value hidden behind a right comment does not.
"""

from __future__ import annotations

import pytest

from synthesis.tasks.checks import describe_check
from synthesis.tasks.envfoundry_reward import (
    CHECK_TYPES,
    GOAL,
    REWARD_RULE_VERSION,
    evaluate_check,
    role_of,
)
from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES

PATH = "config/app.ini"
SECTIONS = {
    "defaults": {"workers": 2, "debug": False, "schedule": "02:30", "export_dir": "exports/x"},
    "production": {"workers": 12, "debug": False, "ratio": 0.75},
}
SPEC = {"type": "file_ini", "path": PATH, "sections": SECTIONS}
GOOD = """; the job's settings
[defaults]
workers = 2
debug = false
schedule = 02:30
export_dir = exports/x

[production]
# raised in March
workers = 12
debug = false
ratio = 0.75
"""


def _state(text) -> dict:
    files = {} if text is None else {PATH: text}
    return {"__workspace__": {"files": files, "dirs": ["config"], "symlinks": {}, "skipped": {}}}


def _passes(text, spec=SPEC) -> bool:
    return evaluate_check(spec, _state(None), _state(text))


def test_the_file_as_written_passes():
    assert _passes(GOOD)


def test_layout_comments_key_order_and_boolean_words_are_free():
    other = (
        "\ufeff[production]\r\nRATIO=0.750\r\ndebug : no\r\nWorkers = 12\r\n\r\n"
        "[defaults]\r\nexport_dir   =   exports/x\r\nschedule = 02:30\r\ndebug = Off\r\n"
        "workers = 02\r\n"
    )
    assert _passes(other)
    assert _passes(GOOD.replace("debug = false", "debug = 0"))
    assert _passes(GOOD.replace("debug = false", "debug = False"))


def test_the_expected_text_in_a_comment_does_not_count():
    wrong = GOOD.replace("workers = 12", "# workers = 12\nworkers = 16")
    assert not _passes(wrong)
    assert not _passes(GOOD.replace("workers = 12", "; workers = 12"))  # the key gone


def test_a_repeated_section_or_key_fails_as_configparser_refuses_it():
    assert not _passes(GOOD + "\n[production]\nworkers = 12\n")
    assert not _passes(GOOD.replace("workers = 12", "workers = 12\nworkers = 16"))
    # Keys are case-insensitive to configparser: `Workers` repeats `workers`.
    assert not _passes(GOOD.replace("workers = 12", "workers = 12\nWorkers = 12"))


def test_section_names_are_exact_keys_are_not():
    assert not _passes(GOOD.replace("[production]", "[Production]"))
    assert _passes(GOOD.replace("workers = 12", "WORKERS = 12"))
    upper = {
        **SPEC,
        "sections": {**SECTIONS, "production": {"Workers": 12, "debug": False, "ratio": 0.75}},
    }
    assert _passes(GOOD, upper)


def test_a_missing_or_extra_key_or_section_fails():
    assert not _passes(GOOD.replace("ratio = 0.75\n", ""))
    assert not _passes(GOOD + "retries = 3\n")
    assert not _passes(GOOD + "\n[staging]\nworkers = 1\n")
    assert not _passes(GOOD.split("\n[production]")[0] + "\n")
    # [DEFAULT] is no shortcut: its keys would reach every section, so it is a section here.
    assert not _passes("[DEFAULT]\nworkers = 2\n" + GOOD)


def test_values_are_read_by_their_expected_type():
    assert not _passes(GOOD.replace("workers = 12", "workers = 12.0"))  # getint refuses it
    assert not _passes(GOOD.replace("workers = 12", "workers = twelve"))
    assert not _passes(GOOD.replace("workers = 12", 'workers = "12"'))
    assert not _passes(GOOD.replace("workers = 12", "workers = 12 ; the most"))  # no inline
    assert not _passes(GOOD.replace("debug = false\nratio", "debug = disabled\nratio"))
    assert not _passes(GOOD.replace("debug = false\nratio", "debug = true\nratio"))
    assert _passes(GOOD.replace("ratio = 0.75", "ratio = 0.7549"))  # within half a cent
    assert not _passes(GOOD.replace("ratio = 0.75", "ratio = 0.76"))
    assert not _passes(GOOD.replace("schedule = 02:30", "schedule = 2:30"))  # text exactly
    assert not _passes(GOOD.replace("exports/x", "Exports/X"))


def test_interpolation_is_off():
    spec = {"type": "file_ini", "path": PATH, "sections": {"a": {"dir": "%(home)s/x", "n": 1}}}
    assert _passes("[a]\ndir = %(home)s/x\nn = 1\n", spec)
    assert not _passes("[a]\nhome = /srv\ndir = %(home)s/x\nn = 1\n", spec)


@pytest.mark.parametrize(
    "text",
    [
        None,  # no file
        "",
        "workers = 12\n",  # a key before any section
        "OK: config/app.ini: 0 problem(s)\n",  # the validator's output
        "[production\nworkers = 12\n",
        "{}",
        "[production]\n" + "x" * 200_000 + "\n",
        "[a]\nn = " + "1" * 5000 + "\n",  # past int()'s digit limit
        12,
        b"[defaults]\n",
    ],
)
def test_garbage_fails_and_never_raises(text):
    assert evaluate_check(SPEC, _state(None), _state(text)) is False


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "file_ini", "path": PATH},
        {"type": "file_ini", "path": PATH, "sections": {}},
        {"type": "file_ini", "path": PATH, "sections": ["defaults"]},
        {"type": "file_ini", "path": PATH, "sections": {"defaults": 2}},
        {"type": "file_ini", "path": ["x"], "sections": SECTIONS},
    ],
)
def test_a_malformed_spec_fails(spec):
    assert evaluate_check(spec, _state(None), _state(GOOD)) is False


def test_registered_described_a_goal_and_a_new_rule_version():
    assert "file_ini" in CHECK_TYPES and "file_ini" in WORKSPACE_CHECK_TYPES
    assert role_of({"type": "file_ini"}) == GOAL
    assert REWARD_RULE_VERSION == 7
    assert describe_check(SPEC) == (
        "The file config/app.ini reads, as Python's configparser reads it, as exactly the "
        "expected 2 section(s) and 7 setting(s), each with its expected value."
    )
