"""Checks that read an output file by its format: `file_table` (a CSV/TSV file or the first
Markdown pipe table under the asked header) and `file_json` (a JSON or JSON-lines value).

A correct report passes however it writes its numbers and orders its rows; a report that
lists every candidate row, leaves the figures out, copies the input or is a cent off fails;
nothing a file holds makes the evaluator raise.
"""

from __future__ import annotations

import pytest

from synthesis.tasks.checks import describe_check
from synthesis.tasks.envfoundry_reward import CHECK_TYPES, GOAL, evaluate_check, grade, role_of
from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES

MD = "reports/2024-Q1_summary.md"
CSV = "reports/summary.csv"

TABLE = {
    "type": "file_table",
    "path": MD,
    "columns": ["region", "total_revenue"],
    "rows": [["North", 1234.5], ["South", 99.0], ["East", 0]],
    "ordered": False,
}


def _state(files: dict[str, object]) -> dict[str, object]:
    return {"__workspace__": {"files": files, "dirs": ["reports"]}}


def _passes(spec: dict, files: dict[str, object]) -> bool:
    return evaluate_check(spec, _state({}), _state(files))


def _table(**changes) -> dict:
    return {**TABLE, **changes}


def _md(rows: list[str], header: str = "| Region | Total revenue |") -> str:
    return "\n".join(
        [
            "# Q1 2024 summary",
            "",
            "Revenue per region for the first quarter, from the ledger.",
            "",
            header,
            "|:-------|------------:|",
            *rows,
            "",
            "Figures in USD.",
            "",
        ]
    )


GOOD_ROWS = ["| South | $99.00 |", "| East | 0 |", "| North | $1,234.50 |"]


# --------------------------------------------------------------------------- file_table


def test_a_correct_markdown_report_passes_however_it_writes_numbers_and_orders_rows():
    assert _passes(TABLE, {MD: _md(GOOD_ROWS)})


def test_the_same_report_as_csv_passes():
    text = 'Region,Total revenue\nSouth,99\nNorth,"$1,234.50"\nEast,0.00\n'
    assert _passes(_table(path=CSV), {CSV: text})


def test_a_tsv_file_is_tab_separated():
    text = "region\ttotal_revenue\nNorth\t1234.5\nSouth\t99\nEast\t0\n"
    assert _passes(_table(path="reports/summary.tsv"), {"reports/summary.tsv": text})
    # Read with commas it would be one column: a .tsv is not read as a CSV.
    assert not _passes(
        _table(path="reports/summary.tsv"), {"reports/summary.tsv": text.replace("\t", ",")}
    )


def test_ordered_fails_on_reordered_rows_and_passes_in_order():
    assert not _passes(_table(ordered=True), {MD: _md(GOOD_ROWS)})
    in_order = ["| North | 1234.50 |", "| South | 99 |", "| East | 0 |"]
    assert _passes(_table(ordered=True), {MD: _md(in_order)})


def test_the_right_columns_without_the_numbers_fail():
    empty = ["| North |  |", "| South |  |", "| East |  |"]
    words = ["| North | see ledger |", "| South | TBD |", "| East | none |"]
    assert not _passes(TABLE, {MD: _md(empty)})
    assert not _passes(TABLE, {MD: _md(words)})


def test_every_expected_row_plus_another_fails():
    candidates = [*GOOD_ROWS, "| West | 310.00 |"]
    assert not _passes(TABLE, {MD: _md(candidates)})


def test_a_row_written_twice_fails():
    assert not _passes(TABLE, {MD: _md([*GOOD_ROWS, GOOD_ROWS[0]])})


def test_a_missing_row_fails():
    assert not _passes(TABLE, {MD: _md(GOOD_ROWS[:2])})


def test_the_input_csv_copied_as_the_output_fails():
    ledger = "date,region,amount\n2024-01-05,North,1000.00\n2024-02-11,North,234.50\n"
    ledger += "2024-03-02,South,99.00\n2024-03-09,East,0\n"
    assert not _passes(_table(path=CSV), {CSV: ledger})


def test_a_number_a_cent_off_fails_and_within_half_a_cent_passes():
    off = ["| South | 99.00 |", "| East | 0 |", "| North | 1,234.51 |"]
    close = ["| South | 99.00 |", "| East | 0 |", "| North | 1,234.504 |"]
    assert not _passes(TABLE, {MD: _md(off)})
    assert _passes(TABLE, {MD: _md(close)})


def test_the_first_table_with_the_asked_header_is_the_one_read():
    wrong = ["| North | 1,000.00 |", "| South | 99.00 |", "| East | 0 |"]
    text = _md(wrong) + "\nCorrected:\n\n" + _md(GOOD_ROWS)
    # A report that writes two answers has not given one: the later right table earns nothing.
    assert not _passes(TABLE, {MD: text})
    # A table under another header is skipped, so the asked one after it is read.
    other = "| Month | Orders |\n|---|---|\n| Jan | 12 |\n\n"
    assert _passes(TABLE, {MD: other + _md(GOOD_ROWS)})


def test_header_names_match_whatever_their_case_spaces_underscores_or_dashes():
    for header in (
        "| REGION | Total-Revenue |",
        "region | total_revenue",
        "|Region|total  revenue|",
    ):
        assert _passes(TABLE, {MD: _md(GOOD_ROWS, header=header)}), header
    assert not _passes(TABLE, {MD: _md(GOOD_ROWS, header="| Region | Revenue |")})
    three = ["| North | 1234.5 | x |", "| South | 99 | x |", "| East | 0 | x |"]
    text = _md(three, header="| Region | Total revenue | Note |").replace(
        "|:-------|------------:|", "|---|---|---|"
    )
    assert not _passes(TABLE, {MD: text})  # an extra column is another header


def test_leading_and_trailing_pipes_are_optional_and_an_escaped_pipe_is_text():
    rows = ["South | 99", "East | 0", "North | 1234.5"]
    assert _passes(TABLE, {MD: _md(rows, header="Region | Total revenue")})
    spec = _table(rows=[["A|B", 1]], columns=["name", "n"])
    assert _passes(spec, {MD: "| name | n |\n|---|---|\n| A\\|B | 1 |\n"})


def test_a_blank_line_ends_the_table():
    split = _md(GOOD_ROWS[:2]).replace("\n\nFigures in USD.", "\n\n" + GOOD_ROWS[2] + "\n")
    assert not _passes(TABLE, {MD: split})  # the third row is no longer in the table


def test_a_line_without_a_pipe_ends_the_table():
    # Prose right under the table is no row (GitHub would make it a ragged one-cell row).
    assert _passes(TABLE, {MD: _md(GOOD_ROWS).replace("\n\nFigures", "\nFigures")})
    text = _md([*GOOD_ROWS[:2], "Figures in USD.", GOOD_ROWS[2]])
    assert not _passes(TABLE, {MD: text})  # so a row after it is no longer in the table


def test_ragged_rows_fail():
    ragged = ["| South | 99.00 |", "| East | 0 | extra |", "| North | 1234.5 |"]
    assert not _passes(TABLE, {MD: _md(ragged)})
    assert not _passes(
        _table(path=CSV), {CSV: "region,total_revenue\nNorth,1234.5,\nSouth,99\nEast,0\n"}
    )


def test_strings_are_case_folded_and_trimmed_but_must_be_the_same_word():
    assert _passes(TABLE, {MD: _md(["|  south | 99 |", "| EAST | 0 |", "| north | 1234.5 |"])})
    assert not _passes(
        TABLE, {MD: _md(["| Southwest | 99 |", "| East | 0 |", "| North | 1234.5 |"])}
    )


def test_a_number_cell_must_be_a_number_as_people_write_it():
    spec = _table(columns=["item", "amount"], rows=[["a", 15]])

    def cell(text: str) -> bool:
        return _passes(spec, {MD: f"| item | amount |\n|---|---|\n| a | {text} |\n"})

    for written in ("15", "15.00", "$15", "€ 15", "15£", "+15", "15%"):
        assert cell(written), written
    # "1,5" is a decimal comma or a typo, never fifteen; words and non-numbers fail.
    for written in ("1,5", "fifteen", "15 apples", "nan", "", "0x0f", "1.5e1"):
        assert not cell(written), written
    negative = _table(columns=["item", "amount"], rows=[["a", -1234.5]])
    for written in ("-1,234.50", "-$1,234.50", "$-1,234.50", "\u22121 234.50"):
        assert _passes(negative, {MD: f"| item | amount |\n|---|---|\n| a | {written} |\n"}), (
            written
        )


def test_whole_numbers_compare_exactly():
    # An id or a count is no nearly-right figure, however big (the relative slack is for floats).
    spec = _table(columns=["account", "n"], rows=[[12345678901, 3]])
    assert _passes(spec, {MD: "| account | n |\n|---|---|\n| 12345678901 | 3 |\n"})
    assert not _passes(spec, {MD: "| account | n |\n|---|---|\n| 12345678902 | 3 |\n"})


def test_an_empty_expected_cell_is_empty_a_dash_or_na():
    spec = _table(columns=["region", "note"], rows=[["North", None]])
    for written in ("", "-", "N/A", " n/a "):
        assert _passes(spec, {MD: f"| region | note |\n|---|---|\n| North | {written} |\n"}), (
            written
        )
    assert not _passes(spec, {MD: "| region | note |\n|---|---|\n| North | 0 |\n"})


def test_a_row_fitting_two_expected_rows_does_not_block_the_pairing():
    # 1.004 is within half a cent of both 1.0 and 1.008, 1.0 only of 1.0: a greedy pairing
    # would give 1.004 to 1.0 and fail; the table is right.
    spec = _table(columns=["k", "v"], rows=[["a", 1.0], ["a", 1.008]])
    assert _passes(spec, {MD: "| k | v |\n|---|---|\n| a | 1.004 |\n| a | 1.0 |\n"})
    assert not _passes(spec, {MD: "| k | v |\n|---|---|\n| a | 1.0 |\n| a | 1.0 |\n"})


def test_a_boolean_cell_is_true_yes_or_false_no_never_a_number():
    spec = _table(columns=["region", "paid"], rows=[["North", True], ["South", False]])

    def table(a: str, b: str) -> str:
        return f"| region | paid |\n|---|---|\n| North | {a} |\n| South | {b} |\n"

    assert _passes(spec, {MD: table("Yes", "no")})
    assert _passes(spec, {MD: table("TRUE", "false")})
    assert not _passes(spec, {MD: table("1", "0")})
    assert not _passes(spec, {MD: table("yes", "yes")})


# --------------------------------------------------------------------------- file_json

JSON_PATH = "out/totals.json"
VALUE = {"quarter": "2024-Q1", "total": 2, "regions": [{"name": "North", "revenue": 1234.5}]}


def _json(value: dict, path: str = JSON_PATH) -> dict:
    return {"type": "file_json", "path": path, "value": value}


def test_json_equal_by_value_passes_with_other_key_order_and_2_as_2_0():
    text = (
        '{"regions": [{"revenue": 1234.50, "name": "North"}], "total": 2.0, "quarter": "2024-Q1"}'
    )
    assert _passes(_json(VALUE), {JSON_PATH: text})


def test_a_reordered_json_list_fails():
    spec = _json({"ids": [1, 2, 3]})
    assert _passes(spec, {JSON_PATH: '{"ids": [1, 2, 3]}'})
    assert not _passes(spec, {JSON_PATH: '{"ids": [3, 2, 1]}'})


def test_json_true_is_not_1_and_a_string_is_not_a_number():
    assert not _passes(_json({"ok": 1}), {JSON_PATH: '{"ok": true}'})
    assert not _passes(_json({"ok": True}), {JSON_PATH: '{"ok": 1}'})
    assert _passes(_json({"ok": True}), {JSON_PATH: '{"ok": true}'})
    assert not _passes(_json({"n": 5}), {JSON_PATH: '{"n": "5"}'})


def test_json_keys_must_be_exactly_the_expected_ones():
    assert not _passes(_json({"a": 1}), {JSON_PATH: '{"a": 1, "b": 2}'})
    assert not _passes(_json({"a": 1, "b": 2}), {JSON_PATH: '{"a": 1}'})


def test_json_numbers_within_half_a_cent():
    assert _passes(_json({"v": 1234.5}), {JSON_PATH: '{"v": 1234.504}'})
    assert not _passes(_json({"v": 1234.5}), {JSON_PATH: '{"v": 1234.51}'})


def test_jsonl_is_the_list_of_its_lines():
    path = "out/rows.jsonl"
    spec = _json([{"id": 1}, {"id": 2}], path=path)
    assert _passes(spec, {path: '{"id": 1}\n\n{"id": 2.0}\n'})
    assert not _passes(spec, {path: '{"id": 1}\n'})
    assert not _passes(spec, {path: '[{"id": 1}, {"id": 2}]\n'})  # one line, one value


def test_invalid_json_fails():
    assert not _passes(_json(VALUE), {JSON_PATH: "{'quarter': '2024-Q1'}"})
    assert not _passes(_json([{"id": 1}], path="out/rows.jsonl"), {"out/rows.jsonl": '{"id": 1\n'})


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    ("spec", "final"),
    [
        (TABLE, _state({})),  # no file
        (TABLE, _state({MD: 12})),  # content not text
        (TABLE, _state({MD: None})),
        (TABLE, _state({MD: "no table here\n"})),
        (TABLE, _state({MD: "| a |\n"})),  # a pipe line, no separator
        (TABLE, {"__workspace__": "garbage"}),
        (TABLE, {"__workspace__": {"files": [], "dirs": []}}),
        (TABLE, {}),
        (TABLE, None),
        (_table(rows=[["North"], ["South", 99.0]]), _state({MD: _md(GOOD_ROWS)})),  # ragged spec
        (_table(rows="North"), _state({MD: _md(GOOD_ROWS)})),
        (_table(columns="region"), _state({MD: _md(GOOD_ROWS)})),
        (_table(columns=[1, 2]), _state({MD: _md(GOOD_ROWS)})),
        (_table(columns=[]), _state({MD: _md(GOOD_ROWS)})),
        (_table(path=["x"]), _state({MD: _md(GOOD_ROWS)})),
        ({"type": "file_table", "path": MD}, _state({MD: _md(GOOD_ROWS)})),  # no columns
        (_table(path=CSV), _state({CSV: "region,total_revenue\n" + "x" * 200_000 + ",1\n"})),
        (_table(path=CSV), _state({CSV: 'region,total_revenue\n"North,1\n'})),
        (_table(path=CSV), _state({CSV: "region,total_revenue\nNo\x00rth,1\n"})),
        (
            _table(rows=[["North", 10**400]]),
            _state({MD: "| region | total_revenue |\n|-|-|\n| North | 1.5 |\n"}),
        ),
        (_json(VALUE), _state({})),
        (_json(VALUE), _state({JSON_PATH: b"{}"})),
        (_json(VALUE), _state({JSON_PATH: "[" * 100_000})),  # nested past the parser's depth
        (_json(VALUE), _state({JSON_PATH: "1" * 5000})),  # past int()'s digit limit
        (
            _json({"v": 1.5}),
            _state({JSON_PATH: '{"v": ' + "9" * 400 + "}"}),
        ),  # int too big for a float
        (_json(VALUE, path=None), _state({JSON_PATH: "{}"})),
        ({"type": "file_json", "path": JSON_PATH}, _state({JSON_PATH: "{}"})),  # no value
    ],
)
def test_garbage_fails_and_never_raises(spec, final):
    assert evaluate_check(spec, _state({}), final) is False


# --------------------------------------------------------------------------- registration


def test_both_types_are_registered_described_and_goals():
    for kind in ("file_table", "file_json"):
        assert kind in CHECK_TYPES
        assert kind in WORKSPACE_CHECK_TYPES
        assert role_of({"type": kind}) == GOAL
    assert "exactly the expected 3 row(s), in any order" in describe_check(TABLE)
    assert describe_check(_json(VALUE)) == f"The file {JSON_PATH} holds the expected JSON value."


def test_a_report_task_earns_only_when_the_report_is_written():
    initial = _state({"data/ledger.csv": "date,region,amount\n"})
    final = _state({"data/ledger.csv": "date,region,amount\n", MD: _md(GOOD_ROWS)})
    guard = {"type": "no_other_file_changes", "files": [MD], "folders": []}
    assert grade([TABLE, guard], initial, final)[:2] == (1.0, True)
    assert grade([TABLE, guard], initial, initial)[:2] == (0.0, False)  # doing nothing
