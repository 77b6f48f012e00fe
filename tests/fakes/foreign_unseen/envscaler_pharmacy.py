"""Pharmacy prescription environment in the style of an EnvScaler synthesized domain."""
from copy import deepcopy
from typing import Dict, List, Optional, TypedDict


class PrescriptionInfo(TypedDict):
    rx_id: str
    patient_id: str
    drug_code: str
    quantity: int
    refills_left: int
    status: str  # "active" | "on_hold" | "expired"


DEFAULT_CONFIG = {
    "patients": [
        {"patient_id": "pt_a81f", "name": "Rosa Martinez", "date_of_birth": "1958-03-14", "allergies": ["penicillin"]},
        {"patient_id": "pt_c02e", "name": "Thomas Becker", "date_of_birth": "1990-07-30", "allergies": []},
        {"patient_id": "pt_77d1", "name": "Aiko Suzuki", "date_of_birth": "1983-12-02", "allergies": ["ibuprofen"]},
        {"patient_id": "pt_3b9c", "name": "Kwame Mensah", "date_of_birth": "2001-05-19", "allergies": []},
        {"patient_id": "pt_e4a0", "name": "Lena Kowalski", "date_of_birth": "1975-09-08", "allergies": ["sulfamethoxazole"]},
    ],
    "prescriptions": [
        {"rx_id": "rx_10934", "patient_id": "pt_a81f", "drug_code": "D-AMX500", "quantity": 21, "refills_left": 1, "status": "active"},
        {"rx_id": "rx_10935", "patient_id": "pt_a81f", "drug_code": "D-LIS10", "quantity": 30, "refills_left": 5, "status": "active"},
        {"rx_id": "rx_10940", "patient_id": "pt_c02e", "drug_code": "D-IBU400", "quantity": 20, "refills_left": 0, "status": "active"},
        {"rx_id": "rx_10951", "patient_id": "pt_77d1", "drug_code": "D-MET850", "quantity": 60, "refills_left": 3, "status": "on_hold"},
        {"rx_id": "rx_10962", "patient_id": "pt_3b9c", "drug_code": "D-SAL100", "quantity": 1, "refills_left": 2, "status": "active"},
        {"rx_id": "rx_10977", "patient_id": "pt_e4a0", "drug_code": "D-LIS10", "quantity": 30, "refills_left": 0, "status": "expired"},
        {"rx_id": "rx_10980", "patient_id": "pt_77d1", "drug_code": "D-IBU400", "quantity": 20, "refills_left": 2, "status": "active"},
    ],
    "drugs": [
        {"drug_code": "D-AMX500", "name": "Amoxicillin 500mg", "stock": 40, "ingredient": "penicillin"},
        {"drug_code": "D-LIS10", "name": "Lisinopril 10mg", "stock": 90, "ingredient": "lisinopril"},
        {"drug_code": "D-IBU400", "name": "Ibuprofen 400mg", "stock": 100, "ingredient": "ibuprofen"},
        {"drug_code": "D-MET850", "name": "Metformin 850mg", "stock": 120, "ingredient": "metformin"},
        {"drug_code": "D-SAL100", "name": "Salbutamol Inhaler", "stock": 0, "ingredient": "salbutamol"},
    ],
    "dispense_log": [],
}


class PharmacyPrescriptionEnv:
    def __init__(self, init_config: Optional[dict] = None):
        """Community pharmacy: patients, prescriptions and drug stock."""
        init_config = deepcopy(init_config if init_config is not None else DEFAULT_CONFIG)
        self.patients: Dict[str, dict] = {}
        self.prescriptions: Dict[str, PrescriptionInfo] = {}
        self.drugs: Dict[str, dict] = {}
        self.dispense_log: List[dict] = []
        self.init_config = init_config
        self._init_from_config(init_config)

    def _init_from_config(self, cfg: dict) -> None:
        for p in cfg.get("patients", []):
            self.patients[p["patient_id"]] = dict(p, allergies=list(p.get("allergies", [])))
        for r in cfg.get("prescriptions", []):
            self.prescriptions[r["rx_id"]] = dict(r)
        for d in cfg.get("drugs", []):
            self.drugs[d["drug_code"]] = dict(d)
        self.dispense_log = [dict(e) for e in cfg.get("dispense_log", [])]

    def find_patient_by_name(self, name: str) -> dict:
        """Find patients whose full name matches (case-insensitive).

        Args:
            name (str): Patient full name.
        Returns:
            dict: {"success": True, "data": List[dict]} or {"success": False, "error": str}
        """
        hits = [p for p in self.patients.values() if p["name"].lower() == name.strip().lower()]
        if not hits:
            return {"success": False, "error": "No patient with that name"}
        return {"success": True, "data": hits}

    def list_prescriptions(self, patient_id: str, status: str = "") -> dict:
        """List a patient's prescriptions, optionally filtered by status.

        Args:
            patient_id (str): Patient identifier.
            status (str): Optional status filter ("active", "on_hold", "expired").
        Returns:
            dict: {"success": True, "data": List[PrescriptionInfo]} or error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": "Patient not found"}
        data = [r for r in self.prescriptions.values()
                if r["patient_id"] == patient_id and (not status or r["status"] == status)]
        return {"success": True, "data": data}

    def get_drug_info(self, drug_code: str) -> dict:
        """Get name, active ingredient and stock for a drug.

        Args:
            drug_code (str): Drug code.
        Returns:
            dict: {"success": True, "data": dict} or error.
        """
        d = self.drugs.get(drug_code)
        if d is None:
            return {"success": False, "error": "Drug not found"}
        return {"success": True, "data": d}

    def dispense_prescription(self, rx_id: str) -> dict:
        """Dispense one fill of an active prescription. Needs a refill left, enough stock,
        and the patient must not be allergic to the active ingredient.

        Args:
            rx_id (str): Prescription identifier.
        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        rx = self.prescriptions.get(rx_id)
        if rx is None:
            return {"success": False, "error": "Prescription not found"}
        if rx["status"] != "active":
            return {"success": False, "error": f"Prescription is {rx['status']}"}
        if rx["refills_left"] <= 0:
            return {"success": False, "error": "No refills left"}
        drug = self.drugs[rx["drug_code"]]
        if drug["ingredient"] in self.patients[rx["patient_id"]]["allergies"]:
            return {"success": False, "error": "Patient is allergic to this ingredient"}
        if drug["stock"] < rx["quantity"]:
            return {"success": False, "error": "Insufficient stock"}
        drug["stock"] -= rx["quantity"]
        rx["refills_left"] -= 1
        self.dispense_log.append({"rx_id": rx_id, "drug_code": drug["drug_code"], "quantity": rx["quantity"]})
        return {"success": True, "message": f"Dispensed {rx['quantity']} x {drug['name']}"}

    def put_on_hold(self, rx_id: str) -> dict:
        """Place an active prescription on hold.

        Args:
            rx_id (str): Prescription identifier.
        Returns:
            dict: {"success": True, "message": str} or error.
        """
        rx = self.prescriptions.get(rx_id)
        if rx is None:
            return {"success": False, "error": "Prescription not found"}
        if rx["status"] != "active":
            return {"success": False, "error": "Only active prescriptions can be put on hold"}
        rx["status"] = "on_hold"
        return {"success": True, "message": f"{rx_id} placed on hold"}

    def resume_prescription(self, rx_id: str) -> dict:
        """Resume a prescription that is on hold.

        Args:
            rx_id (str): Prescription identifier.
        Returns:
            dict: {"success": True, "message": str} or error.
        """
        rx = self.prescriptions.get(rx_id)
        if rx is None or rx["status"] != "on_hold":
            return {"success": False, "error": "Prescription is not on hold"}
        rx["status"] = "active"
        return {"success": True, "message": f"{rx_id} resumed"}

    def record_allergy(self, patient_id: str, ingredient: str) -> dict:
        """Add an ingredient to a patient's allergy list.

        Args:
            patient_id (str): Patient identifier.
            ingredient (str): Active ingredient name, lower case.
        Returns:
            dict: {"success": True, "data": List[str]} (the updated allergy list) or error.
        """
        p = self.patients.get(patient_id)
        if p is None:
            return {"success": False, "error": "Patient not found"}
        ingredient = ingredient.strip().lower()
        if not ingredient:
            return {"success": False, "error": "Ingredient must be non-empty"}
        if ingredient in p["allergies"]:
            return {"success": False, "error": "Allergy already recorded"}
        p["allergies"].append(ingredient)
        return {"success": True, "data": list(p["allergies"])}

    def restock_drug(self, drug_code: str, amount: int) -> dict:
        """Add units to a drug's stock (1 to 500 per delivery).

        Args:
            drug_code (str): Drug code.
            amount (int): Units delivered.
        Returns:
            dict: {"success": True, "data": {"stock": int}} or error.
        """
        d = self.drugs.get(drug_code)
        if d is None:
            return {"success": False, "error": "Drug not found"}
        if not isinstance(amount, int) or amount < 1 or amount > 500:
            return {"success": False, "error": "Amount must be between 1 and 500"}
        d["stock"] += amount
        return {"success": True, "data": {"stock": d["stock"]}}
