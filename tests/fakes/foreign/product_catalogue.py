"""Constructor with plain arguments (store_name, currency, products), Decimal prices, tuple and set
results, a @staticmethod, a @property and a docstring-less public helper; tools raise to refuse."""

import copy
from decimal import ROUND_HALF_UP, Decimal

DEFAULT_PRODUCTS = {
    "P-1001": {"name": "Aeris 14 laptop", "brand": "Aeris", "category": "laptops",
               "price": "899.00", "stock": 4, "specs": {"ram_gb": 16, "weight_kg": 1.3,
                                                        "battery_h": 12}},
    "P-1002": {"name": "Kestrel Pro 16 laptop", "brand": "Kestrel", "category": "laptops",
               "price": "1349.00", "stock": 2, "specs": {"ram_gb": 32, "weight_kg": 2.1,
                                                         "battery_h": 9}},
    "P-1003": {"name": "Nimbus Air 13 laptop", "brand": "Nimbus", "category": "laptops",
               "price": "749.50", "stock": 0, "specs": {"ram_gb": 8, "weight_kg": 1.1,
                                                        "battery_h": 14}},
    "P-2001": {"name": "Sonora ANC headphones", "brand": "Sonora", "category": "audio",
               "price": "199.99", "stock": 11, "specs": {"battery_h": 30, "weight_kg": 0.25}},
    "P-2002": {"name": "Pulse buds", "brand": "Pulse", "category": "audio",
               "price": "79.00", "stock": 25, "specs": {"battery_h": 7, "weight_kg": 0.05}},
    "P-2003": {"name": "Sonora studio monitors", "brand": "Sonora", "category": "audio",
               "price": "329.00", "stock": 3, "specs": {"weight_kg": 7.4}},
    "P-3001": {"name": "Vista 27 4K monitor", "brand": "Vista", "category": "monitors",
               "price": "389.00", "stock": 6, "specs": {"size_in": 27, "refresh_hz": 60}},
    "P-3002": {"name": "Vista 32 curved monitor", "brand": "Vista", "category": "monitors",
               "price": "459.00", "stock": 1, "specs": {"size_in": 32, "refresh_hz": 144}},
    "P-4001": {"name": "Kestrel USB-C dock", "brand": "Kestrel", "category": "accessories",
               "price": "129.00", "stock": 9, "specs": {"ports": 11, "weight_kg": 0.3}},
}
LOWER_IS_BETTER = {"weight_kg"}


class ProductCatalogue:
    def __init__(self, store_name: str = "Main St", currency: str = "EUR",
                 products: dict | None = None, vat_rate: str = "0.20"):
        self.store_name = store_name
        self.currency = currency
        self.vat_rate = Decimal(vat_rate)
        self.products = copy.deepcopy(DEFAULT_PRODUCTS if products is None else products)
        for product in self.products.values():
            product["price"] = Decimal(str(product["price"]))
        self.cart: dict = {}
        self.discount_codes = {"SPRING10": {"percent": 10, "min_subtotal": Decimal("200.00")},
                               "AUDIO15": {"percent": 15, "min_subtotal": Decimal("50.00")}}
        self.applied_code: str | None = None
        self.orders: dict = {}

    @property
    def cart_subtotal(self) -> Decimal:
        return sum((self.products[p]["price"] * q for p, q in self.cart.items()), Decimal("0"))

    @staticmethod
    def round_money(value: Decimal) -> Decimal:
        return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)

    def format_money(self, amount):
        return f"{self.round_money(amount)} {self.currency}"

    def _product(self, product_id: str) -> dict:
        if product_id not in self.products:
            raise KeyError(f"No product {product_id} at {self.store_name}")
        return self.products[product_id]

    def _total(self) -> Decimal:
        subtotal = self.cart_subtotal
        if self.applied_code:
            subtotal -= subtotal * self.discount_codes[self.applied_code]["percent"] / 100
        return self.round_money(subtotal)

    def search_products(self, query: str = "", category: str | None = None,
                        max_price: str | None = None) -> list:
        """Search products by name text, category and maximum price.

        Args:
            query (str): Case-insensitive text in the product name or brand.
            category (str | None): Category name such as "audio"; None for all.
            max_price (str | None): Highest price to include, e.g. "500"; None for no limit.
        """
        limit = None if max_price is None else Decimal(max_price)
        return [{"product_id": pid, "name": p["name"], "price": p["price"], "stock": p["stock"]}
                for pid, p in self.products.items()
                if query.lower() in (p["name"] + " " + p["brand"]).lower()
                and (category is None or p["category"] == category)
                and (limit is None or p["price"] <= limit)]

    def get_product(self, product_id: str) -> dict:
        """Get a product's details, price and specifications.

        Args:
            product_id (str): Product id, e.g. "P-2001".
        """
        return {"product_id": product_id, **copy.deepcopy(self._product(product_id))}

    def list_categories(self) -> set:
        """Return the set of categories that have at least one product in stock."""
        return {p["category"] for p in self.products.values() if p["stock"] > 0}

    def compare_products(self, product_id_a: str, product_id_b: str, spec: str) -> tuple:
        """Compare two products on one specification.

        Returns (better_product_id, value_a, value_b); the id is None on a tie. Lower is
        better for weight, higher for everything else.

        Args:
            product_id_a (str): First product id.
            product_id_b (str): Second product id.
            spec (str): Specification name such as "battery_h" or "weight_kg".
        """
        a, b = self._product(product_id_a), self._product(product_id_b)
        if spec not in a["specs"] or spec not in b["specs"]:
            raise ValueError(f"Both products must list the spec {spec!r}")
        va, vb = a["specs"][spec], b["specs"][spec]
        if va == vb:
            return (None, va, vb)
        a_wins = va < vb if spec in LOWER_IS_BETTER else va > vb
        return (product_id_a if a_wins else product_id_b, va, vb)

    def add_to_cart(self, product_id: str, quantity: int = 1) -> Decimal:
        """Add units of a product to the cart and return the new subtotal.

        Args:
            product_id (str): Product id.
            quantity (int): Units to add; the cart may not hold more than the stock.
        """
        product = self._product(product_id)
        if quantity <= 0:
            raise ValueError("Quantity must be positive")
        if self.cart.get(product_id, 0) + quantity > product["stock"]:
            raise ValueError(f"Only {product['stock']} of {product['name']} in stock")
        self.cart[product_id] = self.cart.get(product_id, 0) + quantity
        return self.cart_subtotal

    def remove_from_cart(self, product_id: str) -> Decimal:
        """Remove a product from the cart entirely and return the new subtotal.

        Args:
            product_id (str): Product id currently in the cart.
        """
        if product_id not in self.cart:
            raise KeyError(f"{product_id} is not in the cart")
        del self.cart[product_id]
        if self.applied_code and self.cart_subtotal < \
                self.discount_codes[self.applied_code]["min_subtotal"]:
            self.applied_code = None
        return self.cart_subtotal

    def apply_discount(self, code: str) -> Decimal:
        """Apply a discount code to the cart and return the discounted total.

        Args:
            code (str): Discount code, e.g. "SPRING10"; needs a minimum subtotal.
        """
        rule = self.discount_codes.get(code.upper())
        if rule is None:
            raise KeyError(f"Unknown discount code {code}")
        if self.cart_subtotal < rule["min_subtotal"]:
            raise ValueError(f"Code {code} needs a subtotal of {rule['min_subtotal']}")
        self.applied_code = code.upper()
        return self._total()

    def checkout(self) -> tuple:
        """Place an order for the cart. Returns (order_id, total including VAT).

        The cart is emptied and the stock reduced.
        """
        if not self.cart:
            raise ValueError("The cart is empty")
        total = self._total()
        order_id = f"ORD-{len(self.orders) + 1:04d}"
        vat = self.round_money(total * self.vat_rate / (1 + self.vat_rate))
        self.orders[order_id] = {"lines": dict(self.cart), "total": total, "vat": vat,
                                 "code": self.applied_code}
        for product_id, quantity in self.cart.items():
            self.products[product_id]["stock"] -= quantity
        self.cart, self.applied_code = {}, None
        return (order_id, total)
