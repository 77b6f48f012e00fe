"""Gym membership backend in the style of a BFCL multi-turn API class."""
from copy import deepcopy
from typing import Dict, List, Optional

DEFAULT_STATE = {
    "members": {
        "M-7Q2K": {"name": "Alice Moreau", "email": "alice.moreau@example.com", "plan": "basic", "status": "active", "visits": 12},
        "M-3ZP9": {"name": "Bob Nakamura", "email": "bob.n@example.com", "plan": "premium", "status": "active", "visits": 40},
        "M-8XW1": {"name": "Carla Diaz", "email": "carla.diaz@example.com", "plan": "basic", "status": "frozen", "visits": 3},
        "M-5LM4": {"name": "Dev Patel", "email": "dev.patel@example.com", "plan": "student", "status": "active", "visits": 7},
        "M-1RT6": {"name": "Erin O'Neil", "email": "erin.oneil@example.com", "plan": "premium", "status": "cancelled", "visits": 55},
        "M-9VB3": {"name": "Farah Haddad", "email": "farah.h@example.com", "plan": "basic", "status": "active", "visits": 0},
    },
    "classes": {
        "CL-101": {"title": "Morning Yoga", "instructor": "Grace Lin", "capacity": 3, "enrolled": ["M-3ZP9"], "premium_only": False},
        "CL-102": {"title": "Spin Blast", "instructor": "Hugo Berg", "capacity": 2, "enrolled": ["M-3ZP9", "M-7Q2K"], "premium_only": False},
        "CL-103": {"title": "Olympic Lifting", "instructor": "Ivan Petrov", "capacity": 4, "enrolled": [], "premium_only": True},
        "CL-104": {"title": "Pilates Core", "instructor": "Grace Lin", "capacity": 5, "enrolled": ["M-5LM4"], "premium_only": False},
        "CL-105": {"title": "Boxing Basics", "instructor": "Jon Okafor", "capacity": 6, "enrolled": [], "premium_only": True},
    },
    "plan_prices": {"student": 19.0, "basic": 29.0, "premium": 59.0},
    "current_member": None,
}


class GymMembershipAPI:
    def __init__(self):
        self.members: Dict[str, dict] = {}
        self.classes: Dict[str, dict] = {}
        self.plan_prices: Dict[str, float] = {}
        self.current_member: Optional[str] = None
        self.long_context = False
        self._api_description = "Manages gym members, plans and class bookings."

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        default = deepcopy(DEFAULT_STATE)
        self.members = scenario.get("members", default["members"])
        self.classes = scenario.get("classes", default["classes"])
        self.plan_prices = scenario.get("plan_prices", default["plan_prices"])
        self.current_member = scenario.get("current_member", default["current_member"])
        self.long_context = long_context

    def login(self, email: str) -> Dict[str, str]:
        """Log in as the member with the given email address.

        Args:
            email (str): The member's email address.
        Returns:
            member_id (str): The id of the logged-in member.
        """
        for member_id, member in self.members.items():
            if member["email"].lower() == email.lower():
                if member["status"] == "cancelled":
                    return {"error": "Membership is cancelled."}
                self.current_member = member_id
                return {"member_id": member_id}
        return {"error": f"No member with email {email}."}

    def logout(self) -> Dict[str, bool]:
        """Log out the current member.

        Returns:
            logout_status (bool): True if a member was logged out.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        self.current_member = None
        return {"logout_status": True}

    def list_classes(self, instructor: Optional[str] = None) -> Dict[str, List[dict]]:
        """List group classes with remaining spots, optionally filtered by instructor name.

        Args:
            instructor (str): [Optional] Instructor full name to filter on.
        Returns:
            classes (List[dict]): Each with class_id, title, instructor, spots_left, premium_only.
        """
        out = []
        for class_id, c in self.classes.items():
            if instructor and c["instructor"].lower() != instructor.lower():
                continue
            out.append({"class_id": class_id, "title": c["title"], "instructor": c["instructor"],
                        "spots_left": c["capacity"] - len(c["enrolled"]), "premium_only": c["premium_only"]})
        return {"classes": out}

    def get_member_profile(self) -> Dict[str, dict]:
        """Get the profile of the logged-in member.

        Returns:
            profile (dict): name, email, plan, status, visits and monthly_fee.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        m = self.members[self.current_member]
        return {"profile": dict(m, member_id=self.current_member, monthly_fee=self.plan_prices[m["plan"]])}

    def book_class(self, class_id: str) -> Dict[str, str]:
        """Book the logged-in member into a class.

        Args:
            class_id (str): The class identifier, e.g. 'CL-101'.
        Returns:
            booking_status (str): 'booked' on success.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        member = self.members[self.current_member]
        if member["status"] != "active":
            return {"error": f"Membership is {member['status']}; cannot book."}
        c = self.classes.get(class_id)
        if c is None:
            return {"error": f"Class {class_id} not found."}
        if c["premium_only"] and member["plan"] != "premium":
            return {"error": "This class requires a premium plan."}
        if self.current_member in c["enrolled"]:
            return {"error": "Already booked into this class."}
        if len(c["enrolled"]) >= c["capacity"]:
            return {"error": "Class is full."}
        c["enrolled"].append(self.current_member)
        return {"booking_status": "booked"}

    def cancel_booking(self, class_id: str) -> Dict[str, str]:
        """Cancel the logged-in member's booking for a class.

        Args:
            class_id (str): The class identifier.
        Returns:
            booking_status (str): 'cancelled' on success.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        c = self.classes.get(class_id)
        if c is None or self.current_member not in c["enrolled"]:
            return {"error": "No such booking."}
        c["enrolled"].remove(self.current_member)
        return {"booking_status": "cancelled"}

    def change_plan(self, new_plan: str) -> Dict[str, float]:
        """Switch the logged-in member to another plan. Premium-only bookings are dropped on downgrade.

        Args:
            new_plan (str): One of 'student', 'basic', 'premium'.
        Returns:
            new_monthly_fee (float): The fee of the new plan.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        if new_plan not in self.plan_prices:
            return {"error": f"Unknown plan {new_plan}."}
        member = self.members[self.current_member]
        if member["plan"] == new_plan:
            return {"error": "Already on this plan."}
        member["plan"] = new_plan
        if new_plan != "premium":
            for c in self.classes.values():
                if c["premium_only"] and self.current_member in c["enrolled"]:
                    c["enrolled"].remove(self.current_member)
        return {"new_monthly_fee": self.plan_prices[new_plan]}

    def freeze_membership(self) -> Dict[str, str]:
        """Freeze the logged-in member's membership; all bookings are released.

        Returns:
            status (str): 'frozen'.
        """
        if self.current_member is None:
            return {"error": "No member is logged in."}
        member = self.members[self.current_member]
        if member["status"] != "active":
            return {"error": f"Only active memberships can be frozen (currently {member['status']})."}
        member["status"] = "frozen"
        for c in self.classes.values():
            if self.current_member in c["enrolled"]:
                c["enrolled"].remove(self.current_member)
        return {"status": "frozen"}
