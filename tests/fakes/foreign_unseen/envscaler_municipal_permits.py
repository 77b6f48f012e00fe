"""Municipal permit office in the style of an EnvScaler synthesized environment."""
import copy
import re
from typing import Any, Dict, Optional


def _default_config() -> Dict[str, Any]:
    return {
        "applicants": {
            "APL-00817": {"name": "Nora Lindqvist", "email": "nora.l@example.org", "phone": "555-0141"},
            "APL-00823": {"name": "Rashid Karimi", "email": "rkarimi@example.org", "phone": "555-0178"},
            "APL-00851": {"name": "Bella Cruz Bakery LLC", "email": "owner@bellacruz.example", "phone": "555-0102"},
            "APL-00866": {"name": "Peter Okafor", "email": "p.okafor@example.org", "phone": "555-0199"},
            "APL-00870": {"name": "Wen Zhao", "email": "wen.zhao@example.org", "phone": "555-0123"},
        },
        "parcels": {
            "P-1142-07": {"address": "12 Elm Street", "zoning": "residential", "owner_id": "APL-00817"},
            "P-1142-09": {"address": "16 Elm Street", "zoning": "residential", "owner_id": "APL-00823"},
            "P-2210-01": {"address": "300 Market Avenue", "zoning": "commercial", "owner_id": "APL-00851"},
            "P-2210-04": {"address": "318 Market Avenue", "zoning": "commercial", "owner_id": "APL-00866"},
            "P-3307-12": {"address": "5 Mill Road", "zoning": "industrial", "owner_id": "APL-00870"},
        },
        "permits": {
            "PRM-2024-0031": {"applicant_id": "APL-00817", "parcel_id": "P-1142-07", "type": "building", "status": "submitted", "fee_paid": False, "inspection_date": None},
            "PRM-2024-0032": {"applicant_id": "APL-00851", "parcel_id": "P-2210-01", "type": "signage", "status": "paid", "fee_paid": True, "inspection_date": None},
            "PRM-2024-0035": {"applicant_id": "APL-00866", "parcel_id": "P-2210-04", "type": "electrical", "status": "inspection_scheduled", "fee_paid": True, "inspection_date": "2024-10-15"},
            "PRM-2024-0038": {"applicant_id": "APL-00870", "parcel_id": "P-3307-12", "type": "building", "status": "inspection_passed", "fee_paid": True, "inspection_date": "2024-09-30"},
            "PRM-2024-0040": {"applicant_id": "APL-00823", "parcel_id": "P-1142-09", "type": "electrical", "status": "approved", "fee_paid": True, "inspection_date": "2024-09-02"},
        },
        "fee_schedule": {"building": 450, "electrical": 120, "signage": 75},
        "zoning_rules": {"residential": ["building", "electrical"], "commercial": ["building", "electrical", "signage"], "industrial": ["building", "electrical"]},
        "inspection_calendar": {"2024-10-15": 2, "2024-10-16": 0, "2024-10-17": 1, "2024-10-18": 0, "2024-10-21": 0},
        "daily_inspection_capacity": 2,
        "next_permit_number": 41,
    }


class MunicipalPermitOffice:
    """City permit desk: applications, fees, inspections, approvals."""

    OPEN_STATUSES = ("submitted", "paid", "inspection_scheduled", "inspection_passed")

    def __init__(self, init_config: Optional[Dict[str, Any]] = None):
        cfg = _default_config()
        cfg.update(copy.deepcopy(init_config or {}))
        self.applicants: Dict[str, dict] = cfg["applicants"]
        self.parcels: Dict[str, dict] = cfg["parcels"]
        self.permits: Dict[str, dict] = cfg["permits"]
        self.fee_schedule: Dict[str, int] = cfg["fee_schedule"]
        self.zoning_rules: Dict[str, list] = cfg["zoning_rules"]
        self.inspection_calendar: Dict[str, int] = cfg["inspection_calendar"]
        self.daily_inspection_capacity: int = cfg["daily_inspection_capacity"]
        self.next_permit_number: int = cfg["next_permit_number"]

    def lookup_parcel_by_address(self, address: str) -> dict:
        """Find the parcel at a street address.

        Args:
            address: Street address, e.g. "12 Elm Street".
        Returns:
            {"success": True, "data": {"parcel_id", "zoning", "owner_id"}} or {"success": False, "error": str}
        """
        for pid, p in self.parcels.items():
            if p["address"].lower() == address.strip().lower():
                return {"success": True, "data": {"parcel_id": pid, "zoning": p["zoning"], "owner_id": p["owner_id"]}}
        return {"success": False, "error": "Address not found"}

    def find_applicant_by_email(self, email: str) -> dict:
        """Return the applicant id and name for an email address."""
        for aid, a in self.applicants.items():
            if a["email"].lower() == email.strip().lower():
                return {"success": True, "data": {"applicant_id": aid, "name": a["name"]}}
        return {"success": False, "error": "Applicant not found"}

    def get_permit(self, permit_id: str) -> dict:
        """Return the full record of one permit."""
        if permit_id not in self.permits:
            return {"success": False, "error": "Permit not found"}
        return {"success": True, "data": dict(self.permits[permit_id], permit_id=permit_id)}

    def submit_application(self, applicant_id: str, parcel_id: str, permit_type: str) -> dict:
        """Open a new permit application. Only the parcel owner may apply, the zoning must allow
        the permit type, and no open permit of the same type may exist on the parcel.

        Returns:
            {"success": True, "data": {"permit_id": str, "fee": int}} or error.
        """
        if applicant_id not in self.applicants:
            return {"success": False, "error": "Applicant not found"}
        parcel = self.parcels.get(parcel_id)
        if parcel is None:
            return {"success": False, "error": "Parcel not found"}
        if parcel["owner_id"] != applicant_id:
            return {"success": False, "error": "Applicant does not own this parcel"}
        if permit_type not in self.zoning_rules.get(parcel["zoning"], []):
            return {"success": False, "error": f"{permit_type} permits not allowed in {parcel['zoning']} zone"}
        for p in self.permits.values():
            if p["parcel_id"] == parcel_id and p["type"] == permit_type and p["status"] in self.OPEN_STATUSES:
                return {"success": False, "error": "An open permit of this type already exists"}
        permit_id = f"PRM-2024-{self.next_permit_number:04d}"
        self.next_permit_number += 1
        self.permits[permit_id] = {"applicant_id": applicant_id, "parcel_id": parcel_id, "type": permit_type,
                                   "status": "submitted", "fee_paid": False, "inspection_date": None}
        return {"success": True, "data": {"permit_id": permit_id, "fee": self.fee_schedule[permit_type]}}

    def pay_fee(self, permit_id: str, amount: int) -> dict:
        """Pay the permit fee; the amount must equal the scheduled fee exactly."""
        p = self.permits.get(permit_id)
        if p is None:
            return {"success": False, "error": "Permit not found"}
        if p["fee_paid"]:
            return {"success": False, "error": "Fee already paid"}
        if p["status"] != "submitted":
            return {"success": False, "error": f"Cannot pay a permit in status {p['status']}"}
        if amount != self.fee_schedule[p["type"]]:
            return {"success": False, "error": f"Fee is {self.fee_schedule[p['type']]}"}
        p["fee_paid"] = True
        p["status"] = "paid"
        return {"success": True, "message": "Fee recorded"}

    def schedule_inspection(self, permit_id: str, date: str) -> dict:
        """Book an inspection (YYYY-MM-DD) for a paid permit on a calendar day with free capacity."""
        p = self.permits.get(permit_id)
        if p is None:
            return {"success": False, "error": "Permit not found"}
        if p["status"] != "paid":
            return {"success": False, "error": "Permit must be paid and not yet scheduled"}
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) or date not in self.inspection_calendar:
            return {"success": False, "error": "Date is not an inspection day"}
        if self.inspection_calendar[date] >= self.daily_inspection_capacity:
            return {"success": False, "error": "No inspection slots left that day"}
        self.inspection_calendar[date] += 1
        p["inspection_date"] = date
        p["status"] = "inspection_scheduled"
        return {"success": True, "data": {"permit_id": permit_id, "inspection_date": date}}

    def record_inspection_result(self, permit_id: str, passed: bool) -> dict:
        """Record the inspector's verdict. A failed inspection returns the permit to 'paid' so it can be rescheduled."""
        p = self.permits.get(permit_id)
        if p is None or p["status"] != "inspection_scheduled":
            return {"success": False, "error": "No scheduled inspection for this permit"}
        p["status"] = "inspection_passed" if passed else "paid"
        return {"success": True, "data": {"status": p["status"]}}

    def approve_permit(self, permit_id: str) -> dict:
        """Approve a permit whose inspection passed."""
        p = self.permits.get(permit_id)
        if p is None:
            return {"success": False, "error": "Permit not found"}
        if p["status"] != "inspection_passed":
            return {"success": False, "error": "Inspection has not passed"}
        p["status"] = "approved"
        return {"success": True, "message": f"{permit_id} approved"}

    def withdraw_application(self, permit_id: str) -> dict:
        """Withdraw an open application; a booked inspection slot is released. Fees are not refunded."""
        p = self.permits.get(permit_id)
        if p is None:
            return {"success": False, "error": "Permit not found"}
        if p["status"] not in self.OPEN_STATUSES:
            return {"success": False, "error": f"Permit is already {p['status']}"}
        if p["status"] == "inspection_scheduled":
            self.inspection_calendar[p["inspection_date"]] -= 1
            p["inspection_date"] = None
        p["status"] = "withdrawn"
        return {"success": True, "message": f"{permit_id} withdrawn"}
