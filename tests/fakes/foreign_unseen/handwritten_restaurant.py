"""Reservation book for a single restaurant -- the team's hand-rolled simulator."""
import random
import string
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Dict, List, Optional, Tuple


@dataclass
class Table:
    number: int
    seats: int
    area: str  # "window", "main", "terrace"


@dataclass
class Reservation:
    guest_name: str
    phone: str
    day: date
    hour: int
    party_size: int
    table: int
    created_at: datetime = field(default_factory=datetime.now)
    arrived_at: Optional[datetime] = None


class RestaurantBook:
    SLOT_HOURS = 2

    def __init__(self):
        self.opening_hours = (17, 23)  # last seating 21:00
        self.tables = [Table(1, 2, "window"), Table(2, 2, "window"), Table(3, 4, "main"), Table(4, 4, "main"),
                       Table(5, 6, "main"), Table(6, 8, "terrace"), Table(7, 4, "terrace")]
        today = date.today()
        tomorrow = today + timedelta(days=1)
        self.reservations: Dict[str, Reservation] = {
            "R7KQ2M": Reservation("Olivia Brandt", "+44 7700 900111", today, 19, 2, 1),
            "R3XW9P": Reservation("Mateo Rossi", "+44 7700 900222", today, 19, 4, 3),
            "RB5T1Z": Reservation("Hana Kobayashi", "+44 7700 900333", today, 20, 6, 5),
            "RN8D4L": Reservation("Olivia Brandt", "+44 7700 900111", tomorrow, 18, 3, 4),
            "RZ0C6F": Reservation("Samir Haddad", "+44 7700 900444", tomorrow, 20, 8, 6),
        }
        self.waitlist: List[Tuple[str, int, str]] = [
            ("Greta Lund", 2, "+44 7700 900555"), ("Paulo Mendes", 5, "+44 7700 900666"),
            ("Ayesha Khan", 3, "+44 7700 900777"), ("Lars Nilsson", 2, "+44 7700 900123"),
            ("Chloe Dubois", 4, "+44 7700 900234")]
        self.no_show_phones = {"+44 7700 900999", "+44 7700 900888", "+44 7700 900876",
                               "+44 7700 900765", "+44 7700 900654"}

    def _overlaps(self, r: Reservation, day: date, hour: int) -> bool:
        return r.day == day and abs(r.hour - hour) < self.SLOT_HOURS

    def free_tables(self, day: str, hour: int, party_size: int) -> List[int]:
        """Table numbers that can seat the party (no more than 2 empty seats) at day (YYYY-MM-DD) and hour."""
        d = date.fromisoformat(day)
        busy = {r.table for r in self.reservations.values() if self._overlaps(r, d, hour)}
        return [t.number for t in self.tables
                if t.number not in busy and party_size <= t.seats <= party_size + 2]

    def book(self, guest_name: str, phone: str, day: str, hour: int, party_size: int) -> Tuple[bool, str]:
        """Reserve the smallest suitable table. Returns (True, confirmation_code) or (False, reason).
        Refused for past dates, hours outside 17-21, parties over 8, and phones on the no-show list."""
        d = date.fromisoformat(day)
        if d < date.today():
            return False, "date is in the past"
        if not self.opening_hours[0] <= hour <= self.opening_hours[1] - self.SLOT_HOURS:
            return False, "outside seating hours"
        if not 1 <= party_size <= 8:
            return False, "party size must be 1-8"
        if phone in self.no_show_phones:
            return False, "phone number blocked after repeated no-shows"
        options = self.free_tables(day, hour, party_size)
        if not options:
            return False, "no table available"
        table = min(options, key=lambda n: next(t.seats for t in self.tables if t.number == n))
        code = "R" + "".join(random.choices(string.ascii_uppercase + string.digits, k=5))
        while code in self.reservations:
            code = "R" + "".join(random.choices(string.ascii_uppercase + string.digits, k=5))
        self.reservations[code] = Reservation(guest_name, phone, d, hour, party_size, table)
        return True, code

    def cancel(self, code: str) -> bool:
        """Cancel a reservation that has not been checked in. Returns True if cancelled."""
        r = self.reservations.get(code)
        if r is None or r.arrived_at is not None:
            return False
        del self.reservations[code]
        return True

    def lookup_by_phone(self, phone: str) -> List[Tuple[str, str, int, int]]:
        """(code, day, hour, party_size) for every reservation under a phone number."""
        return [(c, r.day.isoformat(), r.hour, r.party_size) for c, r in self.reservations.items() if r.phone == phone]

    def check_in(self, code: str) -> str:
        """Mark the party as arrived (only on the reservation day). Returns the table area or an error string."""
        r = self.reservations.get(code)
        if r is None:
            return "ERROR: unknown code"
        if r.arrived_at is not None:
            return "ERROR: already checked in"
        if r.day != date.today():
            return "ERROR: reservation is not for today"
        r.arrived_at = datetime.now()
        return next(t.area for t in self.tables if t.number == r.table)

    def change_party_size(self, code: str, new_size: int) -> str:
        """Change party size, moving to another table if needed. Returns 'ok', 'moved to table N' or 'ERROR: ...'."""
        r = self.reservations.get(code)
        if r is None:
            return "ERROR: unknown code"
        if not 1 <= new_size <= 8:
            return "ERROR: party size must be 1-8"
        current = next(t for t in self.tables if t.number == r.table)
        if new_size <= current.seats <= new_size + 2:
            r.party_size = new_size
            return "ok"
        others = {x.table for c, x in self.reservations.items() if c != code and self._overlaps(x, r.day, r.hour)}
        fits = [t for t in self.tables if t.number not in others and new_size <= t.seats <= new_size + 2]
        if not fits:
            return "ERROR: no table for that size"
        r.table, r.party_size = min(fits, key=lambda t: t.seats).number, new_size
        return f"moved to table {r.table}"

    def join_waitlist(self, guest_name: str, party_size: int, phone: str) -> int:
        """Add a party to tonight's waitlist. Returns its 1-based position (0 if already waiting)."""
        if any(p == phone for _, _, p in self.waitlist):
            return 0
        self.waitlist.append((guest_name, party_size, phone))
        return len(self.waitlist)
