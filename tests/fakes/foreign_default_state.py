"""A class as EnvCraft writes them: the default world in a module-level DEFAULT_STATE, and a
`_load_scenario` that returns early on an empty scenario (so `{}` leaves an empty world).
Read by tests/sandboxes/test_sandbox_foreign.py and tests/synthesis/tasks/test_reward_models.py."""

DEFAULT_STATE = {
    "cars": {
        "C1": {"model": "Civic", "available": True},
        "C2": {"model": "Golf", "available": False},
    },
    "rentals": {},
}


class CarRental:
    """Rent cars."""

    def __init__(self):
        self.cars = {}
        self.rentals = {}

    def _load_scenario(self, scenario):
        if not scenario:
            return
        self.cars = scenario.get("cars", {})
        self.rentals = scenario.get("rentals", {})

    def rent_car(self, car_id: str) -> dict:
        """Rent an available car."""
        car = self.cars.get(car_id)
        if car is None or not car["available"]:
            return {"success": False, "error": "no such car available"}
        car["available"] = False
        self.rentals[car_id] = {"car_id": car_id}
        return {"success": True}
