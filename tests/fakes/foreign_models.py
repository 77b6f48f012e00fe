"""Foreign classes that keep their state in models, as tau2-bench's toolkits do: the
constructor takes a database typed as a pydantic model (or a dataclass), and tools return
models and enums. Read by tests/sandboxes/test_sandbox_foreign.py."""

from __future__ import annotations

import dataclasses
import enum

from pydantic import BaseModel


class Status(str, enum.Enum):  # noqa: UP042 - as tau2-bench writes its enums
    PENDING = "pending"
    SHIPPED = "shipped"


class Order(BaseModel):
    order_id: str
    item: str
    status: Status


class ShopDB(BaseModel):
    shop: str
    orders: dict[str, Order]


class ShopTools:
    """A toolkit over a pydantic database (the annotation is a string here: this module
    uses `from __future__ import annotations`)."""

    def __init__(self, db: ShopDB) -> None:
        self.db = db

    def get_order(self, order_id: str) -> Order:
        """The order with this id."""
        return self.db.orders[order_id]

    def ship_order(self, order_id: str) -> Status:
        """Ship a pending order."""
        order = self.db.orders[order_id]
        if order.status != Status.PENDING:
            raise ValueError("only a pending order ships")
        order.status = Status.SHIPPED
        return order.status


@dataclasses.dataclass
class Ledger:
    owner: str
    balance: int = 0


class LedgerTools:
    """A toolkit over a dataclass."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def deposit(self, amount: int) -> Ledger:
        """Add `amount` to the balance."""
        self.ledger.balance += amount
        return self.ledger


# Tool markers as tau2-bench's `tau2.environment.toolkit` sets them.
def is_tool(tool_type: str = "read", mutates_state: bool | None = None):
    def mark(function):
        function.__tool__ = True
        function.__tool_type__ = tool_type
        return function

    return mark


def is_discoverable_tool(tool_type: str = "read"):
    def mark(function):
        function.__tool__ = True
        function.__discoverable__ = True
        return function

    return mark


class ToolkitBase:
    """A toolkit's base, with public helpers of its own (defined in the same file here so the
    AST sees them too)."""

    def __init__(self, db: ShopDB) -> None:
        self.db = db

    def get_tools(self) -> list:
        """The names of the toolkit's tools."""
        return ["get_shop", "rename_shop"]


class MarkedShopTools(ToolkitBase):
    """Tools marked with a decorator: only they are tools, documented or not."""

    @is_tool("read")
    def get_shop(self) -> str:
        """The shop's name."""
        return self.db.shop

    @is_tool("write")
    def rename_shop(self, name: str):
        self.db.shop = name
        return name

    def summary(self) -> str:
        """A documented public helper, not marked: not a tool."""
        return f"{self.db.shop}: {len(self.db.orders)} orders"

    @is_discoverable_tool("write")
    def close_shop(self) -> str:
        """Hidden from an agent's prompt until discovered: not a tool here."""
        self.db.orders.clear()
        return "closed"
