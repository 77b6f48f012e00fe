"""Several tables' gates shared with a forked child: the same verdicts, and none lost."""

from __future__ import annotations

import dataclasses
import os

import pyarrow as pa
import pytest
from test_warehouse import env_of, unproven_world, world_tables

from assets.warehouse import GATED_TABLES
from quality import gates
from quality.expectations import GateResult, validate
from synthesis.export import warehouse as wh
from tests.fakes.forks import record_forks


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    world = world_tables()
    return {name: world[name] for name in GATED_TABLES}


def _timeless(result: GateResult) -> GateResult:
    return dataclasses.replace(result, seconds=0.0)


def test_the_verdicts_are_those_of_one_suite_after_another(tables):
    # An unproven published scenario: the scenarios gate fails (with its details), the
    # others pass, whichever process ran them.
    world = unproven_world(gold_pass=True, noop_fail=False)
    selftests = wh.check_selftest_rows(world["check_selftests"], env_of(world))
    related = {"scenarios": {"check_selftests": selftests}}
    shared = gates.validate_tables(tables, related=related)
    alone = {name: validate(name, tables[name], related=related.get(name)) for name in tables}
    assert list(shared) == GATED_TABLES
    assert {n: _timeless(r) for n, r in shared.items()} == {
        n: _timeless(r) for n, r in alone.items()
    }
    assert [n for n, r in shared.items() if not r.success] == ["scenarios"]


def _where_run(name, data, related=None):
    return GateResult(suite=name, success=True, evaluated=os.getpid(), rows=len(data))


def test_the_child_runs_about_half_of_the_suites(tables, monkeypatch):
    monkeypatch.setattr(gates, "validate", _where_run)
    results = gates.validate_tables(tables)
    assert [r.suite for r in results.values()] == GATED_TABLES
    ran_by = {r.suite: r.evaluated for r in results.values()}
    theirs = [name for name, pid in ran_by.items() if pid != os.getpid()]
    assert sorted(theirs) == sorted(gates._their_share(tables))
    assert 3 <= len(theirs) <= 5, ran_by
    # One process: all here.
    alone = gates.validate_tables(tables, processes=1)
    assert {r.evaluated for r in alone.values()} == {os.getpid()}


@pytest.mark.parametrize("how", ["exits", "raises", "is killed"])
def test_a_child_that_fails_leaves_its_suites_to_the_parent(tables, monkeypatch, how):
    parent = os.getpid()

    def failing_in_the_child(name, data, related=None):
        if os.getpid() != parent:
            if how == "exits":
                os._exit(3)
            if how == "raises":
                raise RuntimeError("a broken suite")
            os.kill(os.getpid(), 9)
        return _where_run(name, data)

    monkeypatch.setattr(gates, "validate", failing_in_the_child)
    results = gates.validate_tables(tables)
    assert [r.suite for r in results.values()] == GATED_TABLES
    assert {r.evaluated for r in results.values()} == {parent}


def test_a_suite_that_raises_here_still_reaps_the_child(tables, monkeypatch):
    parent, children = os.getpid(), record_forks(monkeypatch)

    def raising_here(name, data, related=None):
        if os.getpid() == parent:
            raise RuntimeError(f"suite {name} broke")
        return _where_run(name, data)

    monkeypatch.setattr(gates, "validate", raising_here)
    with pytest.raises(RuntimeError, match="broke"):
        gates.validate_tables(tables)
    (pid,) = [child.pid for child in children]
    with pytest.raises(ChildProcessError):  # waited for already: no zombie left behind
        os.waitpid(pid, os.WNOHANG)
