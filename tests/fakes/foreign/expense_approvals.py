"""EnvScaler style: config: dict | None = None, Decimal amounts, login, {"success": ...} results."""

import copy
from datetime import date
from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")


def _line(line: int, category: str, amount: str, receipt: bool) -> dict:
    return {"line": line, "category": category, "amount": amount, "receipt": receipt}


DEFAULT_CONFIG = {
    "employees": {eid: {"name": n, "email": e, "username": u, "password": pw, "role": r,
                        "manager_id": m, "approval_limit": lim}
                  for eid, n, e, u, pw, r, m, lim in [
                      ("E-07", "Ines Duarte", "ines.duarte@acme.test", "iduarte", "tulip-42",
                       "employee", "E-02", None),
                      ("E-11", "Jonas Berg", "jonas.berg@acme.test", "jberg", "fjord-9",
                       "employee", "E-02", None),
                      ("E-15", "Keiko Sato", "keiko.sato@acme.test", "ksato", "maple-77",
                       "employee", "E-03", None),
                      ("E-02", "Marta Nowak", "marta.nowak@acme.test", "mnowak", "orchid-5",
                       "manager", "E-01", "500.00"),
                      ("E-03", "Daniel Osei", "daniel.osei@acme.test", "dosei", "cedar-31",
                       "manager", "E-01", "300.00"),
                      ("E-01", "Claire Dubois", "claire.dubois@acme.test", "cdubois", "atlas-8",
                       "finance", None, "10000.00")]},
    "category_caps": {"meals": "60.00", "travel": "800.00", "lodging": "250.00",
                      "software": "150.00", "office": "100.00"},
    "receipt_required_over": "25.00",
    "reports": {
        "EXP-1001": {"employee_id": "E-07", "title": "Client visit Porto", "status": "submitted",
                     "submitted_on": "2025-05-19", "items": [
                         _line(1, "travel", "212.40", True), _line(2, "meals", "38.50", True)]},
        "EXP-1002": {"employee_id": "E-11", "title": "Team offsite supplies", "status": "draft",
                     "submitted_on": None, "items": [_line(1, "office", "64.99", False)]},
        "EXP-1003": {"employee_id": "E-15", "title": "Conference Berlin", "status": "submitted",
                     "submitted_on": "2025-05-21", "items": [
                         _line(1, "lodging", "230.00", True), _line(2, "travel", "189.00", True)]},
        "EXP-1004": {"employee_id": "E-07", "title": "Design tool licence", "status": "approved",
                     "submitted_on": "2025-05-02", "items": [_line(1, "software", "119.00", True)]},
        "EXP-1005": {"employee_id": "E-11", "title": "Taxi to airport", "status": "rejected",
                     "submitted_on": "2025-04-28", "items": [_line(1, "travel", "45.00", False)]},
    },
    "next_report_number": 1006,
}


class ExpenseApprovals:
    def __init__(self, config: dict | None = None):
        cfg = copy.deepcopy(DEFAULT_CONFIG if config is None else config)
        self.employees = cfg["employees"]
        for emp in self.employees.values():
            emp["approval_limit"] = Decimal(emp.get("approval_limit") or "0")
        self.category_caps = {k: Decimal(v) for k, v in cfg["category_caps"].items()}
        self.receipt_required_over = Decimal(cfg["receipt_required_over"])
        self.reports = cfg["reports"]
        for item in (i for report in self.reports.values() for i in report["items"]):
            item["amount"] = Decimal(item["amount"])
        self.next_report_number = cfg.get("next_report_number", 1000 + len(self.reports) + 1)
        self.session_employee_id: str | None = None

    def _total(self, report: dict) -> Decimal:
        return sum((i["amount"] for i in report["items"]), Decimal("0.00"))

    def _view(self, report_id: str) -> dict:
        report = self.reports[report_id]
        return {"report_id": report_id, **copy.deepcopy(report), "total": self._total(report)}

    def _guard(self, report_id: str, status: str, owner_only: bool = False):
        if self.session_employee_id is None:
            return None, {"success": False, "error": "Please log in first"}
        report = self.reports.get(report_id)
        if report is None:
            return None, {"success": False, "error": f"No report {report_id}"}
        if report["status"] != status:
            return None, {"success": False, "error": f"Report is {report['status']}, not {status}"}
        if owner_only and report["employee_id"] != self.session_employee_id:
            return None, {"success": False, "error": "Only the report's owner may do this"}
        return report, None

    def login(self, username: str, password: str) -> dict:
        """Log in as an employee; other tools act on behalf of this employee.

        Args:
            username (str): Company username, e.g. "iduarte".
            password (str): The employee's password.
        """
        for eid, emp in self.employees.items():
            if emp["username"] == username and emp["password"] == password:
                self.session_employee_id = eid
                return {"success": True, "data": {"employee_id": eid, "role": emp["role"]}}
        return {"success": False, "error": "Wrong username or password"}

    def list_reports(self, status: str | None = None) -> dict:
        """List reports the logged-in employee owns or must act on (as manager or finance).

        Args:
            status (str | None): draft, submitted, approved, rejected or reimbursed; None for all.
        """
        me = self.session_employee_id
        if me is None:
            return {"success": False, "error": "Please log in first"}
        role = self.employees[me]["role"]
        rows = [self._view(rid) for rid, r in self.reports.items()
                if (status is None or r["status"] == status) and (
                    r["employee_id"] == me or role == "finance"
                    or self.employees[r["employee_id"]]["manager_id"] == me)]
        return {"success": True, "data": rows}

    def create_report(self, title: str) -> dict:
        """Create an empty draft report owned by the logged-in employee.

        Args:
            title (str): Short description of the trip or purchase.
        """
        if self.session_employee_id is None:
            return {"success": False, "error": "Please log in first"}
        if not title.strip():
            return {"success": False, "error": "Title must not be empty"}
        report_id = f"EXP-{self.next_report_number}"
        self.next_report_number += 1
        self.reports[report_id] = {"employee_id": self.session_employee_id, "title": title,
                                   "status": "draft", "submitted_on": None, "items": []}
        return {"success": True, "data": {"report_id": report_id}}

    def add_expense_item(self, report_id: str, category: str, amount: str,
                         has_receipt: bool) -> dict:
        """Add a line to one of your draft reports, within the category's per-item cap.

        Args:
            report_id (str): Id of a draft report you own.
            category (str): meals, travel, lodging, software or office.
            amount (str): Amount in EUR with two decimals, e.g. "42.10".
            has_receipt (bool): Whether a receipt is attached.
        """
        report, error = self._guard(report_id, "draft", owner_only=True)
        if error:
            return error
        try:
            value = Decimal(amount)
        except InvalidOperation:
            return {"success": False, "error": f"Bad amount {amount!r}"}
        cap = self.category_caps.get(category)
        if cap is None or not Decimal("0") < value <= cap or value != value.quantize(CENT):
            return {"success": False, "error": f"Amount must be within the {category!r} cap"}
        line = max((i["line"] for i in report["items"]), default=0) + 1
        report["items"].append({"line": line, "category": category,
                                "amount": value, "receipt": has_receipt})
        return {"success": True, "data": {"line": line, "total": self._total(report)}}

    def submit_report(self, report_id: str) -> dict:
        """Submit your draft for approval; every line over the threshold needs a receipt.

        Args:
            report_id (str): Id of a draft report you own.
        """
        report, error = self._guard(report_id, "draft", owner_only=True)
        if error or not report["items"]:
            return error or {"success": False, "error": "The report has no items"}
        if any(i["amount"] > self.receipt_required_over and not i["receipt"]
               for i in report["items"]):
            return {"success": False, "error": "A receipt is missing for a line over the limit"}
        report["status"], report["submitted_on"] = "submitted", date.today().isoformat()
        return {"success": True, "data": self._view(report_id)}

    def decide_report(self, report_id: str, approve: bool) -> dict:
        """Approve or reject a submitted report (owner's manager or finance, within limit).

        Args:
            report_id (str): Id of a submitted report.
            approve (bool): True to approve, False to reject.
        """
        report, error = self._guard(report_id, "submitted")
        if error:
            return error
        me, owner = self.employees[self.session_employee_id], self.employees[report["employee_id"]]
        if report["employee_id"] == self.session_employee_id or not (
                owner["manager_id"] == self.session_employee_id or me["role"] == "finance"):
            return {"success": False, "error": "You may not decide on this report"}
        if approve and self._total(report) > me["approval_limit"]:
            return {"success": False, "error": "Total exceeds your approval limit"}
        report["status"] = "approved" if approve else "rejected"
        return {"success": True, "data": self._view(report_id)}

    def reimburse_report(self, report_id: str) -> dict:
        """Pay out an approved report (finance only).

        Args:
            report_id (str): Id of an approved report.
        """
        report, error = self._guard(report_id, "approved")
        if error:
            return error
        if self.employees[self.session_employee_id]["role"] != "finance":
            return {"success": False, "error": "Only finance can reimburse"}
        report["status"] = "reimbursed"
        return {"success": True, "data": {"report_id": report_id, "paid": self._total(report)}}
