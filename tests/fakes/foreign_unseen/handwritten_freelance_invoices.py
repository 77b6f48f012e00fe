"""Freelancer's invoicing ledger -- hand-written simulator with Decimal money and uuid invoice ids."""
import uuid
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Dict, List, Optional, Tuple

CENT = Decimal("0.01")


class InvoiceLedger:
    def __init__(self):
        self.owner = "Kai Jensen Design"
        self.vat_rate = Decimal("0.20")
        self.bank_balance = Decimal("2450.00")
        self.clients = [
            {"id": 1, "name": "Acme Robotics", "contact": "Priya Shah", "email": "ap@acmerobotics.example", "rate": Decimal("85.00")},
            {"id": 2, "name": "Bluefin Cafe", "contact": "Tom Hardy", "email": "tom@bluefin.example", "rate": Decimal("60.00")},
            {"id": 3, "name": "Cobalt Legal LLP", "contact": "Meera Iyer", "email": "billing@cobalt.example", "rate": Decimal("110.00")},
            {"id": 4, "name": "Dunmore Festival", "contact": "Aoife Byrne", "email": "", "rate": Decimal("70.00")},
            {"id": 5, "name": "Evergreen Charity", "contact": "Noah Levi", "email": "noah@evergreen.example", "rate": Decimal("45.00")},
        ]
        self.client_ids: Dict[str, int] = {c["name"]: c["id"] for c in self.clients}
        self.invoices: Dict[str, dict] = {
            "3f9c2a7e-8b1d-4e52-9a0f-6c7d1e2b3a44": self._inv(1, "paid", "2024-05-02", [("Logo refresh", "12")], "1224.00"),
            "a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d": self._inv(1, "sent", "2024-08-19", [("Brand guide", "20"), ("Icon set", "6.5")], "0"),
            "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9": self._inv(2, "sent", "2024-09-01", [("Menu design", "8")], "300.00"),
            "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f": self._inv(3, "draft", "2024-10-10", [("Pitch deck", "15")], "0"),
            "77aa88bb-99cc-4dde-8eff-00aa11bb22cc": self._inv(4, "draft", "2024-10-12", [], "0"),
            "0f1e2d3c-4b5a-4968-8776-655443322110": self._inv(5, "void", "2024-06-30", [("Poster", "4")], "0"),
        }

    def _inv(self, client_id: int, status: str, issued: str, items: List[Tuple[str, str]], paid: str) -> dict:
        rate = self.clients[client_id - 1]["rate"]
        return {"client_id": client_id, "status": status, "issued": datetime.fromisoformat(issued),
                "lines": [{"description": d, "hours": Decimal(h), "rate": rate} for d, h in items],
                "paid": Decimal(paid)}

    def _total(self, inv: dict) -> Decimal:
        net = sum((l["hours"] * l["rate"] for l in inv["lines"]), Decimal("0"))
        return (net * (1 + self.vat_rate)).quantize(CENT, rounding=ROUND_HALF_UP)

    def create_invoice(self, client_name: str) -> Optional[str]:
        """Open an empty draft invoice for a client by name. Returns the new invoice id, or None if unknown client."""
        cid = self.client_ids.get(client_name)
        if cid is None:
            return None
        inv_id = str(uuid.uuid4())
        self.invoices[inv_id] = {"client_id": cid, "status": "draft", "issued": datetime.now(), "lines": [], "paid": Decimal("0")}
        return inv_id

    def add_line(self, invoice_id: str, description: str, hours: float) -> Decimal:
        """Add billable hours at the client's rate to a draft invoice. Returns the new gross total (incl. VAT).
        Raises ValueError if the invoice is not a draft or hours are not in (0, 80]."""
        inv = self.invoices.get(invoice_id)
        if inv is None or inv["status"] != "draft":
            raise ValueError("only draft invoices can be edited")
        h = Decimal(str(hours))
        if h <= 0 or h > 80:
            raise ValueError("hours must be between 0 and 80")
        rate = self.clients[inv["client_id"] - 1]["rate"]
        inv["lines"].append({"description": description, "hours": h, "rate": rate})
        return self._total(inv)

    def send_invoice(self, invoice_id: str) -> str:
        """Send a draft invoice to the client's billing email. Returns the email used or an error message."""
        inv = self.invoices.get(invoice_id)
        if inv is None:
            return "no such invoice"
        if inv["status"] != "draft":
            return f"invoice is {inv['status']}"
        if not inv["lines"]:
            return "invoice has no lines"
        email = self.clients[inv["client_id"] - 1]["email"]
        if not email:
            return "client has no billing email"
        inv["status"], inv["issued"] = "sent", datetime.now()
        return email

    def record_payment(self, invoice_id: str, amount: str) -> Tuple[bool, Decimal]:
        """Record a (possibly partial) payment on a sent invoice; overpayment is refused.
        Returns (accepted, amount still due). The payment is added to the bank balance."""
        inv = self.invoices.get(invoice_id)
        if inv is None or inv["status"] != "sent":
            return False, Decimal("0")
        due = self._total(inv) - inv["paid"]
        amt = Decimal(amount).quantize(CENT)
        if amt <= 0 or amt > due:
            return False, due
        inv["paid"] += amt
        self.bank_balance += amt
        if inv["paid"] == self._total(inv):
            inv["status"] = "paid"
        return True, due - amt

    def void_invoice(self, invoice_id: str) -> bool:
        """Void a draft or sent invoice that has received no payment."""
        inv = self.invoices.get(invoice_id)
        if inv is None or inv["status"] not in ("draft", "sent") or inv["paid"] > 0:
            return False
        inv["status"] = "void"
        return True

    def outstanding(self, client_name: str) -> Decimal:
        """Total still owed by a client across sent invoices."""
        cid = self.client_ids.get(client_name)
        return sum((self._total(i) - i["paid"] for i in self.invoices.values()
                    if i["client_id"] == cid and i["status"] == "sent"), Decimal("0.00"))

    def overdue(self, days: int = 30) -> List[Tuple[str, str, Decimal]]:
        """(invoice_id, client name, amount due) for sent invoices issued more than `days` days ago."""
        cutoff = datetime.now() - timedelta(days=days)
        return [(k, self.clients[i["client_id"] - 1]["name"], self._total(i) - i["paid"])
                for k, i in self.invoices.items() if i["status"] == "sent" and i["issued"] < cutoff]

    def list_invoices(self, status: str = "") -> List[Tuple[str, str, str, Decimal]]:
        """(invoice_id, client name, status, gross total) for all invoices, optionally filtered by status."""
        return [(k, self.clients[i["client_id"] - 1]["name"], i["status"], self._total(i))
                for k, i in self.invoices.items() if not status or i["status"] == status]
