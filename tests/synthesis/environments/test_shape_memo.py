"""Program shapes kept between builds: the same shapes as computing them, computed once."""

from __future__ import annotations

from synthesis import codec
from synthesis.environments.shape import program_shape
from synthesis.environments.shape_memo import ShapeMemo

CART = """
class Cart:
    def __init__(self):
        self.items = {}

    def add(self, sku: str, n: int = 1) -> dict:
        self.items[sku] = self.items.get(sku, 0) + n
        return {"success": True}
"""
LEDGER = """
class Ledger:
    def __init__(self):
        self.rows = []

    def post(self, amount: float) -> dict:
        if amount <= 0:
            return {"success": False}
        self.rows.append(amount)
        return {"success": True}
"""
BROKEN = "class Broken(:\n"


def _ask(memo: ShapeMemo) -> list[str | None]:
    return [memo.shape(CART, "Cart"), memo.shape(LEDGER, "Ledger"), memo.shape(BROKEN, "Broken")]


def test_kept_shapes_are_the_computed_ones_and_are_not_computed_again(tmp_path):
    path = tmp_path / "program_shapes.json"
    expected = [program_shape(CART, "Cart"), program_shape(LEDGER, "Ledger"), None]
    first = ShapeMemo(path)
    assert _ask(first) == expected and first.made == 3
    first.save()
    again = ShapeMemo(path)
    assert _ask(again) == expected and again.made == 0  # the unparsable one's None is kept too
    # Another class of the same source, or an edited source, is shaped anew.
    assert again.shape(CART, "Other") == program_shape(CART, "Other") and again.made == 1
    edited = CART.replace("self.items = {}", "self.items = {}\n        self.total = 0")
    assert again.shape(edited, "Cart") == program_shape(edited, "Cart") and again.made == 2


def test_the_file_keeps_only_what_the_last_build_asked(tmp_path):
    path = tmp_path / "program_shapes.json"
    memo = ShapeMemo(path)
    _ask(memo)
    memo.save()
    last = ShapeMemo(path)
    last.shape(LEDGER, "Ledger")
    last.save()
    assert list(codec.read_json(path).values()) == [program_shape(LEDGER, "Ledger")]


def test_a_file_that_does_not_read_is_made_again(tmp_path):
    path = tmp_path / "program_shapes.json"
    memo = ShapeMemo(path)
    _ask(memo)
    memo.save()
    path.write_bytes(path.read_bytes()[:20])  # cut off mid-write
    cut = ShapeMemo(path)
    assert _ask(cut)[:2] == [program_shape(CART, "Cart"), program_shape(LEDGER, "Ledger")]
    assert cut.made == 3
    # JSON under the right keys, but not shapes: none of it is trusted.
    memo.save()
    path.write_bytes(codec.dumps(dict.fromkeys(codec.read_json(path), 7)))
    wrong = ShapeMemo(path)
    assert wrong.shape(CART, "Cart") == program_shape(CART, "Cart") and wrong.made == 1
    # Nowhere to keep them: every shape computed, nothing written.
    nowhere = ShapeMemo(None)
    assert _ask(nowhere)[0] == program_shape(CART, "Cart")
    nowhere.save()
