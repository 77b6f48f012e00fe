"""Module-level default mutated in place: without a config the instance aliases DEFAULT_STATE's
lists, and tools return plain values (ints, bools, sets, lists, None or a refusal reason)."""

DEFAULT_STATE = {
    "items": [
        {"id": 1, "sku": "BOLT-M8", "name": "M8 hex bolt, box of 100", "zone": "ambient",
         "stock": {"A1": 40, "B2": 12}, "reorder_point": 30},
        {"id": 2, "sku": "NUT-M8", "name": "M8 nylon lock nut, box of 100", "zone": "ambient",
         "stock": {"A1": 25}, "reorder_point": 30},
        {"id": 3, "sku": "GLUE-PVA5", "name": "PVA wood glue 5 L", "zone": "ambient",
         "stock": {"B2": 18}, "reorder_point": 10},
        {"id": 4, "sku": "SEAL-SIL", "name": "Silicone sealant, clear", "zone": "ambient",
         "stock": {"B2": 6, "C1": 4}, "reorder_point": 12},
        {"id": 5, "sku": "EPOXY-2K", "name": "Two-part epoxy resin kit", "zone": "cold",
         "stock": {"R1": 9}, "reorder_point": 5},
        {"id": 6, "sku": "PRIMER-AQ", "name": "Water-based primer 2.5 L", "zone": "cold",
         "stock": {"R1": 3}, "reorder_point": 6},
        {"id": 7, "sku": "HINGE-75", "name": "Butt hinge 75 mm, pair", "zone": "ambient",
         "stock": {"C1": 60}, "reorder_point": 20},
        {"id": 8, "sku": "SCREW-4X40", "name": "Wood screw 4x40, box of 200", "zone": "ambient",
         "stock": {"A1": 15, "C1": 22}, "reorder_point": 25},
    ],
    "locations": {
        "A1": {"zone": "ambient", "capacity": 120},
        "B2": {"zone": "ambient", "capacity": 60},
        "C1": {"zone": "ambient", "capacity": 100},
        "R1": {"zone": "cold", "capacity": 30},
        "R2": {"zone": "cold", "capacity": 30},
    },
    "orders": [
        {"id": 501, "customer": "Brightline Joinery", "status": "open",
         "lines": [{"sku": "BOLT-M8", "qty": 10}, {"sku": "NUT-M8", "qty": 10}]},
        {"id": 502, "customer": "Harrow Kitchens", "status": "open",
         "lines": [{"sku": "HINGE-75", "qty": 24}, {"sku": "SCREW-4X40", "qty": 5}]},
        {"id": 503, "customer": "Coastline Boats", "status": "open",
         "lines": [{"sku": "EPOXY-2K", "qty": 12}]},
        {"id": 504, "customer": "Brightline Joinery", "status": "shipped",
         "lines": [{"sku": "GLUE-PVA5", "qty": 2}]},
        {"id": 505, "customer": "Mill Lane Decorators", "status": "open",
         "lines": [{"sku": "PRIMER-AQ", "qty": 2}, {"sku": "SEAL-SIL", "qty": 4}]},
    ],
    "movements": [],
}


class WarehouseInventory:
    def __init__(self, config: dict | None = None):
        source = DEFAULT_STATE if config is None else config
        self.items = source["items"]
        self.locations = source["locations"]
        self.orders = source["orders"]
        self.movements = source.get("movements", [])

    def _item(self, sku: str) -> dict | None:
        return next((i for i in self.items if i["sku"] == sku), None)

    def _used(self, location: str) -> int:
        return sum(i["stock"].get(location, 0) for i in self.items)

    @staticmethod
    def _refuse(reason: str) -> bool:
        """Refuse without touching the state; the reason only documents why."""
        return False

    def _log(self, sku: str, source: str | None, target: str | None, qty: int) -> None:
        next_id = max((m["id"] for m in self.movements), default=0) + 1
        self.movements.append({"id": next_id, "sku": sku, "from": source, "to": target,
                               "qty": qty})

    def list_items(self, location: str | None = None) -> list:
        """List stocked items, optionally only those held at one location.

        Args:
            location (str | None): Location code such as "A1"; None lists every item.
        """
        return [{"id": i["id"], "sku": i["sku"], "name": i["name"], "stock": dict(i["stock"])}
                for i in self.items if location is None or i["stock"].get(location, 0) > 0]

    def find_item(self, name_fragment: str) -> dict | None:
        """Find the first item whose name contains the given text.

        Args:
            name_fragment (str): Case-insensitive part of the item name.
        """
        frag = name_fragment.lower()
        return next((dict(i) for i in self.items if frag in i["name"].lower()), None)

    def get_stock_level(self, sku: str, location: str | None = None) -> int:
        """Return the number of units of an item in stock (0 for an unknown SKU).

        Args:
            sku (str): Stock keeping unit, e.g. "BOLT-M8".
            location (str | None): Count only this location; None counts everywhere.
        """
        item = self._item(sku)
        if item is None:
            return 0
        if location is not None:
            return item["stock"].get(location, 0)
        return sum(item["stock"].values())

    def skus_at_location(self, location: str) -> set:
        """Return the set of SKUs stored at a location.

        Args:
            location (str): Location code.
        """
        return {i["sku"] for i in self.items if i["stock"].get(location, 0) > 0}

    def low_stock_skus(self) -> list:
        """Return the SKUs whose total stock is below their reorder point, sorted."""
        return sorted(i["sku"] for i in self.items if sum(i["stock"].values()) < i["reorder_point"])

    def receive_stock(self, sku: str, location: str, quantity: int) -> bool:
        """Book incoming units into a location of the right zone with enough free capacity.

        Args:
            sku (str): Stock keeping unit.
            location (str): Location code to put the units in.
            quantity (int): Number of units received, positive.
        """
        item, loc = self._item(sku), self.locations.get(location)
        if item is None or loc is None or quantity <= 0:
            return self._refuse("unknown sku or location, or bad quantity")
        if loc["zone"] != item["zone"]:
            return self._refuse(f"{sku} must be stored in a {item['zone']} location")
        if self._used(location) + quantity > loc["capacity"]:
            return self._refuse(f"{location} does not have room for {quantity} units")
        item["stock"][location] = item["stock"].get(location, 0) + quantity
        self._log(sku, None, location, quantity)
        return True

    def move_stock(self, sku: str, from_location: str, to_location: str, quantity: int) -> bool:
        """Move units of an item between two locations.

        Args:
            sku (str): Stock keeping unit.
            from_location (str): Location the units leave.
            to_location (str): Location the units go to; same zone, enough capacity.
            quantity (int): Number of units to move, positive.
        """
        item, dst = self._item(sku), self.locations.get(to_location)
        if item is None or dst is None or quantity <= 0 or from_location == to_location:
            return self._refuse("unknown sku or location, or bad quantity")
        if item["stock"].get(from_location, 0) < quantity:
            return self._refuse(f"only {item['stock'].get(from_location, 0)} at {from_location}")
        if dst["zone"] != item["zone"] or self._used(to_location) + quantity > dst["capacity"]:
            return self._refuse(f"{to_location} cannot take these units")
        item["stock"][from_location] -= quantity
        if item["stock"][from_location] == 0:
            del item["stock"][from_location]
        item["stock"][to_location] = item["stock"].get(to_location, 0) + quantity
        self._log(sku, from_location, to_location, quantity)
        return True

    def pick_order(self, order_id: int) -> bool:
        """Pick and ship an open order in full, taking stock from locations in code order.

        Args:
            order_id (int): Numeric order id, e.g. 501.
        """
        order = next((o for o in self.orders if o["id"] == order_id), None)
        if order is None or order["status"] != "open":
            return self._refuse(f"order {order_id} is not open")
        for line in order["lines"]:
            if self.get_stock_level(line["sku"]) < line["qty"]:
                return self._refuse(f"not enough {line['sku']} to pick order {order_id}")
        for line in order["lines"]:
            item, left = self._item(line["sku"]), line["qty"]
            for location in sorted(item["stock"]):
                if left == 0:
                    break
                take = min(left, item["stock"][location])
                item["stock"][location] -= take
                left -= take
                self._log(item["sku"], location, None, take)
            item["stock"] = {k: v for k, v in item["stock"].items() if v > 0}
        order["status"] = "shipped"
        return True

    def cancel_order(self, order_id: int) -> str | None:
        """Cancel an open order. Returns None on success, otherwise the reason it was refused.

        Args:
            order_id (int): Numeric order id.
        """
        order = next((o for o in self.orders if o["id"] == order_id), None)
        if order is None:
            return f"no order {order_id}"
        if order["status"] != "open":
            return f"order {order_id} is already {order['status']}"
        order["status"] = "cancelled"
        return None
