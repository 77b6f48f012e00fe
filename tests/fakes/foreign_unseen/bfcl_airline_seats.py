"""Airline seat-selection backend in the style of a BFCL multi-turn API class."""
from copy import deepcopy
from typing import Dict, List, Union

DEFAULT_STATE = {
    "flights": {
        "LX4412": {
            "route": "ZRH-LIS", "date": "2024-11-02",
            "seats": {"1A": "PNR9QK", "1C": None, "2A": None, "2C": "PNR4TT", "14A": "PNR7ZD",
                      "14B": None, "14C": None, "15A": None, "15B": "PNR2MX", "15C": None},
            "premium_rows": [1, 2],
        },
        "LX4413": {
            "route": "LIS-ZRH", "date": "2024-11-09",
            "seats": {"1A": None, "1C": None, "12A": "PNR9QK", "12B": None, "12C": None, "13A": None},
            "premium_rows": [1],
        },
        "LX1801": {
            "route": "ZRH-OSL", "date": "2024-12-01",
            "seats": {"3A": None, "3B": None, "3C": "PNR5HB", "4A": None, "4B": None},
            "premium_rows": [3],
        },
    },
    "bookings": {
        "PNR9QK": {"passenger": "Helena Voss", "email": "h.voss@example.com", "flights": ["LX4412", "LX4413"], "tier": "gold"},
        "PNR4TT": {"passenger": "Marco Bianchi", "email": "marco.b@example.com", "flights": ["LX4412"], "tier": "none"},
        "PNR7ZD": {"passenger": "Yuki Tanaka", "email": "yuki.t@example.com", "flights": ["LX4412"], "tier": "silver"},
        "PNR2MX": {"passenger": "Samuel Okoye", "email": "s.okoye@example.com", "flights": ["LX4412"], "tier": "none"},
        "PNR5HB": {"passenger": "Ingrid Dahl", "email": "ingrid.dahl@example.com", "flights": ["LX1801"], "tier": "none"},
        "PNR3FA": {"passenger": "Omar Farouk", "email": "omar.f@example.com", "flights": ["LX1801", "LX4413"], "tier": "gold"},
    },
    "premium_seat_fee": 45.0,
    "travel_credit": 60.0,
}


class AirlineSeatAPI:
    def __init__(self):
        self.flights: Dict[str, dict] = {}
        self.bookings: Dict[str, dict] = {}
        self.premium_seat_fee: float = 0.0
        self.travel_credit: float = 0.0
        self._api_description = "Lets travellers view seat maps and pick, swap or release seats."

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        default = deepcopy(DEFAULT_STATE)
        self.flights = scenario.get("flights", default["flights"])
        self.bookings = scenario.get("bookings", default["bookings"])
        self.premium_seat_fee = scenario.get("premium_seat_fee", default["premium_seat_fee"])
        self.travel_credit = scenario.get("travel_credit", default["travel_credit"])
        self.long_context = long_context

    def _seat_of(self, pnr: str, flight: str) -> Union[str, None]:
        for seat, holder in self.flights[flight]["seats"].items():
            if holder == pnr:
                return seat
        return None

    def _is_premium(self, flight: str, seat: str) -> bool:
        return int(seat[:-1]) in self.flights[flight]["premium_rows"]

    def find_booking(self, email: str) -> Dict[str, Union[str, List[str]]]:
        """Look up a booking reference by passenger email.

        Args:
            email (str): Passenger email address.
        Returns:
            booking_reference (str): The PNR.
            flights (List[str]): Flight numbers on the booking.
        """
        for pnr, b in self.bookings.items():
            if b["email"].lower() == email.lower():
                return {"booking_reference": pnr, "flights": list(b["flights"])}
        return {"error": "No booking found for that email."}

    def get_seat_map(self, flight_number: str) -> Dict[str, List[str]]:
        """Show free seats on a flight.

        Args:
            flight_number (str): e.g. 'LX4412'.
        Returns:
            free_seats (List[str]): Unoccupied seat labels.
            premium_seats (List[str]): The free seats that carry the premium fee.
        """
        if flight_number not in self.flights:
            return {"error": f"Flight {flight_number} not found."}
        free = [s for s, h in self.flights[flight_number]["seats"].items() if h is None]
        return {"free_seats": free, "premium_seats": [s for s in free if self._is_premium(flight_number, s)]}

    def get_current_seat(self, booking_reference: str, flight_number: str) -> Dict[str, str]:
        """Return the seat currently held by a booking on a flight.

        Args:
            booking_reference (str): The PNR.
            flight_number (str): Flight number.
        Returns:
            seat (str): Seat label, or 'unassigned'.
        """
        b = self.bookings.get(booking_reference)
        if b is None or flight_number not in b["flights"]:
            return {"error": "Booking is not on that flight."}
        return {"seat": self._seat_of(booking_reference, flight_number) or "unassigned"}

    def select_seat(self, booking_reference: str, flight_number: str, seat: str) -> Dict[str, Union[str, float]]:
        """Assign (or move to) a seat. Premium rows cost a fee paid from travel credit; gold tier is exempt.

        Args:
            booking_reference (str): The PNR.
            flight_number (str): Flight number on the booking.
            seat (str): Desired seat label, e.g. '14B'.
        Returns:
            seat (str): The seat now held.
            fee_charged (float): Fee deducted from travel credit.
        """
        b = self.bookings.get(booking_reference)
        if b is None or flight_number not in b["flights"]:
            return {"error": "Booking is not on that flight."}
        seats = self.flights[flight_number]["seats"]
        if seat not in seats:
            return {"error": f"Seat {seat} does not exist."}
        if seats[seat] is not None:
            return {"error": f"Seat {seat} is taken."}
        fee = 0.0
        if self._is_premium(flight_number, seat) and b["tier"] != "gold":
            fee = self.premium_seat_fee
            if fee > self.travel_credit:
                return {"error": "Insufficient travel credit for a premium seat."}
        old = self._seat_of(booking_reference, flight_number)
        if old:
            seats[old] = None
        seats[seat] = booking_reference
        self.travel_credit -= fee
        return {"seat": seat, "fee_charged": fee}

    def release_seat(self, booking_reference: str, flight_number: str) -> Dict[str, str]:
        """Give up the seat held on a flight (no refund of fees).

        Args:
            booking_reference (str): The PNR.
            flight_number (str): Flight number.
        Returns:
            released_seat (str): The seat that was freed.
        """
        if booking_reference not in self.bookings or flight_number not in self.flights:
            return {"error": "Unknown booking or flight."}
        old = self._seat_of(booking_reference, flight_number)
        if old is None:
            return {"error": "No seat assigned."}
        self.flights[flight_number]["seats"][old] = None
        return {"released_seat": old}

    def check_travel_credit(self) -> Dict[str, float]:
        """Return the remaining travel credit.

        Returns:
            travel_credit (float): Remaining credit.
        """
        return {"travel_credit": self.travel_credit}
