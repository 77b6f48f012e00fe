"""Animal shelter adoption environment in the style of an EnvScaler synthesized domain."""
from typing import Any, Dict, List, Optional, TypedDict


class PetInfo(TypedDict):
    pet_id: str
    name: str
    species: str
    age_years: int
    status: str  # "available" | "on_hold" | "adopted"
    adoption_fee: int


class AdopterInfo(TypedDict):
    adopter_id: str
    full_name: str
    email: str
    home_check_passed: bool
    pets_adopted: List[str]


class ApplicationInfo(TypedDict):
    application_id: str
    adopter_id: str
    pet_id: str
    status: str  # "pending" | "approved" | "rejected" | "completed"


class PetAdoptionCenter:
    MAX_PETS_PER_ADOPTER = 2

    def __init__(self, init_config: Optional[Dict[str, Any]] = None):
        """Shelter with pets, registered adopters and adoption applications."""
        if not init_config:
            init_config = self._generate_default()
        self.pets: Dict[str, PetInfo] = {p["pet_id"]: dict(p) for p in init_config["pets"]}
        self.adopters: Dict[str, AdopterInfo] = {
            a["adopter_id"]: dict(a, pets_adopted=list(a["pets_adopted"])) for a in init_config["adopters"]}
        self.applications: Dict[str, ApplicationInfo] = {a["application_id"]: dict(a) for a in init_config["applications"]}

    @staticmethod
    def _generate_default() -> Dict[str, Any]:
        pets = [("pet_5f2a9c", "Biscuit", "dog", 3, "available", 150), ("pet_8d41e0", "Mittens", "cat", 1, "available", 90),
                ("pet_0b7733", "Rex", "dog", 7, "on_hold", 100), ("pet_c9a512", "Luna", "cat", 4, "available", 90),
                ("pet_4e66fd", "Pip", "rabbit", 2, "available", 40), ("pet_a1d2c3", "Shadow", "cat", 10, "adopted", 50),
                ("pet_77be10", "Ziggy", "dog", 0, "available", 200)]
        adopters = [("ad_1932", "Hannah Schmidt", "hannah.s@example.com", True, ["pet_a1d2c3"]),
                    ("ad_2047", "Luis Ortega", "luis.ortega@example.com", True, []),
                    ("ad_2150", "Mei Chen", "mei.chen@example.com", False, []),
                    ("ad_2261", "Jamal Wright", "j.wright@example.com", True, []),
                    ("ad_2388", "Anya Volkova", "anya.v@example.com", True, [])]
        apps = [("app_501", "ad_2047", "pet_0b7733", "approved"), ("app_502", "ad_2150", "pet_8d41e0", "pending"),
                ("app_503", "ad_2261", "pet_5f2a9c", "pending"), ("app_504", "ad_1932", "pet_a1d2c3", "completed"),
                ("app_505", "ad_2388", "pet_c9a512", "rejected")]
        return {
            "pets": [dict(zip(PetInfo.__annotations__, p)) for p in pets],
            "adopters": [dict(zip(AdopterInfo.__annotations__, a)) for a in adopters],
            "applications": [dict(zip(ApplicationInfo.__annotations__, a)) for a in apps],
        }

    def search_pets(self, species: str = "", max_age_years: int = 99) -> dict:
        """List available pets, optionally by species and maximum age.

        Returns:
            {"success": True, "data": List[PetInfo]}
        """
        data = [p for p in self.pets.values() if p["status"] == "available"
                and (not species or p["species"] == species.lower()) and p["age_years"] <= max_age_years]
        return {"success": True, "data": data}

    def get_adopter_by_email(self, email: str) -> dict:
        """Retrieve an adopter record by email.

        Returns:
            {"success": True, "data": AdopterInfo} or {"success": False, "error": str}
        """
        for a in self.adopters.values():
            if a["email"].lower() == email.lower():
                return {"success": True, "data": a}
        return {"success": False, "error": "Adopter not found"}

    def record_home_check(self, adopter_id: str, passed: bool) -> dict:
        """Record the outcome of a home check for an adopter."""
        if adopter_id not in self.adopters:
            return {"success": False, "error": "Adopter not found"}
        self.adopters[adopter_id]["home_check_passed"] = bool(passed)
        return {"success": True, "message": "Home check recorded"}

    def submit_application(self, adopter_id: str, pet_id: str) -> dict:
        """Apply to adopt an available pet. One pending application per adopter/pet pair.

        Returns:
            {"success": True, "data": {"application_id": str}} or error.
        """
        if adopter_id not in self.adopters:
            return {"success": False, "error": "Adopter not found"}
        pet = self.pets.get(pet_id)
        if pet is None:
            return {"success": False, "error": "Pet not found"}
        if pet["status"] != "available":
            return {"success": False, "error": f"Pet is {pet['status']}"}
        for a in self.applications.values():
            if a["adopter_id"] == adopter_id and a["pet_id"] == pet_id and a["status"] == "pending":
                return {"success": False, "error": "Application already pending"}
        app_id = f"app_{501 + len(self.applications)}"
        self.applications[app_id] = {"application_id": app_id, "adopter_id": adopter_id, "pet_id": pet_id, "status": "pending"}
        return {"success": True, "data": {"application_id": app_id}}

    def review_application(self, application_id: str, approve: bool) -> dict:
        """Approve or reject a pending application. Approval needs a passed home check, an adopter below
        the per-adopter limit and an available pet; the pet then goes on hold."""
        app = self.applications.get(application_id)
        if app is None:
            return {"success": False, "error": "Application not found"}
        if app["status"] != "pending":
            return {"success": False, "error": f"Application is {app['status']}"}
        if not approve:
            app["status"] = "rejected"
            return {"success": True, "message": "Application rejected"}
        adopter, pet = self.adopters[app["adopter_id"]], self.pets[app["pet_id"]]
        if not adopter["home_check_passed"]:
            return {"success": False, "error": "Home check not passed"}
        if len(adopter["pets_adopted"]) >= self.MAX_PETS_PER_ADOPTER:
            return {"success": False, "error": "Adopter has reached the pet limit"}
        if pet["status"] != "available":
            return {"success": False, "error": f"Pet is {pet['status']}"}
        app["status"] = "approved"
        pet["status"] = "on_hold"
        return {"success": True, "message": "Application approved; pet on hold"}

    def finalize_adoption(self, application_id: str, fee_paid: int) -> dict:
        """Complete an approved adoption once the full adoption fee is paid."""
        app = self.applications.get(application_id)
        if app is None or app["status"] != "approved":
            return {"success": False, "error": "Application is not approved"}
        pet = self.pets[app["pet_id"]]
        if fee_paid < pet["adoption_fee"]:
            return {"success": False, "error": f"Adoption fee is {pet['adoption_fee']}"}
        app["status"] = "completed"
        pet["status"] = "adopted"
        self.adopters[app["adopter_id"]]["pets_adopted"].append(pet["pet_id"])
        return {"success": True, "data": {"pet_name": pet["name"], "change_due": fee_paid - pet["adoption_fee"]}}

    def return_pet(self, adopter_id: str, pet_id: str) -> dict:
        """Return an adopted pet to the shelter; it becomes available again."""
        adopter = self.adopters.get(adopter_id)
        if adopter is None or pet_id not in adopter["pets_adopted"]:
            return {"success": False, "error": "This adopter did not adopt that pet"}
        adopter["pets_adopted"].remove(pet_id)
        self.pets[pet_id]["status"] = "available"
        return {"success": True, "message": f"{self.pets[pet_id]['name']} returned"}
