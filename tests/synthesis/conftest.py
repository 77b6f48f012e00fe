"""Hand-written specs, contract classes and states for the scenario/check/rollout tests.

Two small worlds (an order shop and a booking desk) follow the EnvSpec semantics exactly as
the compiler implements them, so the planner, gold runs, checks and self-tests can be tested
before (and independently of) the compiler. tests/quality/test_selftest.py loads this file
by path, because pytest only shares conftest fixtures with tests below it.
"""

from __future__ import annotations

import copy

import pytest

from synthesis.hashing import sha256_text, short_id
from synthesis.models import (
    Effect,
    EntitySpec,
    Environment,
    EnvSpec,
    FieldSpec,
    InitialState,
    ParamSpec,
    Precondition,
    ToolInfo,
    ToolSpec,
)

# --------------------------------------------------------------------------- order shop

SHOP_SPEC = EnvSpec(
    env_id="env-shop-test",
    topic_id="topic-shop",
    archetype="order_lifecycle",
    class_name="ShopEnv",
    title="Tiny Tea Shop",
    description="A small online tea shop: customers, products with stock, and their orders.",
    entities=[
        EntitySpec(
            name="customer",
            collection="customers",
            id_prefix="CUS",
            label="customer",
            fields=[
                FieldSpec(name="name", type="str"),
                FieldSpec(name="email", type="str", unique=True),
            ],
            lookup_field="email",
        ),
        EntitySpec(
            name="product",
            collection="products",
            id_prefix="PRD",
            label="product",
            fields=[
                FieldSpec(name="name", type="str", unique=True),
                FieldSpec(name="price", type="float"),
                FieldSpec(name="stock", type="int"),
            ],
            lookup_field="name",
        ),
        EntitySpec(
            name="order",
            collection="orders",
            id_prefix="ORD",
            label="order",
            fields=[
                FieldSpec(name="customer_id", type="ref", ref="customer"),
                FieldSpec(name="product_id", type="ref", ref="product"),
                FieldSpec(name="quantity", type="int"),
                FieldSpec(name="total", type="float"),
                FieldSpec(
                    name="status",
                    type="enum",
                    values=["pending", "paid", "shipped", "delivered", "cancelled"],
                ),
            ],
            status_field="status",
            transitions={
                "pending": ["paid", "cancelled"],
                "paid": ["shipped", "cancelled"],
                "shipped": ["delivered"],
            },
            initial_status="pending",
        ),
    ],
    tools=[
        ToolSpec(
            name="find_customer_by_email",
            kind="query",
            operation="find",
            entity="customer",
            field="email",
            description="Find a customer by email address.",
            params=[ParamSpec(name="email", type="string", field="email")],
        ),
        ToolSpec(
            name="find_product_by_name",
            kind="query",
            operation="find",
            entity="product",
            field="name",
            description="Find a product by its name.",
            params=[ParamSpec(name="name", type="string", field="name")],
        ),
        ToolSpec(
            name="list_orders",
            kind="query",
            operation="list",
            entity="order",
            description="List orders, optionally filtered by customer or status.",
            params=[
                ParamSpec(
                    name="customer_id",
                    type="string",
                    required=False,
                    ref="customer",
                    field="customer_id",
                ),
                ParamSpec(name="status", type="string", required=False, field="status"),
            ],
        ),
        ToolSpec(
            name="get_order",
            kind="query",
            operation="get",
            entity="order",
            description="Get one order by id.",
            params=[ParamSpec(name="order_id", type="string", ref="order")],
        ),
        ToolSpec(
            name="create_order",
            kind="mutate",
            operation="create",
            entity="order",
            description="Place an order for a customer.",
            params=[
                ParamSpec(name="customer_id", type="string", ref="customer", field="customer_id"),
                ParamSpec(name="product_id", type="string", ref="product", field="product_id"),
                ParamSpec(name="quantity", type="integer", field="quantity", minimum=1),
            ],
            preconditions=[
                Precondition(
                    kind="param_positive", param="quantity", error="quantity must be positive"
                ),
                Precondition(
                    kind="ref_field_gte_param",
                    param="product_id",
                    field="stock",
                    other="quantity",
                    error="insufficient stock",
                ),
            ],
            effects=[
                Effect(
                    kind="adjust_ref_field",
                    via="product_id",
                    field="stock",
                    by_field="quantity",
                    sign=-1,
                )
            ],
            derived={"total": ["product_id", "price", "quantity"]},
        ),
        ToolSpec(
            name="pay_order",
            kind="mutate",
            operation="transition",
            entity="order",
            target_status="paid",
            description="Mark a pending order as paid.",
            params=[ParamSpec(name="order_id", type="string", ref="order")],
            preconditions=[
                Precondition(
                    kind="status_in", values=["pending"], error="only pending orders can be paid"
                )
            ],
        ),
        ToolSpec(
            name="ship_order",
            kind="mutate",
            operation="transition",
            entity="order",
            target_status="shipped",
            description="Ship a paid order.",
            params=[ParamSpec(name="order_id", type="string", ref="order")],
            preconditions=[
                Precondition(
                    kind="status_in", values=["paid"], error="only paid orders can be shipped"
                )
            ],
        ),
        ToolSpec(
            name="cancel_order",
            kind="mutate",
            operation="transition",
            entity="order",
            target_status="cancelled",
            description="Cancel a pending or paid order.",
            params=[ParamSpec(name="order_id", type="string", ref="order")],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["pending", "paid"],
                    error="order can no longer be cancelled",
                )
            ],
            effects=[
                Effect(
                    kind="adjust_ref_field",
                    via="product_id",
                    field="stock",
                    by_field="quantity",
                    sign=1,
                )
            ],
        ),
        ToolSpec(
            name="update_product_price",
            kind="mutate",
            operation="update",
            entity="product",
            field="price",
            description="Change the price of a product.",
            params=[
                ParamSpec(name="product_id", type="string", ref="product"),
                ParamSpec(name="price", type="number", field="price"),
            ],
            preconditions=[
                Precondition(kind="param_positive", param="price", error="price must be positive")
            ],
        ),
    ],
)

SHOP_CODE = '''
class ShopEnv:
    """A small online tea shop."""

    def __init__(self):
        self.customers = {}
        self.products = {}
        self.orders = {}

    def _next_id(self, collection, prefix):
        nums = [int(k.rsplit("-", 1)[1]) for k in collection if k.rsplit("-", 1)[1].isdigit()]
        return f"{prefix}-{(max(nums) if nums else 0) + 1:04d}"

    def find_customer_by_email(self, email: str) -> dict:
        """Find a customer by email address."""
        for rid in sorted(self.customers):
            if str(self.customers[rid]["email"]).lower() == str(email).lower():
                return {"success": True, "data": dict(self.customers[rid])}
        return {"success": False, "error": "customer not found"}

    def find_product_by_name(self, name: str) -> dict:
        """Find a product by its name."""
        for rid in sorted(self.products):
            if str(self.products[rid]["name"]).lower() == str(name).lower():
                return {"success": True, "data": dict(self.products[rid])}
        return {"success": False, "error": "product not found"}

    def list_orders(self, customer_id: str = None, status: str = None) -> dict:
        """List orders, optionally filtered by customer or status."""
        out = []
        for rid in sorted(self.orders):
            rec = self.orders[rid]
            if customer_id is not None and rec["customer_id"] != customer_id:
                continue
            if status is not None and rec["status"] != status:
                continue
            out.append(dict(rec))
        return {"success": True, "data": out}

    def get_order(self, order_id: str) -> dict:
        """Get one order by id."""
        if order_id not in self.orders:
            return {"success": False, "error": "order not found"}
        return {"success": True, "data": dict(self.orders[order_id])}

    def create_order(self, customer_id: str, product_id: str, quantity: int) -> dict:
        """Place an order for a customer."""
        if customer_id not in self.customers:
            return {"success": False, "error": "customer not found"}
        if product_id not in self.products:
            return {"success": False, "error": "product not found"}
        if not quantity > 0:
            return {"success": False, "error": "quantity must be positive"}
        product = self.products[product_id]
        if not product["stock"] >= quantity:
            return {"success": False, "error": "insufficient stock"}
        rid = self._next_id(self.orders, "ORD")
        rec = {"id": rid, "customer_id": customer_id, "product_id": product_id,
               "quantity": quantity, "total": round(product["price"] * quantity, 2),
               "status": "pending"}
        self.orders[rid] = rec
        product["stock"] = product["stock"] - quantity
        return {"success": True, "data": dict(rec)}

    def _transition(self, order_id, allowed, target, error, restock):
        if order_id not in self.orders:
            return {"success": False, "error": "order not found"}
        rec = self.orders[order_id]
        if rec["status"] not in allowed:
            return {"success": False, "error": error}
        rec["status"] = target
        if restock:
            product = self.products[rec["product_id"]]
            product["stock"] = product["stock"] + rec["quantity"]
        return {"success": True, "data": dict(rec)}

    def pay_order(self, order_id: str) -> dict:
        """Mark a pending order as paid."""
        return self._transition(order_id, ["pending"], "paid",
                                "only pending orders can be paid", False)

    def ship_order(self, order_id: str) -> dict:
        """Ship a paid order."""
        return self._transition(order_id, ["paid"], "shipped",
                                "only paid orders can be shipped", False)

    def cancel_order(self, order_id: str) -> dict:
        """Cancel a pending or paid order."""
        return self._transition(order_id, ["pending", "paid"], "cancelled",
                                "order can no longer be cancelled", True)

    def update_product_price(self, product_id: str, price: float) -> dict:
        """Change the price of a product."""
        if product_id not in self.products:
            return {"success": False, "error": "product not found"}
        if not price > 0:
            return {"success": False, "error": "price must be positive"}
        self.products[product_id]["price"] = price
        return {"success": True, "data": dict(self.products[product_id])}
'''

SHOP_STATE = {
    "customers": {
        "CUS-0001": {"id": "CUS-0001", "name": "Ada Lovelace", "email": "ada@example.com"},
        "CUS-0002": {"id": "CUS-0002", "name": "Alan Turing", "email": "alan@example.com"},
        "CUS-0003": {"id": "CUS-0003", "name": "Grace Hopper", "email": "grace@example.com"},
        "CUS-0004": {"id": "CUS-0004", "name": "Edsger Dijkstra", "email": "edsger@example.com"},
    },
    "products": {
        "PRD-0001": {"id": "PRD-0001", "name": "Sencha", "price": 12.5, "stock": 10},
        "PRD-0002": {"id": "PRD-0002", "name": "Earl Grey", "price": 8.0, "stock": 3},
        "PRD-0003": {"id": "PRD-0003", "name": "Oolong", "price": 15.25, "stock": 0},
        "PRD-0004": {"id": "PRD-0004", "name": "Rooibos", "price": 6.75, "stock": 7},
    },
    "orders": {
        "ORD-0001": {
            "id": "ORD-0001",
            "customer_id": "CUS-0001",
            "product_id": "PRD-0001",
            "quantity": 2,
            "total": 25.0,
            "status": "pending",
        },
        "ORD-0002": {
            "id": "ORD-0002",
            "customer_id": "CUS-0001",
            "product_id": "PRD-0002",
            "quantity": 1,
            "total": 8.0,
            "status": "paid",
        },
        "ORD-0003": {
            "id": "ORD-0003",
            "customer_id": "CUS-0002",
            "product_id": "PRD-0004",
            "quantity": 3,
            "total": 20.25,
            "status": "shipped",
        },
        "ORD-0004": {
            "id": "ORD-0004",
            "customer_id": "CUS-0003",
            "product_id": "PRD-0001",
            "quantity": 1,
            "total": 12.5,
            "status": "pending",
        },
        "ORD-0005": {
            "id": "ORD-0005",
            "customer_id": "CUS-0003",
            "product_id": "PRD-0004",
            "quantity": 1,
            "total": 6.75,
            "status": "paid",
        },
    },
}

# --------------------------------------------------------------------------- booking desk

BOOKING_SPEC = EnvSpec(
    env_id="env-booking-test",
    topic_id="topic-clinic",
    archetype="booking",
    class_name="ClinicDesk",
    title="Harbour Clinic",
    description="A clinic front desk: patients book appointment slots with practitioners.",
    entities=[
        EntitySpec(
            name="patient",
            collection="patients",
            id_prefix="PAT",
            label="patient",
            fields=[
                FieldSpec(name="name", type="str"),
                FieldSpec(name="email", type="str", unique=True),
            ],
            lookup_field="email",
        ),
        EntitySpec(
            name="practitioner",
            collection="practitioners",
            id_prefix="PRA",
            label="practitioner",
            fields=[FieldSpec(name="name", type="str", unique=True)],
            lookup_field="name",
        ),
        EntitySpec(
            name="slot",
            collection="slots",
            id_prefix="SLT",
            label="slot",
            fields=[
                FieldSpec(name="practitioner_id", type="ref", ref="practitioner"),
                FieldSpec(name="start", type="datetime"),
                FieldSpec(name="status", type="enum", values=["available", "booked"]),
            ],
            status_field="status",
        ),
        EntitySpec(
            name="booking",
            collection="bookings",
            id_prefix="BKG",
            label="appointment",
            fields=[
                FieldSpec(name="patient_id", type="ref", ref="patient"),
                FieldSpec(name="slot_id", type="ref", ref="slot"),
                FieldSpec(
                    name="status", type="enum", values=["confirmed", "cancelled", "completed"]
                ),
            ],
            status_field="status",
            transitions={"confirmed": ["cancelled", "completed"]},
            initial_status="confirmed",
        ),
    ],
    tools=[
        ToolSpec(
            name="find_patient_by_email",
            kind="query",
            operation="find",
            entity="patient",
            field="email",
            description="Find a patient by email.",
            params=[ParamSpec(name="email", type="string", field="email")],
        ),
        ToolSpec(
            name="find_practitioner_by_name",
            kind="query",
            operation="find",
            entity="practitioner",
            field="name",
            description="Find a practitioner by name.",
            params=[ParamSpec(name="name", type="string", field="name")],
        ),
        ToolSpec(
            name="list_slots",
            kind="query",
            operation="list",
            entity="slot",
            description="List slots, optionally for one practitioner or status.",
            params=[
                ParamSpec(
                    name="practitioner_id",
                    type="string",
                    required=False,
                    ref="practitioner",
                    field="practitioner_id",
                ),
                ParamSpec(name="status", type="string", required=False, field="status"),
            ],
        ),
        ToolSpec(
            name="list_bookings",
            kind="query",
            operation="list",
            entity="booking",
            description="List appointments, optionally for one patient.",
            params=[
                ParamSpec(
                    name="patient_id",
                    type="string",
                    required=False,
                    ref="patient",
                    field="patient_id",
                )
            ],
        ),
        ToolSpec(
            name="create_booking",
            kind="mutate",
            operation="create",
            entity="booking",
            description="Book a slot for a patient.",
            params=[
                ParamSpec(name="patient_id", type="string", ref="patient", field="patient_id"),
                ParamSpec(name="slot_id", type="string", ref="slot", field="slot_id"),
            ],
            preconditions=[
                Precondition(
                    kind="ref_field_equals",
                    param="slot_id",
                    field="status",
                    value="available",
                    error="slot is not available",
                )
            ],
            effects=[Effect(kind="set_ref_field", via="slot_id", field="status", value="booked")],
        ),
        ToolSpec(
            name="cancel_booking",
            kind="mutate",
            operation="transition",
            entity="booking",
            target_status="cancelled",
            description="Cancel a confirmed appointment.",
            params=[ParamSpec(name="booking_id", type="string", ref="booking")],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error="only confirmed appointments can be cancelled",
                )
            ],
            effects=[
                Effect(kind="set_ref_field", via="slot_id", field="status", value="available")
            ],
        ),
        ToolSpec(
            name="complete_booking",
            kind="mutate",
            operation="transition",
            entity="booking",
            target_status="completed",
            description="Mark a confirmed appointment completed.",
            params=[ParamSpec(name="booking_id", type="string", ref="booking")],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error="only confirmed appointments can be completed",
                )
            ],
        ),
    ],
)

BOOKING_CODE = '''
class ClinicDesk:
    """A clinic front desk."""

    def __init__(self):
        self.patients = {}
        self.practitioners = {}
        self.slots = {}
        self.bookings = {}

    def _find(self, coll, field, value, what):
        for rid in sorted(coll):
            if str(coll[rid][field]).lower() == str(value).lower():
                return {"success": True, "data": dict(coll[rid])}
        return {"success": False, "error": what + " not found"}

    def find_patient_by_email(self, email: str) -> dict:
        """Find a patient by email."""
        return self._find(self.patients, "email", email, "patient")

    def find_practitioner_by_name(self, name: str) -> dict:
        """Find a practitioner by name."""
        return self._find(self.practitioners, "name", name, "practitioner")

    def list_slots(self, practitioner_id: str = None, status: str = None) -> dict:
        """List slots, optionally for one practitioner or status."""
        out = [dict(self.slots[k]) for k in sorted(self.slots)
               if (practitioner_id is None or self.slots[k]["practitioner_id"] == practitioner_id)
               and (status is None or self.slots[k]["status"] == status)]
        return {"success": True, "data": out}

    def list_bookings(self, patient_id: str = None) -> dict:
        """List appointments, optionally for one patient."""
        out = [dict(self.bookings[k]) for k in sorted(self.bookings)
               if patient_id is None or self.bookings[k]["patient_id"] == patient_id]
        return {"success": True, "data": out}

    def create_booking(self, patient_id: str, slot_id: str) -> dict:
        """Book a slot for a patient."""
        if patient_id not in self.patients:
            return {"success": False, "error": "patient not found"}
        if slot_id not in self.slots:
            return {"success": False, "error": "slot not found"}
        if self.slots[slot_id]["status"] != "available":
            return {"success": False, "error": "slot is not available"}
        nums = [int(k.split("-")[1]) for k in self.bookings]
        rid = "BKG-%04d" % ((max(nums) if nums else 0) + 1)
        rec = {"id": rid, "patient_id": patient_id, "slot_id": slot_id, "status": "confirmed"}
        self.bookings[rid] = rec
        self.slots[slot_id]["status"] = "booked"
        return {"success": True, "data": dict(rec)}

    def cancel_booking(self, booking_id: str) -> dict:
        """Cancel a confirmed appointment."""
        rec = self.bookings.get(booking_id)
        if rec is None:
            return {"success": False, "error": "appointment not found"}
        if rec["status"] not in ["confirmed"]:
            return {"success": False, "error": "only confirmed appointments can be cancelled"}
        rec["status"] = "cancelled"
        self.slots[rec["slot_id"]]["status"] = "available"
        return {"success": True, "data": dict(rec)}

    def complete_booking(self, booking_id: str) -> dict:
        """Mark a confirmed appointment completed."""
        rec = self.bookings.get(booking_id)
        if rec is None:
            return {"success": False, "error": "appointment not found"}
        if rec["status"] not in ["confirmed"]:
            return {"success": False, "error": "only confirmed appointments can be completed"}
        rec["status"] = "completed"
        return {"success": True, "data": dict(rec)}
'''

BOOKING_STATE = {
    "patients": {
        "PAT-0001": {"id": "PAT-0001", "name": "Mary Shelley", "email": "mary@example.org"},
        "PAT-0002": {"id": "PAT-0002", "name": "John Keats", "email": "keats@example.org"},
        "PAT-0003": {"id": "PAT-0003", "name": "Percy Shelley", "email": "percy@example.org"},
    },
    "practitioners": {
        "PRA-0001": {"id": "PRA-0001", "name": "Dr Lee"},
        "PRA-0002": {"id": "PRA-0002", "name": "Dr Okafor"},
    },
    "slots": {
        "SLT-0001": {
            "id": "SLT-0001",
            "practitioner_id": "PRA-0001",
            "start": "2025-03-03T09:00",
            "status": "booked",
        },
        "SLT-0002": {
            "id": "SLT-0002",
            "practitioner_id": "PRA-0001",
            "start": "2025-03-03T10:00",
            "status": "available",
        },
        "SLT-0003": {
            "id": "SLT-0003",
            "practitioner_id": "PRA-0002",
            "start": "2025-03-03T09:00",
            "status": "booked",
        },
        "SLT-0004": {
            "id": "SLT-0004",
            "practitioner_id": "PRA-0002",
            "start": "2025-03-04T14:30",
            "status": "available",
        },
        "SLT-0005": {
            "id": "SLT-0005",
            "practitioner_id": "PRA-0001",
            "start": "2025-03-05T11:00",
            "status": "available",
        },
    },
    "bookings": {
        "BKG-0001": {
            "id": "BKG-0001",
            "patient_id": "PAT-0001",
            "slot_id": "SLT-0001",
            "status": "confirmed",
        },
        "BKG-0002": {
            "id": "BKG-0002",
            "patient_id": "PAT-0002",
            "slot_id": "SLT-0003",
            "status": "confirmed",
        },
    },
}

# --------------------------------------------------------------------------- builders

_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def tool_schema(tool: ToolSpec) -> dict:
    """The OpenAI function definition the analysis would derive for `tool`."""
    props = {}
    for p in tool.params:
        prop = {"type": _JSON_TYPES[p.type], "description": p.description or p.name}
        if p.enum:
            prop["enum"] = list(p.enum)
        props[p.name] = prop
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [p.name for p in tool.params if p.required],
            },
        },
    }


def make_environment(spec: EnvSpec, code: str) -> Environment:
    return Environment(
        env_id=spec.env_id,
        topic_id=spec.topic_id,
        archetype=spec.archetype,
        class_name=spec.class_name,
        code=code,
        code_sha256=sha256_text(code),
        tools=[ToolInfo(name=t.name, kind=t.kind, schema=tool_schema(t)) for t in spec.tools],
        spec=spec,
    )


def make_state(env: Environment, state: dict, seed: int = 0) -> InitialState:
    return InitialState(
        state_id=short_id("state", env.env_id, seed),
        env_id=env.env_id,
        seed=seed,
        state=copy.deepcopy(state),
    )


def sandbox_available() -> bool:
    try:
        import sandboxes
    except ImportError:
        return False
    # The folder exists before helper-1's package does: an empty namespace package imports.
    return all(hasattr(sandboxes, n) for n in ("run_episode", "WorkerPool", "open_session"))


@pytest.fixture
def sandbox() -> None:
    """Skip a test that must execute environment code while the sandbox package is absent."""
    if not sandbox_available():
        pytest.skip("sandboxes package (run_episode/WorkerPool/open_session) not available yet")


@pytest.fixture
def shop_env() -> Environment:
    return make_environment(SHOP_SPEC, SHOP_CODE)


@pytest.fixture
def shop_state(shop_env) -> InitialState:
    return make_state(shop_env, SHOP_STATE)


@pytest.fixture
def booking_env() -> Environment:
    return make_environment(BOOKING_SPEC, BOOKING_CODE)


@pytest.fixture
def booking_state(booking_env) -> InitialState:
    return make_state(booking_env, BOOKING_STATE)


@pytest.fixture(params=["shop", "booking"])
def world(request) -> tuple[Environment, InitialState]:
    if request.param == "shop":
        env = make_environment(SHOP_SPEC, SHOP_CODE)
        return env, make_state(env, SHOP_STATE)
    env = make_environment(BOOKING_SPEC, BOOKING_CODE)
    return env, make_state(env, BOOKING_STATE)


@pytest.fixture
def shop_spec() -> EnvSpec:
    return SHOP_SPEC.model_copy(deep=True)


@pytest.fixture
def booking_spec() -> EnvSpec:
    return BOOKING_SPEC.model_copy(deep=True)


@pytest.fixture
def hand_worlds():
    """This module, for tests that need its builders (importing `conftest` by name is fragile
    when several test folders have one)."""
    import sys

    return sys.modules[__name__]
