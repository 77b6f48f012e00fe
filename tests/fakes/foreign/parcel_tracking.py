"""Constructor with plain arguments (carrier, hub_city, seed) and nested @dataclass records, a
random.Random(seed) instance, time.time() stamps, plain/tuple/None results and raised refusals."""

import random
import re
import time
from dataclasses import dataclass, field

STATUS_ORDER = ("label_created", "in_transit", "out_for_delivery", "delivered")
MAX_WEIGHT = {"standard": 30.0, "express": 10.0}
POSTCODE = re.compile(r"^[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}$")


@dataclass
class ScanEvent:
    location: str
    status: str
    at: float


@dataclass
class Parcel:
    tracking_number: str
    sender: str
    recipient: str
    postcode: str
    weight_kg: float
    service: str = "standard"
    status: str = "label_created"
    signed_by: str | None = None
    events: list = field(default_factory=list)


SEED_PARCELS = [
    ("SP10482213GB", "Oakridge Books", "Ines Duarte", "LS1 4AP", 1.2, "standard", "in_transit",
     ["Bristol", "Birmingham hub"]),
    ("SP10482277GB", "Oakridge Books", "Marcus Webb", "M1 2AB", 0.8, "express",
     "out_for_delivery", ["Bristol", "Manchester depot"]),
    ("SP10490001GB", "Fennel & Co", "Ines Duarte", "LS6 2QT", 4.5, "standard", "label_created",
     []),
    ("SP10490056GB", "Hartwell Tools", "Yusuf Karim", "EH1 1YZ", 22.0, "standard", "delivered",
     ["Leeds hub", "Edinburgh depot"]),
    ("SP10490099GB", "Fennel & Co", "Olivia Grant", "B15 2TT", 2.3, "express", "in_transit",
     ["Leeds hub"]),
    ("SP10490120GB", "Hartwell Tools", "Marcus Webb", "M4 5JD", 12.7, "standard",
     "label_created", []),
]


class ParcelTracker:
    def __init__(self, carrier: str = "SwiftPost", hub_city: str = "Leeds",
                 seed: int | None = None):
        self.carrier = carrier
        self.hub_city = hub_city
        self.rng = random.Random(seed)
        self.parcels: dict = {}
        for number, sender, recipient, postcode, weight, service, status, stops in SEED_PARCELS:
            parcel = Parcel(number, sender, recipient, postcode, weight, service, status)
            parcel.events.append(ScanEvent("online", "label_created", 1748736000.0))
            for n, stop in enumerate(stops):
                parcel.events.append(ScanEvent(stop, "in_transit", 1748740000.0 + 3600 * n))
            if status in ("out_for_delivery", "delivered"):
                parcel.events.append(ScanEvent(stops[-1], status, 1748790000.0))
            if status == "delivered":
                parcel.signed_by = recipient
            self.parcels[number] = parcel

    @staticmethod
    def is_valid_postcode(postcode: str) -> bool:
        return bool(POSTCODE.match(postcode.upper()))

    def _parcel(self, tracking_number: str) -> Parcel:
        if tracking_number not in self.parcels:
            raise LookupError(f"{self.carrier} has no parcel {tracking_number}")
        return self.parcels[tracking_number]

    def _advance(self, parcel: Parcel, status: str, location: str) -> None:
        parcel.status = status
        parcel.events.append(ScanEvent(location, status, time.time()))

    def create_shipment(self, sender: str, recipient: str, postcode: str, weight_kg: float,
                        service: str = "standard") -> str:
        """Create a shipping label and return the new tracking number.

        Args:
            sender (str): Sender's name.
            recipient (str): Recipient's full name.
            postcode (str): Recipient's UK postcode, e.g. "LS1 4AP".
            weight_kg (float): Weight; at most 30 kg standard, 10 kg express.
            service (str): "standard" or "express".
        """
        if service not in MAX_WEIGHT or not 0 < weight_kg <= MAX_WEIGHT[service]:
            raise ValueError(f"Weight must be above 0 and at most {MAX_WEIGHT.get(service)} kg")
        if not self.is_valid_postcode(postcode):
            raise ValueError(f"Invalid postcode {postcode!r}")
        number = f"SP{self.rng.randint(10000000, 99999999)}GB"
        while number in self.parcels:
            number = f"SP{self.rng.randint(10000000, 99999999)}GB"
        parcel = Parcel(number, sender, recipient, postcode.upper(), weight_kg, service)
        parcel.events.append(ScanEvent("online", "label_created", time.time()))
        self.parcels[number] = parcel
        return number

    def track(self, tracking_number: str) -> tuple:
        """Return (status, last scanned location) for a parcel.

        Args:
            tracking_number (str): Tracking number, e.g. "SP10482213GB".
        """
        parcel = self._parcel(tracking_number)
        return (parcel.status, parcel.events[-1].location)

    def get_history(self, tracking_number: str) -> list:
        """Return every scan of a parcel, oldest first, as dicts.

        Args:
            tracking_number (str): Tracking number.
        """
        return [vars(e).copy() for e in self._parcel(tracking_number).events]

    def find_parcels_for(self, recipient: str) -> list:
        """List the tracking numbers of parcels addressed to a person.

        Args:
            recipient (str): Recipient's full name, case-insensitive.
        """
        wanted = recipient.lower()
        return sorted(n for n, p in self.parcels.items() if p.recipient.lower() == wanted)

    def scan_at(self, tracking_number: str, location: str) -> None:
        """Record a depot scan; a new label becomes in_transit.

        Args:
            tracking_number (str): Tracking number.
            location (str): Depot or hub name.
        """
        parcel = self._parcel(tracking_number)
        if parcel.status not in ("label_created", "in_transit"):
            raise RuntimeError(f"Parcel is {parcel.status}; depot scans are closed")
        self._advance(parcel, "in_transit", location)

    def send_out_for_delivery(self, tracking_number: str) -> None:
        """Load an in-transit parcel onto the delivery van.

        Args:
            tracking_number (str): Tracking number.
        """
        parcel = self._parcel(tracking_number)
        if parcel.status != "in_transit":
            raise RuntimeError(f"Parcel is {parcel.status}, not in_transit")
        self._advance(parcel, "out_for_delivery", parcel.events[-1].location)

    def confirm_delivery(self, tracking_number: str, signed_by: str) -> None:
        """Record delivery of a parcel that is out for delivery.

        Args:
            tracking_number (str): Tracking number.
            signed_by (str): Name of the person who signed.
        """
        parcel = self._parcel(tracking_number)
        if parcel.status != "out_for_delivery" or not signed_by.strip():
            raise RuntimeError("Parcel is not out for delivery, or no signature given")
        parcel.signed_by = signed_by
        self._advance(parcel, "delivered", parcel.postcode)

    def redirect(self, tracking_number: str, new_postcode: str) -> None:
        """Change the delivery postcode while the parcel has not left the depot network.

        Args:
            tracking_number (str): Tracking number.
            new_postcode (str): New UK postcode.
        """
        parcel = self._parcel(tracking_number)
        if STATUS_ORDER.index(parcel.status) >= STATUS_ORDER.index("out_for_delivery"):
            raise RuntimeError("Too late to redirect this parcel")
        if not self.is_valid_postcode(new_postcode):
            raise ValueError(f"Invalid postcode {new_postcode!r}")
        parcel.postcode = new_postcode.upper()
