"""Event ticketing backend (BFCL multi-turn style) that depends on a third-party module
which is NOT installed -- importing this file raises ModuleNotFoundError."""
from copy import deepcopy
from typing import Dict, List, Optional

import pandas_nope_not_installed as pd

DEFAULT_STATE = {
    "events": {
        "EV-2291": {"title": "Jazz on the Pier", "venue": "Harbour Stage", "date": "2025-06-14", "refundable": True,
                    "tiers": {"standard": {"price": 35.0, "left": 120}, "vip": {"price": 90.0, "left": 2}}},
        "EV-2304": {"title": "Indie Night Vol. 3", "venue": "The Basement", "date": "2025-05-02", "refundable": False,
                    "tiers": {"standard": {"price": 20.0, "left": 0}}},
        "EV-2317": {"title": "City Marathon Expo", "venue": "Expo Hall B", "date": "2025-04-20", "refundable": True,
                    "tiers": {"standard": {"price": 10.0, "left": 500}}},
        "EV-2330": {"title": "Symphony No. 9", "venue": "Royal Concert Hall", "date": "2025-09-09", "refundable": True,
                    "tiers": {"standard": {"price": 55.0, "left": 40}, "box": {"price": 150.0, "left": 4}}},
        "EV-2342": {"title": "Stand-up Showcase", "venue": "Laugh Factory", "date": "2025-03-30", "refundable": False,
                    "tiers": {"standard": {"price": 25.0, "left": 60}}},
    },
    "customers": {
        "C-90417": {"name": "Isabel Cortez", "email": "isabel.cortez@example.com", "wallet": 200.0},
        "C-90433": {"name": "Noah Fischer", "email": "noah.f@example.com", "wallet": 15.0},
        "C-90458": {"name": "Aaliyah Brooks", "email": "aaliyah.b@example.com", "wallet": 640.0},
        "C-90462": {"name": "Viktor Sokolov", "email": "v.sokolov@example.com", "wallet": 75.5},
        "C-90479": {"name": "Mei Lin", "email": "mei.lin@example.com", "wallet": 0.0},
    },
    "tickets": {
        "TKT-000801": {"event_id": "EV-2291", "tier": "standard", "holder": "C-90417", "price": 35.0},
        "TKT-000802": {"event_id": "EV-2291", "tier": "standard", "holder": "C-90417", "price": 35.0},
        "TKT-000815": {"event_id": "EV-2304", "tier": "standard", "holder": "C-90433", "price": 20.0},
        "TKT-000822": {"event_id": "EV-2330", "tier": "box", "holder": "C-90458", "price": 150.0},
        "TKT-000830": {"event_id": "EV-2342", "tier": "standard", "holder": "C-90462", "price": 25.0},
    },
    "next_ticket_number": 831,
    "current_customer": None,
    "max_per_customer": 4,
}


class TicketingAPI:
    def __init__(self):
        self.events: Dict[str, dict] = {}
        self.customers: Dict[str, dict] = {}
        self.tickets: Dict[str, dict] = {}
        self.next_ticket_number: int = 0
        self.current_customer: Optional[str] = None
        self.max_per_customer: int = 4

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        default = deepcopy(DEFAULT_STATE)
        for key in ("events", "customers", "tickets", "next_ticket_number", "current_customer", "max_per_customer"):
            setattr(self, key, scenario.get(key, default[key]))

    def login_customer(self, email: str) -> Dict[str, str]:
        """Log in a ticket buyer by email.

        Args:
            email (str): Customer email.
        Returns:
            customer_id (str): Logged-in customer id.
        """
        for cid, c in self.customers.items():
            if c["email"].lower() == email.lower():
                self.current_customer = cid
                return {"customer_id": cid}
        return {"error": "Unknown email."}

    def search_events(self, keyword: str) -> Dict[str, List[dict]]:
        """Search events by title or venue keyword.

        Args:
            keyword (str): Text to look for.
        Returns:
            events (List[dict]): event_id, title, venue, date and tiers with price and seats left.
        """
        k = keyword.lower()
        return {"events": [{"event_id": eid, "title": e["title"], "venue": e["venue"], "date": e["date"], "tiers": e["tiers"]}
                           for eid, e in self.events.items() if k in e["title"].lower() or k in e["venue"].lower()]}

    def purchase_tickets(self, event_id: str, tier: str, quantity: int) -> Dict[str, object]:
        """Buy tickets for the logged-in customer, paid from their wallet. At most 4 tickets per customer per event.

        Args:
            event_id (str): Event id.
            tier (str): Price tier, e.g. 'standard'.
            quantity (int): Number of tickets (>= 1).
        Returns:
            ticket_ids (List[str]): The new tickets.
            wallet (float): Remaining wallet balance.
        """
        if self.current_customer is None:
            return {"error": "Not logged in."}
        ev = self.events.get(event_id)
        if ev is None or tier not in ev["tiers"]:
            return {"error": "Unknown event or tier."}
        if quantity < 1:
            return {"error": "Quantity must be at least 1."}
        held = sum(1 for t in self.tickets.values() if t["event_id"] == event_id and t["holder"] == self.current_customer)
        if held + quantity > self.max_per_customer:
            return {"error": f"Limit is {self.max_per_customer} tickets per customer."}
        t = ev["tiers"][tier]
        if t["left"] < quantity:
            return {"error": "Not enough tickets left."}
        cost = t["price"] * quantity
        cust = self.customers[self.current_customer]
        if cust["wallet"] < cost:
            return {"error": "Insufficient wallet balance."}
        cust["wallet"] -= cost
        t["left"] -= quantity
        new_ids = []
        for _ in range(quantity):
            tid = f"TKT-{self.next_ticket_number:06d}"
            self.next_ticket_number += 1
            self.tickets[tid] = {"event_id": event_id, "tier": tier, "holder": self.current_customer, "price": t["price"]}
            new_ids.append(tid)
        return {"ticket_ids": new_ids, "wallet": cust["wallet"]}

    def transfer_ticket(self, ticket_id: str, recipient_email: str) -> Dict[str, str]:
        """Give one of your tickets to another registered customer.

        Args:
            ticket_id (str): Ticket id.
            recipient_email (str): The recipient's email.
        Returns:
            new_holder (str): Recipient's name.
        """
        tk = self.tickets.get(ticket_id)
        if tk is None or tk["holder"] != self.current_customer:
            return {"error": "You do not hold this ticket."}
        rid = next((cid for cid, c in self.customers.items() if c["email"].lower() == recipient_email.lower()), None)
        if rid is None or rid == self.current_customer:
            return {"error": "Invalid recipient."}
        tk["holder"] = rid
        return {"new_holder": self.customers[rid]["name"]}

    def refund_ticket(self, ticket_id: str) -> Dict[str, float]:
        """Refund one of your tickets to your wallet (refundable events only); the seat goes back on sale.

        Args:
            ticket_id (str): Ticket id.
        Returns:
            refunded (float): Amount credited.
        """
        tk = self.tickets.get(ticket_id)
        if tk is None or tk["holder"] != self.current_customer:
            return {"error": "You do not hold this ticket."}
        ev = self.events[tk["event_id"]]
        if not ev["refundable"]:
            return {"error": "This event is non-refundable."}
        del self.tickets[ticket_id]
        ev["tiers"][tk["tier"]]["left"] += 1
        self.customers[self.current_customer]["wallet"] += tk["price"]
        return {"refunded": tk["price"]}

    def sales_report(self, event_id: str) -> Dict[str, object]:
        """Revenue per tier for an event, computed with pandas.

        Args:
            event_id (str): Event id.
        Returns:
            revenue_by_tier (dict): tier -> total revenue.
        """
        if event_id not in self.events:
            return {"error": "Unknown event."}
        df = pd.DataFrame([t for t in self.tickets.values() if t["event_id"] == event_id])
        if df.empty:
            return {"revenue_by_tier": {}}
        return {"revenue_by_tier": df.groupby("tier")["price"].sum().to_dict()}
