"""The team's code in a project folder: a small Python package it runs on its ledgers, with
its tests, and one bug that makes a test fail.

Under `tools/` the folder holds `<ledger>_tools/` (`parse.py` reads amounts and dates,
`totals.py` rounds, lists a quarter's months, tells which rows count and picks the largest)
and `tests/` (unittest, run from `tools/` with `python3 -m unittest discover -s tests`). Each
folder draws one bug from those people really write (the thousands separator left in, a
quarter's last month left out, banker's rounding where half up was meant, a quarter boundary
one month off, a missing strip(), a sort the wrong way round) and the values its tests use:
dates and quarters of the half year its ledgers cover, as a team tests on the data it has.

A fix is graded by running the code, not by reading it: the environment's state reports
whether the project's tests and a set of held-back cases pass (`verification_command`, run
by the class's state dumper, synthesis/environments/workspace_code.py). The held-back cases
are the environment's, never in the folder: a fix that only answers the tests' own inputs
fails them. They depend on the topic alone (its ledger name and statuses), so one class
grades every folder of its topic, whichever half year the folder covers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from synthesis.environments.projects.ledgers import MONTH_NAMES, Ledger

if TYPE_CHECKING:  # folder.py lists this part: imported when it runs
    from synthesis.environments.projects.folder import Part

ROOT = "tools"
# -B: no __pycache__ folders in a shared folder (and none for the folder's `grep` to trip on).
TEST_COMMAND = "python3 -B -m unittest discover -s tests"
# The state key the dumper reports while everything passes (absent otherwise: a folder's
# code is always seeded with its bug, so the initial state is the folder alone).
STATE_KEY = "project_tests"
PASSED = "ENVFOUNDRY-CODE-VERIFIED"
# The dates the visible tests use, by the half year the folder covers (`Ledger.half`): of
# `month_of`; of `quarter_of`, a quarter's last month (which its bug puts in the next one)
# and months its bug leaves alone. None is a held-back case's (`_hidden_cases`).
MONTH_DATES = {
    1: ["2024-03-15", "2024-06-01", "2024-02-29", "2024-05-20"],
    2: ["2024-09-15", "2024-12-02", "2024-08-31", "2024-11-20"],
}
QUARTER_ENDS = {
    1: ["2024-03-31", "2024-03-15", "2024-06-30", "2024-06-10"],
    2: ["2024-09-29", "2024-09-15", "2024-12-31", "2024-12-10"],
}
QUARTER_INSIDES = {
    1: ["2024-02-10", "2024-05-02", "2024-04-01", "2024-01-20"],
    2: ["2024-08-10", "2024-11-02", "2024-10-02", "2024-07-20"],
}


@dataclass(frozen=True)
class Case:
    """One call and what it must return, both as Python source."""

    call: str
    expected: str


@dataclass(frozen=True)
class Function:
    """One function of the package: the right source, another right way to write it, its
    bug (the source with it and what a user notices), and its test cases."""

    name: str
    module: str
    params: tuple[str, ...]
    right: str
    other_right: str
    buggy: str | None = None
    bug: str = ""
    symptoms: tuple[str, ...] = ()


def _functions(void: tuple[str, ...]) -> tuple[Function, ...]:
    return (
        Function(
            "parse_amount",
            "parse",
            ("text",),
            right='''def parse_amount(text):
    """The amount a cell holds ("1,234.50" -> Decimal("1234.50")); None for an empty cell."""
    text = text.strip().replace(",", "")
    if not text:
        return None
    return Decimal(text)
''',
            other_right='''def parse_amount(text):
    """The amount a cell holds ("1,234.50" -> Decimal("1234.50")); None for an empty cell."""
    cleaned = "".join(text.split()).replace(",", "")
    return Decimal(cleaned) if cleaned else None
''',
            buggy='''def parse_amount(text):
    """The amount a cell holds ("1,234.50" -> Decimal("1234.50")); None for an empty cell."""
    text = text.strip()
    if not text:
        return None
    return Decimal(text)
''',
            bug="the thousands separator is not stripped",
            symptoms=(
                "anything over a thousand makes the {ledger} totals crash",
                "amounts written with a comma (1,250.00 and so on) blow up the import",
                "the {ledger} script dies on the big amounts, the ones with a thousands comma",
            ),
        ),
        Function(
            "month_of",
            "parse",
            ("date",),
            right='''def month_of(date):
    """The month number of an ISO date ("2024-03-15" -> 3)."""
    return int(date.strip()[5:7])
''',
            other_right='''def month_of(date):
    """The month number of an ISO date ("2024-03-15" -> 3)."""
    return int(date.strip().split("-")[1])
''',
        ),
        Function(
            "quarter_of",
            "parse",
            ("date",),
            right='''def quarter_of(date):
    """The calendar quarter of an ISO date ("2024-05-02" -> 2)."""
    return (month_of(date) - 1) // 3 + 1
''',
            other_right='''def quarter_of(date):
    """The calendar quarter of an ISO date ("2024-05-02" -> 2)."""
    return (month_of(date) + 2) // 3
''',
            buggy='''def quarter_of(date):
    """The calendar quarter of an ISO date ("2024-05-02" -> 2)."""
    return month_of(date) // 3 + 1
''',
            bug="a quarter's last month is put in the next quarter",
            symptoms=(
                "{ledger} rows from {end} show up under Q{second}",
                "rows from the end of {end} land in the wrong quarter",
                "the quarter a row belongs to is off for {end} and {last}",
            ),
        ),
        Function(
            "round_cents",
            "totals",
            ("value",),
            right='''def round_cents(value):
    """`value` rounded to the cent, halves up (2.345 -> 2.35), as the accountant rounds."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)
''',
            other_right='''def round_cents(value):
    """`value` rounded to the cent, halves up (2.345 -> 2.35), as the accountant rounds."""
    return (value * 100).to_integral_value(rounding=ROUND_HALF_UP) / 100
''',
            buggy='''def round_cents(value):
    """`value` rounded to the cent, halves up (2.345 -> 2.35), as the accountant rounds."""
    return round(value, 2)
''',
            bug="banker's rounding instead of half up",
            symptoms=(
                "some {ledger} totals come out a cent short of the accountant's",
                "the rounding is off by a cent now and then",
                "a few totals are a cent lower than they should be",
            ),
        ),
        Function(
            "quarter_months",
            "totals",
            ("quarter",),
            right='''def quarter_months(quarter):
    """The months of a quarter (2 -> [4, 5, 6])."""
    return list(range(3 * quarter - 2, 3 * quarter + 1))
''',
            other_right='''def quarter_months(quarter):
    """The months of a quarter (2 -> [4, 5, 6])."""
    first = 3 * (quarter - 1) + 1
    return [first, first + 1, first + 2]
''',
            buggy='''def quarter_months(quarter):
    """The months of a quarter (2 -> [4, 5, 6])."""
    return list(range(3 * quarter - 2, 3 * quarter))
''',
            bug="a quarter's range stops one month short",
            symptoms=(
                "the Q{first} {ledger} report leaves {end} out",
                "the quarterly totals are missing the last month of the quarter",
                "Q{second} only adds up {second_short}",
            ),
        ),
        Function(
            "is_counted",
            "totals",
            ("status",),
            right='''def is_counted(status):
    """Whether a row with this status counts: void ones don't (case and spaces aside)."""
    return status.strip().lower() not in VOID
''',
            other_right='''def is_counted(status):
    """Whether a row with this status counts: void ones don't (case and spaces aside)."""
    return " ".join(status.split()).casefold() not in {v.casefold() for v in VOID}
''',
            buggy='''def is_counted(status):
    """Whether a row with this status counts: void ones don't (case and spaces aside)."""
    return status.lower() not in VOID
''',
            bug="the status is not stripped before it is compared",
            symptoms=(
                "rows marked {void} still get counted when the status has a stray space",
                "a {void} row with a trailing space sneaks into the totals",
                "void rows are counted again if the export pads the status",
            ),
        ),
        Function(
            "largest",
            "totals",
            ("amounts", "n"),
            right='''def largest(amounts, n):
    """The n largest amounts, largest first."""
    return sorted(amounts, reverse=True)[:n]
''',
            other_right='''def largest(amounts, n):
    """The n largest amounts, largest first."""
    return sorted(amounts, key=lambda amount: -amount)[:n]
''',
            buggy='''def largest(amounts, n):
    """The n largest amounts, largest first."""
    return sorted(amounts)[:n]
''',
            bug="the sort is the wrong way round",
            symptoms=(
                "the top {ledger} list shows the smallest amounts",
                "the largest-rows list comes out with the smallest ones",
                "our top-5 list is really a bottom-5",
            ),
        ),
    )


MODULE_HEADS = {
    "parse": '''"""Reading the {ledger} exports: amounts and dates."""

from decimal import Decimal
''',
    "totals": '''"""Totals for the {ledger} reports: rounding, quarters, rows that count."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
# Statuses whose rows count towards nothing (see the README).
VOID = {void}
''',
}
MODULE_DOCS = {
    "parse": "reads amounts and dates",
    "totals": "rounds, lists a quarter's months, tells which rows count, picks the largest",
}


def _visible_cases(
    name: str, rng: random.Random, vocabulary: dict[str, Any], ledger: Ledger
) -> tuple[list[Case], list[Case]]:
    """(cases the bug fails, cases it passes) of one function's test: drawn per folder, of
    the half year its ledgers cover, from pools the held-back cases (`_hidden_cases`) share
    nothing with; but a quarter's months, which they ask of every quarter, so a fix that
    answers only its folder's two quarters fails the others."""
    void = [v.lower() for v in vocabulary["void_statuses"]]
    counted = [s.lower() for s in vocabulary["statuses"]]
    if name == "parse_amount":
        big = rng.sample(["1,234.50", "2,500.00", "1,050.75", "3,999.99", "10,250.00"], 2)
        small = rng.choice(["12.50", "980.00", "0.75", "64.10"])
        return (
            [Case(f'parse_amount("{b}")', f'Decimal("{b.replace(",", "")}")') for b in big],
            [
                Case(f'parse_amount("{small}")', f'Decimal("{small}")'),
                Case('parse_amount("")', "None"),
            ],
        )
    if name == "month_of":
        dates = rng.sample(MONTH_DATES[ledger.half], 2)
        return [], [Case(f'month_of("{d}")', str(int(d[5:7]))) for d in dates]
    if name == "quarter_of":
        edge = rng.sample(QUARTER_ENDS[ledger.half], 2)
        inner = rng.sample(QUARTER_INSIDES[ledger.half], 2)
        return (
            [Case(f'quarter_of("{d}")', str((int(d[5:7]) - 1) // 3 + 1)) for d in edge],
            [Case(f'quarter_of("{d}")', str((int(d[5:7]) - 1) // 3 + 1)) for d in inner],
        )
    if name == "round_cents":
        # Halves whose cent is even: rounding half to even keeps them down.
        halves = rng.sample(["2.345", "7.665", "1.005", "4.125"], 2)
        other = rng.sample(["2.355", "19.999", "5.5", "8.001"], 2)
        return [_rounding(v) for v in halves], [_rounding(v) for v in other]
    if name == "quarter_months":
        quarters = rng.sample(ledger.quarters, 2)
        return [
            Case(f"quarter_months({q})", repr(list(range(3 * q - 2, 3 * q + 1)))) for q in quarters
        ], []
    if name == "is_counted":
        padded = rng.choice(void)
        return (
            [Case(f'is_counted("{padded} ")', "False")],
            [
                Case(f'is_counted("{rng.choice(counted)}")', "True"),
                Case(f'is_counted("{rng.choice(void).upper()}")', "False"),
            ],
        )
    if name == "largest":
        amounts = rng.sample(["5", "50", "20", "12.5", "75", "8"], 4)
        top = sorted(amounts, key=Decimal, reverse=True)[:2]
        listed = ", ".join(f'Decimal("{a}")' for a in amounts)
        return (
            [
                Case(
                    f"largest([{listed}], 2)", "[" + ", ".join(f'Decimal("{a}")' for a in top) + "]"
                )
            ],
            [Case('largest([Decimal("7")], 1)', '[Decimal("7")]')],
        )
    raise KeyError(name)


def _rounding(value: str) -> Case:
    cents = Decimal(value).quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
    return Case(f'round_cents(Decimal("{value}"))', f'Decimal("{cents}")')


def _hidden_cases(name: str, vocabulary: dict[str, Any]) -> list[Case]:
    """Cases the tests do not hold: a right fix passes them, one that answers only the
    tests' own inputs does not. Every bug fails at least one."""
    void = [v.lower() for v in vocabulary["void_statuses"]]
    counted = [s.lower() for s in vocabulary["statuses"]]
    return {
        "parse_amount": [
            Case('parse_amount("12,345.60")', 'Decimal("12345.60")'),
            Case('parse_amount(" 2,000 ")', 'Decimal("2000")'),
            Case('parse_amount("0.99")', 'Decimal("0.99")'),
            Case('parse_amount("  ")', "None"),
        ],
        "month_of": [Case('month_of("2024-11-30")', "11"), Case('month_of(" 2024-01-05")', "1")],
        "quarter_of": [
            Case('quarter_of("2024-09-30")', "3"),
            Case('quarter_of("2024-12-01")', "4"),
            Case('quarter_of("2024-10-01")', "4"),
            Case('quarter_of("2024-01-01")', "1"),
        ],
        "round_cents": [
            Case('round_cents(Decimal("0.125"))', 'Decimal("0.13")'),
            Case('round_cents(Decimal("10.005"))', 'Decimal("10.01")'),
            Case('round_cents(Decimal("3.14159"))', 'Decimal("3.14")'),
        ],
        "quarter_months": [
            Case("quarter_months(1)", "[1, 2, 3]"),
            Case("quarter_months(2)", "[4, 5, 6]"),
            Case("quarter_months(3)", "[7, 8, 9]"),
            Case("quarter_months(4)", "[10, 11, 12]"),
        ],
        "is_counted": [
            Case(f"is_counted({void[-1].upper() + '  '!r})", "False"),
            Case(f"is_counted({chr(9) + void[0]!r})", "False"),
            Case(f"is_counted({' ' + counted[0] + ' '!r})", "True"),
        ],
        "largest": [
            Case(
                'largest([Decimal("3"), Decimal("300"), Decimal("30"), Decimal("0.3")], 3)',
                '[Decimal("300"), Decimal("30"), Decimal("3")]',
            ),
            Case("largest([], 2)", "[]"),
        ],
    }[name]


@dataclass(frozen=True)
class CodeProject:
    """The truth of a folder's code: the package, the bug drawn, every function's sources
    and test cases; it writes the module and test files in any variant a task needs."""

    ledger: str
    package: str
    void: tuple[str, ...]
    quarters: tuple[int, int]  # the quarters of the half year the folder's ledgers cover
    functions: tuple[Function, ...]
    broken: str  # the function with the bug
    failing: dict[str, tuple[Case, ...]]  # function -> visible cases its bug fails
    passing: dict[str, tuple[Case, ...]]  # function -> visible cases its bug passes

    def function(self, name: str) -> Function:
        return next(f for f in self.functions if f.name == name)

    @property
    def bug(self) -> Function:
        return self.function(self.broken)

    def symptom(self, text: str) -> str:
        """One of the bug's `symptoms` as a user of this folder says it: of its ledger, a
        void status, and the quarters and months of the half year it holds."""
        first, second = self.quarters
        return text.format(
            ledger=self.ledger.replace("_", " "),
            void=self.void[0],
            first=first,
            second=second,
            end=MONTH_NAMES[3 * first - 1],
            last=MONTH_NAMES[3 * second - 1],
            second_short=f"{MONTH_NAMES[3 * second - 3]} and {MONTH_NAMES[3 * second - 2]}",
        )

    def module_path(self, module: str) -> str:
        return f"{ROOT}/{self.package}/{module}.py"

    def test_path(self, module: str) -> str:
        return f"{ROOT}/tests/test_{module}.py"

    def module_text(self, module: str, **sources: str) -> str:
        """A module's text: each function as the folder has it (the bug in place), or as
        `sources` gives it (function name -> its source)."""
        void = (
            "("
            + ", ".join(f'"{v}"' for v in self.void)
            + ("," if len(self.void) == 1 else "")
            + ")"
        )
        parts = [MODULE_HEADS[module].format(ledger=self.ledger, void=void)]
        for f in self.functions:
            if f.module == module:
                default = f.buggy if f.name == self.broken else f.right
                parts.append(sources.get(f.name, default))
        return "\n\n".join(parts)

    def right_module(self) -> str:
        """The broken function's module, fixed."""
        return self.module_text(self.bug.module, **{self.broken: self.bug.right})

    def test_text(self, module: str, skip: str = "", expect: dict[str, str] | None = None) -> str:
        """A module's test file: one test per function; `skip` leaves one test out and
        `expect` (a call -> the assertion line put instead) edits what a test expects."""
        names = [f.name for f in self.functions if f.module == module]
        lines = [
            f'"""Tests of {self.package}/{module}.py; from {ROOT}/: {TEST_COMMAND}"""',
            "",
            "import unittest",
            "from decimal import Decimal",
            "",
            f"from {self.package}.{module} import {', '.join(sorted(names))}",
            "",
            "",
            f"class {module.capitalize()}Test(unittest.TestCase):",
        ]
        tests = []
        for name in names:
            if name == skip:
                continue
            body = [f"    def test_{name}(self):"]
            for case in (*self.failing[name], *self.passing[name]):
                line = (expect or {}).get(case.call) or _assertion(case)
                body.append(f"        {line}")
            tests.append("\n".join(body))
        return (
            "\n".join(lines)
            + "\n"
            + "\n\n".join(tests)
            + ('\n\n\nif __name__ == "__main__":\n    unittest.main()\n')
        )


def _assertion(case: Case) -> str:
    if case.expected == "None":
        return f"self.assertIsNone({case.call})"
    if case.expected in ("True", "False"):
        return f"self.assert{case.expected}({case.call})"
    return f"self.assertEqual({case.call}, {case.expected})"


def package_name(vocabulary: dict[str, Any]) -> str:
    stem = "".join(c if c.isalnum() else "_" for c in str(vocabulary["ledger"]).lower())
    return f"{stem}_tools"


def code_project(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random) -> Part:
    """The part: the package with one drawn bug, its tests, and the README's section."""
    from synthesis.environments.projects.folder import Part

    void = tuple(v.lower() for v in vocabulary["void_statuses"])
    functions = _functions(void)
    package = package_name(vocabulary)
    broken = rng.choice([f.name for f in functions if f.buggy is not None])
    failing, passing = {}, {}
    for f in functions:
        fails, passes = _visible_cases(f.name, rng, vocabulary, ledger)
        failing[f.name], passing[f.name] = tuple(fails), tuple(passes)
    truth = CodeProject(
        ledger.name, package, void, ledger.quarters, functions, broken, failing, passing
    )
    files = {f"{ROOT}/{package}/__init__.py": f'"""Helpers for the {ledger.name} ledgers."""\n'}
    for module in MODULE_HEADS:
        files[truth.module_path(module)] = truth.module_text(module)
        files[truth.test_path(module)] = truth.test_text(module)
    readme = (
        "## The tools\n\n"
        f"`{ROOT}/{package}/` is the small Python package our scripts use on these exports "
        "(standard library only): "
        + "; ".join(f"`{m}.py` {MODULE_DOCS[m]}" for m in MODULE_HEADS)
        + f". Its tests are in `{ROOT}/tests/`; run them from `{ROOT}/`:\n\n"
        f"    cd {ROOT} && {TEST_COMMAND}\n\n"
        "(`-B` keeps `__pycache__` folders out of the shared folder.) Every test passes before "
        "a change goes in.\n"
    )
    return Part(files=files, truth=truth, readme=readme)


# --------------------------------------------------------------------------- verification


_VERIFY = """import sys, unittest
from decimal import Decimal

sys.path.insert(0, ".")
suite = unittest.defaultTestLoader.discover("tests")
result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(suite)
passed = result.wasSuccessful() and result.testsRun > 0 and not result.skipped
from {package}.parse import *  # noqa
from {package}.totals import *  # noqa
for call, expected in {cases!r}:
    try:
        passed = passed and eval(call) == eval(expected)
    except Exception:
        passed = False
print()
print("{marker}" if passed else "failed")
"""


def verification_command(vocabulary: dict[str, Any]) -> str:
    """The shell command the state dumper runs in the workspace: the project's tests as the
    team runs them, then the held-back cases, in one interpreter that writes no byte code
    (the script comes on stdin: nothing of it is in the folder). Its last line is `PASSED`
    only when every test and every case passes; an import that exits early prints nothing.

    The interpreter reads no user site-packages (-s: the workspace is the commands' HOME, so a
    usercustomize.py there would run first) and no PYTHON* variables (-E): what the tests see
    is the code's folder and the standard library, which the dumper's digest relies on."""
    cases = hidden_cases(vocabulary)
    script = _VERIFY.format(package=package_name(vocabulary), cases=cases, marker=PASSED)
    return f"cd {ROOT} && python3 -B -s -E - <<'VERIFY'\n{script}VERIFY\n"


def hidden_cases(vocabulary: dict[str, Any]) -> list[tuple[str, str]]:
    """(call, expected) of every held-back case (for tests and the planner's own checks)."""
    void = tuple(v.lower() for v in vocabulary["void_statuses"])
    return [
        (c.call, c.expected) for f in _functions(void) for c in _hidden_cases(f.name, vocabulary)
    ]
