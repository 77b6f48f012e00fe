"""EnvScaler style with init_config: dict | None = None, Decimal prices, random.randint
reservation numbers, datetime.now() stamps and {"success": ...} results."""

import copy
import random
from datetime import datetime
from decimal import Decimal

UNDER_25_SURCHARGE = Decimal("15.00")
ONE_WAY_FEE = Decimal("60.00")
DEFAULT_CONFIG = {
    "branches": {"LHR": {"name": "Heathrow Terminal 5", "city": "London"},
                 "MAN": {"name": "Manchester Piccadilly", "city": "Manchester"},
                 "EDI": {"name": "Edinburgh Waverley", "city": "Edinburgh"}},
    "vehicles": {
        "VH-301": {"make": "Toyota", "model": "Yaris", "class": "economy", "branch": "LHR",
                   "daily_rate": "34.00", "mileage": 18200, "status": "available"},
        "VH-302": {"make": "VW", "model": "Golf", "class": "compact", "branch": "LHR",
                   "daily_rate": "41.50", "mileage": 30110, "status": "rented"},
        "VH-303": {"make": "BMW", "model": "5 Series", "class": "luxury", "branch": "LHR",
                   "daily_rate": "98.00", "mileage": 9050, "status": "available"},
        "VH-304": {"make": "Skoda", "model": "Octavia Estate", "class": "estate", "branch": "MAN",
                   "daily_rate": "52.00", "mileage": 44020, "status": "available"},
        "VH-305": {"make": "Ford", "model": "Fiesta", "class": "economy", "branch": "MAN",
                   "daily_rate": "32.00", "mileage": 51000, "status": "maintenance"},
        "VH-306": {"make": "Kia", "model": "Niro EV", "class": "compact", "branch": "EDI",
                   "daily_rate": "47.00", "mileage": 12500, "status": "available"},
        "VH-307": {"make": "Mercedes", "model": "E-Class", "class": "luxury", "branch": "EDI",
                   "daily_rate": "105.00", "mileage": 7600, "status": "reserved"},
    },
    "customers": {
        "C-55": {"name": "George Hall", "email": "george.hall@mail.test", "age": 42,
                 "license_valid": True},
        "C-56": {"name": "Priya Nair", "email": "priya.nair@mail.test", "age": 23,
                 "license_valid": True},
        "C-57": {"name": "Luca Ferrari", "email": "luca.f@mail.test", "age": 35,
                 "license_valid": False},
        "C-58": {"name": "Sara Lindholm", "email": "sara.l@mail.test", "age": 29,
                 "license_valid": True},
        "C-59": {"name": "Tariq Aziz", "email": "tariq.aziz@mail.test", "age": 19,
                 "license_valid": True},
    },
    "reservations": {
        "R204871": {"customer_id": "C-55", "vehicle_id": "VH-302", "pickup_date": "2025-06-01",
                    "days": 5, "status": "active", "start_mileage": 30110,
                    "created_at": "2025-05-20T09:00:00"},
        "R310555": {"customer_id": "C-58", "vehicle_id": "VH-307", "pickup_date": "2025-06-12",
                    "days": 3, "status": "reserved", "start_mileage": None,
                    "created_at": "2025-05-28T17:30:00"},
    },
}


class CarRental:
    def __init__(self, init_config: dict | None = None):
        cfg = copy.deepcopy(DEFAULT_CONFIG if init_config is None else init_config)
        self.branches = cfg["branches"]
        self.vehicles = cfg["vehicles"]
        for vehicle in self.vehicles.values():
            vehicle["daily_rate"] = Decimal(vehicle["daily_rate"])
        self.customers = cfg["customers"]
        self.reservations = cfg.get("reservations", {})

    def _quote(self, customer: dict, vehicle: dict, days: int) -> Decimal:
        per_day = vehicle["daily_rate"] + (UNDER_25_SURCHARGE if customer["age"] < 25 else 0)
        return per_day * days

    def search_available(self, branch: str, vehicle_class: str | None = None) -> dict:
        """List vehicles free to reserve at a branch.

        Args:
            branch (str): Branch code, e.g. "LHR".
            vehicle_class (str | None): economy, compact, estate or luxury; None for all.
        """
        if branch not in self.branches:
            return {"success": False, "error": f"Unknown branch {branch}"}
        return {"success": True, "data": [
            {"vehicle_id": vid, "make": v["make"], "model": v["model"], "class": v["class"],
             "daily_rate": v["daily_rate"]}
            for vid, v in self.vehicles.items() if v["branch"] == branch
            and v["status"] == "available" and vehicle_class in (None, v["class"])]}

    def find_customer(self, email: str) -> dict:
        """Find a customer by email address.

        Args:
            email (str): The customer's email address.
        """
        for cid, c in self.customers.items():
            if c["email"].lower() == email.lower():
                return {"success": True, "data": {"customer_id": cid, **c}}
        return {"success": False, "error": f"No customer with email {email}"}

    def get_quote(self, customer_id: str, vehicle_id: str, days: int) -> dict:
        """Price a rental, including the under-25 daily surcharge.

        Args:
            customer_id (str): Id of the customer.
            vehicle_id (str): Id of the vehicle.
            days (int): Rental length in days, 1 to 30.
        """
        customer, vehicle = self.customers.get(customer_id), self.vehicles.get(vehicle_id)
        if customer is None or vehicle is None or not 1 <= days <= 30:
            return {"success": False, "error": "Unknown customer or vehicle, or bad length"}
        return {"success": True, "data": {"total": self._quote(customer, vehicle, days)}}

    def create_reservation(self, customer_id: str, vehicle_id: str, pickup_date: str,
                           days: int) -> dict:
        """Reserve an available vehicle for a customer with a valid licence.

        Drivers must be 21 or older, and 25 or older for the luxury class.

        Args:
            customer_id (str): Id of the customer.
            vehicle_id (str): Id of the vehicle.
            pickup_date (str): Pick-up day in YYYY-MM-DD form.
            days (int): Rental length in days, 1 to 30.
        """
        customer, vehicle = self.customers.get(customer_id), self.vehicles.get(vehicle_id)
        if customer is None or vehicle is None or not 1 <= days <= 30:
            return {"success": False, "error": "Unknown customer or vehicle, or bad length"}
        if not customer["license_valid"]:
            return {"success": False, "error": "Customer has no valid driving licence"}
        min_age = 25 if vehicle["class"] == "luxury" else 21
        if customer["age"] < min_age:
            return {"success": False, "error": f"Drivers of this class must be {min_age}+"}
        if vehicle["status"] != "available":
            return {"success": False, "error": f"Vehicle is {vehicle['status']}"}
        number = f"R{random.randint(100000, 999999)}"
        while number in self.reservations:
            number = f"R{random.randint(100000, 999999)}"
        self.reservations[number] = {
            "customer_id": customer_id, "vehicle_id": vehicle_id, "pickup_date": pickup_date,
            "days": days, "status": "reserved", "start_mileage": None,
            "created_at": datetime.now().isoformat(timespec="seconds")}
        vehicle["status"] = "reserved"
        return {"success": True, "data": {"reservation_id": number,
                                          "total": self._quote(customer, vehicle, days)}}

    def get_reservation(self, reservation_id: str) -> dict:
        """Get a reservation.

        Args:
            reservation_id (str): Reservation number, e.g. "R204871".
        """
        if reservation_id not in self.reservations:
            return {"success": False, "error": f"No reservation {reservation_id}"}
        return {"success": True, "data": dict(self.reservations[reservation_id])}

    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a reservation that has not been picked up.

        Args:
            reservation_id (str): Reservation number.
        """
        res = self.reservations.get(reservation_id)
        if res is None or res["status"] != "reserved":
            return {"success": False, "error": "Only reserved (not picked up) bookings cancel"}
        res["status"] = "cancelled"
        self.vehicles[res["vehicle_id"]]["status"] = "available"
        return {"success": True, "data": {"reservation_id": reservation_id}}

    def pick_up(self, reservation_id: str) -> dict:
        """Hand the vehicle over to the customer, recording the odometer.

        Args:
            reservation_id (str): Reservation number.
        """
        res = self.reservations.get(reservation_id)
        if res is None or res["status"] != "reserved":
            return {"success": False, "error": "Reservation is not awaiting pick-up"}
        vehicle = self.vehicles[res["vehicle_id"]]
        res["status"], res["start_mileage"] = "active", vehicle["mileage"]
        vehicle["status"] = "rented"
        return {"success": True, "data": {"reservation_id": reservation_id,
                                          "start_mileage": vehicle["mileage"]}}

    def return_vehicle(self, reservation_id: str, branch: str, end_mileage: int) -> dict:
        """Close an active rental; a one-way fee applies when returned to another branch.

        Args:
            reservation_id (str): Reservation number.
            branch (str): Branch code where the car is dropped off.
            end_mileage (int): Odometer reading; not below the pick-up reading.
        """
        res = self.reservations.get(reservation_id)
        if res is None or res["status"] != "active" or branch not in self.branches:
            return {"success": False, "error": "No active rental or unknown branch"}
        if end_mileage < res["start_mileage"]:
            return {"success": False, "error": "Odometer reading is below the pick-up reading"}
        vehicle = self.vehicles[res["vehicle_id"]]
        total = self._quote(self.customers[res["customer_id"]], vehicle, res["days"])
        if branch != vehicle["branch"]:
            total += ONE_WAY_FEE
        vehicle.update(status="available", branch=branch, mileage=end_mileage)
        res.update(status="completed", end_mileage=end_mileage, final_price=total)
        return {"success": True, "data": {"reservation_id": reservation_id, "final_price": total}}
