"""Code fixes in a project folder: the team's tests fail, fix the module so they pass.

The folder's code (synthesis.environments.projects.code_project) has one bug; the request
says what a user notices (the symptom, never the line), which module to fix, and to leave
the package's other module alone. The gold
chain is what a careful developer does: look at the folder and the README, run the tests,
read the failing test, the module and the package's other module, look for other uses of
the function, write the fixed module, run the tests again, and run the package over the
real ledgers it is for. It is graded by running the code: the environment's state
reports whether the project's tests and the held-back cases pass, so the fixed module is
`judged_by` that state rather than by its text, and another right fix earns too.

The mistakes people make, each a chain that must fail: the test's own inputs special-cased
(the held-back cases fail), the wrong function changed, the fix that breaks another test,
the test changed to expect what the code gives, the failing test deleted (the guard that
only the module may change fails both).

Its declined twin (`DECLINED`) is the same request naming the module without the bug, and
leaving alone the one with it: no change to the module named makes the tests pass, and the
one that would is ruled out, so the right outcome is to look, change nothing and say which
test fails.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from synthesis.environments.projects.code_project import (
    MODULE_HEADS,
    ROOT,
    TEST_COMMAND,
    Case,
    CodeProject,
)
from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.ledgers import YEAR, Ledger
from synthesis.tasks.checks import AskedValue
from synthesis.tasks.projects.work import (
    OPENER_SHARE,
    OPENERS,
    Mistake,
    ProjectTask,
    Request,
    cat,
    look_around,
    refused_task,
    shell,
)

# Run as a developer runs them, with the timing line's duration cut: the same output in
# every replay (unittest prints "Ran 7 tests in 0.001s").
RUN_TESTS = shell(f"cd {ROOT} && {TEST_COMMAND} 2>&1 | sed 's/ in [0-9.]*s$//'")

REQUESTS = (
    "{Symptom}, and the tests in {root}/ fail too. Could you fix {module} so they pass?"
    " Please don't change the tests.",
    "Since the last change {symptom} - the tools' tests are failing as well. Fix {module}"
    " (not the tests) so they pass again, please.",
    "The tests in {root}/ are red: {symptom}. The bug is somewhere in {module}; fix it there"
    " and leave the tests alone.",
    "{Symptom}. I think it's {module}. Can you fix it so the tests under {root}/ pass again?"
    " Don't edit the tests.",
    "Our {ledger} tools are broken: {symptom}, and the test suite in {root}/ fails. Please"
    " fix the code in {module} - the tests themselves are right, don't touch them.",
)


# The user keeps the package's other module out of it: the fix goes in the module named
# and nowhere else. True of a feasible request (the bug is in the module named); a declined
# twin's user names the wrong one, so its fix is the change they rule out.
LEAVE = (
    "Leave {other} alone, it's fine.",
    "Don't touch {other} - it's fine and the other scripts use it.",
    "Please leave {other} as it is, that one is fine.",
    "And please keep {other} as it is, that one works.",
)


def _code_fix(project: Project, vocabulary: dict[str, Any], rng: random.Random) -> ProjectTask:
    code: CodeProject = project.parts["code_project"]
    bug = code.bug
    module = code.module_path(bug.module)
    text = _fix_request(code, bug.module, rng)
    smoke = _smoke_run(code, project.ledger)
    gold = _chain(code, {module: code.right_module()}, smoke)
    output = {"path": module, "judged_by": "state"}
    return ProjectTask("code_fix", text, gold, [output], _mistakes(code, smoke))


def _fix_request(code: CodeProject, module: str, rng: random.Random) -> str:
    """The request to fix `module` ("parse") so the tests pass, telling the bug's symptom,
    and to leave the package's other module as it is."""
    symptom = code.symptom(rng.choice(code.bug.symptoms))
    text = rng.choice(REQUESTS).format(
        symptom=symptom,
        Symptom=symptom[0].upper() + symptom[1:],
        module=code.module_path(module),
        root=ROOT,
        ledger=code.ledger.replace("_", " "),
    )
    if rng.random() < OPENER_SHARE:
        text = f"{rng.choice(OPENERS)} {text}"
    other = next(m for m in MODULE_HEADS if m != module)
    return f"{text} {rng.choice(LEAVE).format(other=code.module_path(other))}"


def _chain(
    code: CodeProject, writes: dict[str, str], smoke: dict[str, Any]
) -> list[dict[str, Any]]:
    """The developer's calls, with `writes` (path -> text) as the change and `smoke` the
    run of the package on the real ledgers once the tests pass."""
    bug = code.bug
    other = next(m for m in MODULE_HEADS if m != bug.module)
    return [
        *look_around(),
        RUN_TESTS,
        cat(code.test_path(bug.module)),
        cat(code.module_path(bug.module)),
        # The package's other module: what the smoke run calls beside the fixed function.
        cat(code.module_path(other)),
        {"tool": "grep", "args": {"pattern": bug.name, "folder": ROOT}},
        *({"tool": "write", "args": {"path": p, "text": t}} for p, t in writes.items()),
        RUN_TESTS,
        smoke,
    ]


_SMOKE = """import csv, glob, sys
from decimal import Decimal

sys.path.insert(0, "{root}")
from {package}.parse import month_of, parse_amount, quarter_of
from {package}.totals import is_counted, largest, quarter_months, round_cents

# Every function on the data it is for: each ledger's counted rows, by quarter and month.
found = {{}}
for path in sorted(glob.glob("data/{ledger}_{year}-[0-9][0-9].csv")):
    with open(path, newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            amount = parse_amount(row["{amount}"])
            if amount is not None and is_counted(row["{status}"]):
                months = found.setdefault(quarter_of(row["date"]), {{}})
                months.setdefault(month_of(row["date"]), []).append(amount)
for quarter, months in sorted(found.items()):
    amounts = [a for month in quarter_months(quarter) for a in months.get(month, [])]
    print("Q%d: rows of months %s, quarter_months %s" % (
        quarter, sorted(months), quarter_months(quarter)))
    print("  %d rows, total %s, largest %s" % (
        len(amounts), round_cents(sum(amounts, Decimal(0))),
        ", ".join(str(a) for a in largest(amounts, 3))))
"""


def _smoke_run(code: CodeProject, ledger: Ledger) -> dict[str, Any]:
    """A run of the package over the real ledgers the README says it is for, as the team's
    scripts use it: from the folder, with the package on the path, and with -B, as the README
    runs the tests (no byte code left in the shared folder)."""
    program = _SMOKE.format(
        root=ROOT,
        package=code.package,
        ledger=ledger.name,
        year=YEAR,
        amount=ledger.amount_field,
        status=ledger.status_field,
    )
    return shell(f"python3 -B - <<'PROGRAM'\n{program}PROGRAM\n")


def _mistakes(code: CodeProject, smoke: dict[str, Any]) -> list[Mistake]:
    bug = code.bug
    module, tests = code.module_path(bug.module), code.test_path(bug.module)
    neighbours = [f for f in code.functions if f.module == bug.module and f.name != bug.name]
    changes = {
        "special-cases the test's inputs": {
            module: code.module_text(bug.module, **{bug.name: _special_cased(code)})
        },
        "changes another function instead": {
            module: code.module_text(bug.module, **{neighbours[0].name: neighbours[0].other_right})
        },
        "changes the test to expect what the code gives": {
            tests: code.test_text(bug.module, expect=_as_the_code_gives(code))
        },
        "deletes the failing test": {tests: code.test_text(bug.module, skip=bug.name)},
    }
    broken_too = [f for f in neighbours if f.buggy is not None]
    if broken_too:
        other = broken_too[0]
        changes["fixes it and breaks another function"] = {
            module: code.module_text(
                bug.module, **{bug.name: bug.right, other.name: other.buggy or ""}
            )
        }
    return [Mistake(label, _chain(code, writes, smoke)) for label, writes in changes.items()]


def _special_cased(code: CodeProject) -> str:
    """The broken function answering the failing tests' own inputs and nothing else."""
    bug = code.bug
    guards = []
    for case in code.failing[bug.name]:
        arguments = case.call[len(bug.name) + 1 : -1]
        params = bug.params[0] if len(bug.params) == 1 else "(" + ", ".join(bug.params) + ")"
        given = arguments if len(bug.params) == 1 else f"({arguments})"
        guards.append(f"    if {params} == {given}:\n        return {case.expected}\n")
    lines = (bug.buggy or "").splitlines(keepends=True)
    # After the def line and its one-line docstring, as a hurried patch goes in.
    return "".join(lines[:2]) + "".join(guards) + "".join(lines[2:])


def _as_the_code_gives(code: CodeProject) -> dict[str, str]:
    """The failing assertions rewritten to what the buggy code returns (or raises)."""
    bug = code.bug
    namespace: dict[str, Any] = {}
    exec(code.module_text(bug.module), namespace)  # our own generated source
    lines = {}
    for case in code.failing[bug.name]:
        try:
            value = eval(case.call, namespace)
        except Exception:
            arguments = case.call[len(bug.name) + 1 : -1]
            lines[case.call] = f"self.assertRaises(Exception, {bug.name}, {arguments})"
            continue
        lines[case.call] = _assertion_of(Case(case.call, _source(value)))
    return lines


def _assertion_of(case: Case) -> str:
    if case.expected in ("True", "False"):
        return f"self.assert{case.expected}({case.call})"
    return f"self.assertEqual({case.call}, {case.expected})"


def _source(value: Any) -> str:
    if isinstance(value, Decimal):
        return f'Decimal("{value}")'
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    return repr(value)


KINDS = (_code_fix,)


# --------------------------------------------------------------------------- declined twin
# The same request naming the module that has no bug: its tests pass, the failing test is
# the other module's, and the request rules that module out. No change to the module named
# makes the tests pass, and the one that would is the change the user forbids: the right
# outcome is to look (run the tests, the named module's alone, read it and the failing
# test), change nothing, and say which test fails and where.

# The failing tests' names, one a line, from the team's test run.
FAILING = shell(
    f"cd {ROOT} && {TEST_COMMAND} 2>&1 | sed -n 's/^[A-Z]*: \\(test_[a-z_]*\\) .*/\\1/p'"
)


def _wrong_module(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """`_code_fix`'s request for the module whose tests pass, leaving the one with the bug
    alone."""
    code: CodeProject = project.parts["code_project"]
    bug = code.bug
    module = next(m for m in MODULE_HEADS if m != bug.module)
    text = _fix_request(code, module, rng)
    path, tests = code.module_path(module), code.test_path(module)
    failing = code.test_path(bug.module)
    chain = [
        *look_around(),
        RUN_TESTS,
        # The named module's tests alone: they pass.
        shell(f"cd {ROOT} && {TEST_COMMAND} -p test_{module}.py 2>&1 | sed 's/ in [0-9.]*s$//'"),
        cat(path),
        cat(tests),
        cat(failing),
        cat(code.module_path(bug.module)),
        FAILING,
    ]
    test = f"test_{bug.name}"
    asked = AskedValue("the failing test", test + "\n", len(chain) - 1, ("data", "output"))
    reason = {
        "rule": f"no_failure:{module}",
        # The test that does fail, the other module's: its name, as the run printed it.
        "facts": [test],
        "texts": [],
        "told": False,
        "shows": [test],
    }
    because = (
        f"every test of {path} passes, so there is nothing in it to fix; the failing test"
        f" is {{fact}}, in {failing}, and you asked me to leave"
        f" {code.module_path(bug.module)} alone"
    )
    # What people change in the named module anyway: a function rewritten, which leaves the
    # tests failing as they were.
    inventions = [
        (f"rewrites {f.name} in {path} anyway", code.module_text(module, **{f.name: f.other_right}))
        for f in code.functions
        if f.module == module
    ][:2]
    request = Request(text, path, "", inventions)
    task = refused_task(
        "wrong_module",
        request,
        chain,
        asked,
        reason,
        because,
        rng,
        frame=False,
        what=f"change {path}",
    )
    # And the changes the request rules out: the fix in the module it leaves alone, the
    # failing test taken out.
    ruled_out = {
        f"fixes {bug.name} in the module the request leaves alone": {
            code.module_path(bug.module): code.right_module()
        },
        "deletes the failing test": {failing: code.test_text(bug.module, skip=bug.name)},
    }
    for label, writes in ruled_out.items():
        calls = [{"tool": "write", "args": {"path": p, "text": t}} for p, t in writes.items()]
        task.mistakes.append(Mistake(label, [*chain, *calls]))
    return task


# Each kind's declined twin (synthesis.tasks.projects.scenarios DECLINED).
DECLINED = {_code_fix: _wrong_module}
