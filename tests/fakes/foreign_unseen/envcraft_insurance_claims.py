"""Insurance claims desk in the style of an EnvCraft sandboxed environment."""
import copy
from datetime import date
from typing import Any, Dict, List, Optional


class ClaimError(Exception):
    """Raised when a claims operation violates a business rule."""


DEFAULT_SCENARIO: Dict[str, Any] = {
    "policies": {
        "POL-55-10293": {"holder": "Jonas Weber", "email": "jonas.weber@example.de", "status": "active",
                         "start": "2024-01-01", "end": "2024-12-31",
                         "coverage": {"collision": {"limit": 10000, "deductible": 500, "used": 0},
                                      "theft": {"limit": 5000, "deductible": 250, "used": 1200}}},
        "POL-55-10311": {"holder": "Amara Nwosu", "email": "amara.n@example.com", "status": "active",
                         "start": "2024-03-15", "end": "2025-03-14",
                         "coverage": {"water_damage": {"limit": 20000, "deductible": 1000, "used": 0},
                                      "fire": {"limit": 50000, "deductible": 1000, "used": 0}}},
        "POL-55-10342": {"holder": "Lucía Fernández", "email": "lucia.f@example.es", "status": "lapsed",
                         "start": "2023-06-01", "end": "2024-05-31",
                         "coverage": {"collision": {"limit": 8000, "deductible": 400, "used": 0}}},
        "POL-55-10377": {"holder": "Chen Wei", "email": "chen.wei@example.cn", "status": "active",
                         "start": "2024-02-01", "end": "2025-01-31",
                         "coverage": {"theft": {"limit": 3000, "deductible": 100, "used": 2900}}},
        "POL-55-10390": {"holder": "Sarah Kim", "email": "sarah.kim@example.com", "status": "active",
                         "start": "2024-07-01", "end": "2025-06-30",
                         "coverage": {"liability": {"limit": 100000, "deductible": 0, "used": 0}}},
    },
    "claims": [
        {"claim_id": 7001, "policy": "POL-55-10293", "coverage": "theft", "amount": 1450, "incident_date": "2024-02-10", "status": "paid", "adjuster": "ADJ-04", "payout": 1200},
        {"claim_id": 7002, "policy": "POL-55-10311", "coverage": "water_damage", "amount": 6200, "incident_date": "2024-08-21", "status": "open", "adjuster": None, "payout": 0},
        {"claim_id": 7003, "policy": "POL-55-10377", "coverage": "theft", "amount": 800, "incident_date": "2024-09-02", "status": "open", "adjuster": "ADJ-07", "payout": 0},
        {"claim_id": 7004, "policy": "POL-55-10293", "coverage": "collision", "amount": 3100, "incident_date": "2024-10-05", "status": "open", "adjuster": "ADJ-04", "payout": 0},
        {"claim_id": 7005, "policy": "POL-55-10342", "coverage": "collision", "amount": 900, "incident_date": "2024-04-11", "status": "denied", "adjuster": "ADJ-02", "payout": 0},
    ],
    "adjusters": {
        "ADJ-02": {"name": "Fatima Zahra", "caseload": 0},
        "ADJ-04": {"name": "Robert Hughes", "caseload": 1},
        "ADJ-07": {"name": "Ines Duarte", "caseload": 1},
        "ADJ-09": {"name": "Olga Petrenko", "caseload": 3},
        "ADJ-11": {"name": "Kenji Mori", "caseload": 0},
    },
    "adjuster_ids_by_name": {"Fatima Zahra": "ADJ-02", "Robert Hughes": "ADJ-04", "Ines Duarte": "ADJ-07",
                             "Olga Petrenko": "ADJ-09", "Kenji Mori": "ADJ-11"},
}


class InsuranceClaimsEnv:
    MAX_CASELOAD = 3

    def __init__(self, scenario: Optional[Dict[str, Any]] = None) -> None:
        self._load_scenario(scenario if scenario is not None else DEFAULT_SCENARIO)

    def _load_scenario(self, config: Dict[str, Any]) -> None:
        cfg = copy.deepcopy(config)
        self.policies: Dict[str, dict] = cfg["policies"]
        self.claims: List[dict] = cfg["claims"]
        self.adjusters: Dict[str, dict] = cfg["adjusters"]
        self.adjuster_ids_by_name: Dict[str, str] = cfg["adjuster_ids_by_name"]

    def get_env_state(self) -> Dict[str, Any]:
        return copy.deepcopy({"policies": self.policies, "claims": self.claims, "adjusters": self.adjusters,
                              "adjuster_ids_by_name": self.adjuster_ids_by_name})

    def _claim(self, claim_id: int) -> dict:
        for c in self.claims:
            if c["claim_id"] == claim_id:
                return c
        raise KeyError(f"Claim {claim_id} not found")

    def find_policy_by_email(self, email: str) -> List[str]:
        """Return the policy numbers held by the customer with this email."""
        found = [n for n, p in self.policies.items() if p["email"].lower() == email.strip().lower()]
        if not found:
            raise KeyError(f"No policies for {email}")
        return found

    def get_policy(self, policy_number: str) -> Dict[str, Any]:
        """Return holder, status, period and remaining limit for each coverage of a policy."""
        if policy_number not in self.policies:
            raise KeyError(f"Policy {policy_number} not found")
        p = self.policies[policy_number]
        remaining = {k: v["limit"] - v["used"] for k, v in p["coverage"].items()}
        return {"holder": p["holder"], "status": p["status"], "start": p["start"], "end": p["end"], "remaining": remaining}

    def list_claims(self, policy_number: str, status: Optional[str] = None) -> List[Dict[str, Any]]:
        """List the claims on a policy, optionally only those with the given status."""
        if policy_number not in self.policies:
            raise KeyError(f"Policy {policy_number} not found")
        return [dict(c) for c in self.claims if c["policy"] == policy_number and (status is None or c["status"] == status)]

    def file_claim(self, policy_number: str, coverage: str, amount: int, incident_date: str) -> int:
        """File a new claim. The policy must be active, include the coverage, and the incident (YYYY-MM-DD)
        must fall inside the policy period. Returns the new claim id."""
        if policy_number not in self.policies:
            raise KeyError(f"Policy {policy_number} not found")
        p = self.policies[policy_number]
        if p["status"] != "active":
            raise ClaimError(f"Policy is {p['status']}")
        if coverage not in p["coverage"]:
            raise ClaimError(f"Policy does not cover {coverage}")
        if amount <= 0:
            raise ValueError("Amount must be positive")
        day = date.fromisoformat(incident_date)
        if not date.fromisoformat(p["start"]) <= day <= date.fromisoformat(p["end"]):
            raise ClaimError("Incident date is outside the policy period")
        claim_id = max(c["claim_id"] for c in self.claims) + 1 if self.claims else 7001
        self.claims.append({"claim_id": claim_id, "policy": policy_number, "coverage": coverage, "amount": amount,
                            "incident_date": incident_date, "status": "open", "adjuster": None, "payout": 0})
        return claim_id

    def assign_adjuster(self, claim_id: int, adjuster_name: str) -> str:
        """Assign (or reassign) an open claim to an adjuster by full name. Adjusters take at most 3 open claims."""
        claim = self._claim(claim_id)
        if claim["status"] != "open":
            raise ClaimError("Only open claims can be assigned")
        adj_id = self.adjuster_ids_by_name.get(adjuster_name)
        if adj_id is None:
            raise KeyError(f"No adjuster named {adjuster_name}")
        if claim["adjuster"] == adj_id:
            raise ClaimError("Claim already assigned to this adjuster")
        if self.adjusters[adj_id]["caseload"] >= self.MAX_CASELOAD:
            raise ClaimError(f"{adjuster_name} has a full caseload")
        if claim["adjuster"] is not None:
            self.adjusters[claim["adjuster"]]["caseload"] -= 1
        claim["adjuster"] = adj_id
        self.adjusters[adj_id]["caseload"] += 1
        return adj_id

    def settle_claim(self, claim_id: int) -> int:
        """Pay an assigned open claim: payout = min(amount - deductible, remaining limit). Returns the payout."""
        claim = self._claim(claim_id)
        if claim["status"] != "open":
            raise ClaimError(f"Claim is {claim['status']}")
        if claim["adjuster"] is None:
            raise ClaimError("Claim has no adjuster")
        cov = self.policies[claim["policy"]]["coverage"][claim["coverage"]]
        payout = min(claim["amount"] - cov["deductible"], cov["limit"] - cov["used"])
        if payout <= 0:
            raise ClaimError("Nothing payable after deductible and limit")
        cov["used"] += payout
        claim["payout"], claim["status"] = payout, "paid"
        self.adjusters[claim["adjuster"]]["caseload"] -= 1
        return payout

    def deny_claim(self, claim_id: int) -> str:
        """Deny an open claim, freeing the adjuster's slot. Returns the new status."""
        claim = self._claim(claim_id)
        if claim["status"] != "open":
            raise ClaimError(f"Claim is {claim['status']}")
        if claim["adjuster"] is not None:
            self.adjusters[claim["adjuster"]]["caseload"] -= 1
        claim["status"] = "denied"
        return claim["status"]
