"""BFCL style: no-argument __init__, _load_scenario(scenario, long_context) falling back to a
deep-copied DEFAULT_STATE, and {"error": ...} dicts for refused calls."""

import copy
import datetime

LOAN_DAYS, RENEW_DAYS, MAX_RENEWALS = 21, 14, 2
FINE_BLOCK_THRESHOLD = 5.0
LOAN_LIMITS = {"standard": 3, "premium": 5}

_BOOKS = [  # id, title, author, year, total copies, available copies, member ids holding
    ("BK-001", "The Left Hand of Darkness", "Ursula K. Le Guin", 1969, 2, 1, []),
    ("BK-002", "Beloved", "Toni Morrison", 1987, 1, 0, ["M-04"]),
    ("BK-003", "The Name of the Rose", "Umberto Eco", 1980, 3, 3, []),
    ("BK-004", "Pachinko", "Min Jin Lee", 2017, 2, 0, []),
    ("BK-005", "A Brief History of Time", "Stephen Hawking", 1988, 1, 1, []),
    ("BK-006", "The Remains of the Day", "Kazuo Ishiguro", 1989, 2, 2, []),
    ("BK-007", "Never Let Me Go", "Kazuo Ishiguro", 2005, 1, 1, []),
    ("BK-008", "Sapiens", "Yuval Noah Harari", 2011, 2, 1, []),
]
_MEMBERS = [  # id, name, email, tier, fines owed
    ("M-01", "Alice Moreau", "alice.moreau@example.org", "standard", 0.0),
    ("M-02", "Bilal Hassan", "b.hassan@example.org", "premium", 1.5),
    ("M-03", "Chen Wei", "chen.wei@example.org", "standard", 7.25),
    ("M-04", "Dana Kowalski", "dana.k@example.org", "standard", 0.0),
    ("M-05", "Emeka Obi", "emeka.obi@example.org", "premium", 0.0),
    ("M-06", "Farah Nasser", "farah.n@example.org", "standard", 0.0),
]
_LOANS = [  # id, book, member, loaned on, due on, renewals, status
    ("LN-0039", "BK-003", "M-03", "2025-04-01", "2025-04-22", 0, "returned"),
    ("LN-0041", "BK-001", "M-02", "2025-05-01", "2025-05-22", 0, "active"),
    ("LN-0042", "BK-002", "M-01", "2025-05-03", "2025-05-24", 1, "active"),
    ("LN-0043", "BK-004", "M-05", "2025-05-04", "2025-05-25", 2, "active"),
    ("LN-0044", "BK-004", "M-01", "2025-05-06", "2025-05-27", 0, "active"),
    ("LN-0045", "BK-008", "M-06", "2025-05-07", "2025-05-28", 0, "active"),
]
DEFAULT_STATE = {
    "books": {b[0]: {"title": b[1], "author": b[2], "year": b[3], "total_copies": b[4],
                     "available_copies": b[5], "holds": b[6]} for b in _BOOKS},
    "members": {m[0]: {"name": m[1], "email": m[2], "tier": m[3], "fines": m[4]}
                for m in _MEMBERS},
    "member_ids_by_name": {m[1]: m[0] for m in _MEMBERS},
    "loans": {ln[0]: {"book_id": ln[1], "member_id": ln[2], "loaned_on": ln[3], "due_on": ln[4],
                      "renewals": ln[5], "status": ln[6]} for ln in _LOANS},
    "next_loan_number": 46,
}


class LibraryLoans:
    def __init__(self):
        self.books: dict = {}
        self.members: dict = {}
        self.member_ids_by_name: dict = {}
        self.loans: dict = {}
        self.next_loan_number: int = 0

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        for key, default in DEFAULT_STATE.items():
            setattr(self, key, copy.deepcopy(scenario.get(key, default)))
        for n in range(1, 31) if long_context else ():
            self.books[f"BK-9{n:02d}"] = {"title": f"Parish Records Vol. {n}", "author": "Archive",
                                          "year": 1900 + n, "total_copies": 1,
                                          "available_copies": 0, "holds": []}

    def _active_loans(self, member_id: str) -> list:
        return [lid for lid, loan in self.loans.items()
                if loan["member_id"] == member_id and loan["status"] == "active"]

    def search_books(self, query: str, available_only: bool = False) -> dict:
        """Search the catalogue by title or author.

        Args:
            query (str): Case-insensitive text to look for in titles and author names.
            available_only (bool): If true, only return books with a copy on the shelf.
        """
        q = query.lower()
        return {"results": [
            {"book_id": bid, "title": b["title"], "author": b["author"],
             "available_copies": b["available_copies"]} for bid, b in self.books.items()
            if (q in b["title"].lower() or q in b["author"].lower())
            and (b["available_copies"] > 0 or not available_only)]}

    def get_book(self, book_id: str) -> dict:
        """Get the full record of one book.

        Args:
            book_id (str): Catalogue id of the book, e.g. "BK-003".
        """
        if book_id not in self.books:
            return {"error": f"No book with id {book_id}"}
        return {"book_id": book_id, **copy.deepcopy(self.books[book_id])}

    def find_member(self, name_or_email: str) -> dict:
        """Look up a member by full name or by email address.

        Args:
            name_or_email (str): The member's full name (exact) or email address.
        """
        member_id = self.member_ids_by_name.get(name_or_email) or next(
            (mid for mid, m in self.members.items()
             if m["email"].lower() == name_or_email.lower()), None)
        if member_id is None:
            return {"error": f"No member matches {name_or_email!r}"}
        return {"member_id": member_id, **self.members[member_id]}

    def list_member_loans(self, member_id: str) -> dict:
        """List the active loans of a member.

        Args:
            member_id (str): Id of the member, e.g. "M-01".
        """
        if member_id not in self.members:
            return {"error": f"No member with id {member_id}"}
        return {"loans": [{"loan_id": lid, **self.loans[lid]}
                          for lid in self._active_loans(member_id)]}

    def checkout_book(self, member_id: str, book_id: str) -> dict:
        """Lend a copy of a book to a member.

        Args:
            member_id (str): Id of the borrowing member.
            book_id (str): Id of the book to borrow.
        """
        member, book = self.members.get(member_id), self.books.get(book_id)
        if member is None or book is None:
            return {"error": "Unknown member or book"}
        if member["fines"] > FINE_BLOCK_THRESHOLD:
            return {"error": f"Member owes {member['fines']:.2f} in fines; borrowing blocked"}
        active = self._active_loans(member_id)
        if len(active) >= LOAN_LIMITS[member["tier"]]:
            return {"error": "Member has reached the loan limit"}
        if any(self.loans[lid]["book_id"] == book_id for lid in active):
            return {"error": "Member already has this book on loan"}
        if book["available_copies"] <= 0:
            return {"error": "No copies available; place a hold instead"}
        if book["holds"] and book["holds"][0] != member_id:
            return {"error": "The available copy is reserved for another member's hold"}
        today = datetime.date.today()
        loan_id = f"LN-{self.next_loan_number:04d}"
        self.next_loan_number += 1
        self.loans[loan_id] = {"book_id": book_id, "member_id": member_id,
                               "loaned_on": today.isoformat(),
                               "due_on": (today + datetime.timedelta(days=LOAN_DAYS)).isoformat(),
                               "renewals": 0, "status": "active"}
        book["available_copies"] -= 1
        if member_id in book["holds"]:
            book["holds"].remove(member_id)
        return {"loan_id": loan_id, "due_on": self.loans[loan_id]["due_on"]}

    def return_book(self, loan_id: str) -> dict:
        """Return a borrowed book and close its loan.

        Args:
            loan_id (str): Id of the loan, e.g. "LN-0042".
        """
        loan = self.loans.get(loan_id)
        if loan is None or loan["status"] != "active":
            return {"error": f"No active loan {loan_id}"}
        loan["status"] = "returned"
        loan["returned_on"] = datetime.date.today().isoformat()
        self.books[loan["book_id"]]["available_copies"] += 1
        return {"loan_id": loan_id, "status": "returned"}

    def renew_loan(self, loan_id: str) -> dict:
        """Extend an active loan by two weeks.

        Args:
            loan_id (str): Id of the loan to renew.
        """
        loan = self.loans.get(loan_id)
        if loan is None or loan["status"] != "active":
            return {"error": f"No active loan {loan_id}"}
        if loan["renewals"] >= MAX_RENEWALS:
            return {"error": "Loan has already been renewed the maximum number of times"}
        if self.books[loan["book_id"]]["holds"]:
            return {"error": "Another member is waiting for this book"}
        due = datetime.date.fromisoformat(loan["due_on"]) + datetime.timedelta(days=RENEW_DAYS)
        loan["due_on"] = due.isoformat()
        loan["renewals"] += 1
        return {"loan_id": loan_id, "due_on": loan["due_on"], "renewals": loan["renewals"]}

    def place_hold(self, member_id: str, book_id: str) -> dict:
        """Join the waiting list for a book that has no copy on the shelf.

        Args:
            member_id (str): Id of the member.
            book_id (str): Id of the book.
        """
        member, book = self.members.get(member_id), self.books.get(book_id)
        if member is None or book is None:
            return {"error": "Unknown member or book"}
        if book["available_copies"] > 0:
            return {"error": "A copy is available; borrow it instead"}
        if member_id in book["holds"]:
            return {"error": "Member already holds this book"}
        if any(self.loans[lid]["book_id"] == book_id for lid in self._active_loans(member_id)):
            return {"error": "Member already has this book on loan"}
        book["holds"].append(member_id)
        return {"book_id": book_id, "position": len(book["holds"])}
