"""EnvScaler style: __init__(init_config) builds the state, Decimal money, a login precondition,
and {"success": True, "data": ...} / {"success": False, "error": ...} results."""

import secrets
import time
from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")


class BankLedger:
    def __init__(self, init_config: dict):
        self.bank_name: str = init_config.get("bank_name", "Harbour Savings")
        self.users: dict = {u: dict(rec) for u, rec in init_config["users"].items()}
        self.accounts: dict = {}
        for account_id, acc in init_config["accounts"].items():
            self.accounts[account_id] = {
                **acc,
                "balance": Decimal(str(acc["balance"])),
                "overdraft_limit": Decimal(str(acc.get("overdraft_limit", "0"))),
                "status": acc.get("status", "open"),
            }
        self.transactions: list = [
            {**tx, "amount": Decimal(str(tx["amount"]))}
            for tx in init_config.get("transactions", [])
        ]
        self.payees: dict = {u: dict(p) for u, p in init_config.get("payees", {}).items()}
        self.current_user: str | None = None

    def format_money(self, amount):
        return f"{amount.quantize(CENT):,} GBP"

    def assert_invariants(self) -> None:
        for account_id, acc in self.accounts.items():
            assert acc["balance"] >= -acc["overdraft_limit"], account_id
            assert acc["owner"] in self.users, account_id

    def _ok(self, data) -> dict:
        return {"success": True, "data": data}

    def _fail(self, message: str) -> dict:
        return {"success": False, "error": message}

    def _own_account(self, account_id: str) -> dict | None:
        acc = self.accounts.get(account_id)
        if acc is None or acc["owner"] != self.current_user:
            return None
        return acc

    @staticmethod
    def _parse_amount(amount) -> Decimal | None:
        try:
            value = Decimal(str(amount))
        except InvalidOperation:
            return None
        if not value.is_finite() or value <= 0 or value != value.quantize(CENT):
            return None
        return value

    def _record(self, account_id: str, kind: str, amount: Decimal, memo: str) -> dict:
        tx = {"id": f"TX-{secrets.token_hex(4)}", "account_id": account_id, "type": kind,
              "amount": amount, "memo": memo, "timestamp": time.time(),
              "balance_after": self.accounts[account_id]["balance"]}
        self.transactions.append(tx)
        return tx

    def login(self, username: str, password: str) -> dict:
        """Start an online-banking session.

        Args:
            username (str): The customer's username.
            password (str): The customer's password.
        """
        user = self.users.get(username)
        if user is None or user["password"] != password:
            return self._fail("Invalid username or password")
        self.current_user = username
        return self._ok({"username": username, "full_name": user["full_name"]})

    def logout(self) -> dict:
        """End the current session."""
        if self.current_user is None:
            return self._fail("Not logged in")
        self.current_user = None
        return self._ok(None)

    def list_my_accounts(self) -> dict:
        """List the accounts of the logged-in customer with their balances."""
        if self.current_user is None:
            return self._fail("Login required")
        return self._ok([{"account_id": aid, "type": a["type"], "balance": a["balance"],
                          "status": a["status"]}
                         for aid, a in self.accounts.items() if a["owner"] == self.current_user])

    def get_balance(self, account_id: str) -> dict:
        """Get the balance of one of the logged-in customer's accounts.

        Args:
            account_id (str): Account number, e.g. "ACC-1001".
        """
        if self.current_user is None:
            return self._fail("Login required")
        acc = self._own_account(account_id)
        if acc is None:
            return self._fail(f"No account {account_id} for this customer")
        return self._ok({"account_id": account_id, "balance": acc["balance"],
                         "available": acc["balance"] + acc["overdraft_limit"]})

    def list_transactions(self, account_id: str, limit: int = 10) -> dict:
        """List the most recent transactions of an account, newest first.

        Args:
            account_id (str): Account number.
            limit (int): How many transactions to return, 1 to 50.
        """
        if self.current_user is None:
            return self._fail("Login required")
        if self._own_account(account_id) is None:
            return self._fail(f"No account {account_id} for this customer")
        if not 1 <= limit <= 50:
            return self._fail("limit must be between 1 and 50")
        rows = [t for t in self.transactions if t["account_id"] == account_id]
        return self._ok(list(reversed(rows))[:limit])

    def list_payees(self) -> dict:
        """List the saved payees of the logged-in customer (name to account number)."""
        if self.current_user is None:
            return self._fail("Login required")
        return self._ok(dict(self.payees.get(self.current_user, {})))

    def deposit(self, account_id: str, amount: str) -> dict:
        """Deposit money into one of the customer's accounts.

        Args:
            account_id (str): Account number.
            amount (str): Positive amount with at most two decimals, e.g. "120.50".
        """
        if self.current_user is None:
            return self._fail("Login required")
        acc, value = self._own_account(account_id), self._parse_amount(amount)
        if acc is None or value is None:
            return self._fail("Unknown account or invalid amount")
        if acc["status"] != "open":
            return self._fail(f"Account {account_id} is {acc['status']}")
        acc["balance"] += value
        return self._ok(self._record(account_id, "deposit", value, "cash deposit"))

    def withdraw(self, account_id: str, amount: str) -> dict:
        """Withdraw money; the balance may not fall below the overdraft limit.

        Args:
            account_id (str): Account number.
            amount (str): Positive amount with at most two decimals.
        """
        if self.current_user is None:
            return self._fail("Login required")
        acc, value = self._own_account(account_id), self._parse_amount(amount)
        if acc is None or value is None:
            return self._fail("Unknown account or invalid amount")
        if acc["status"] != "open":
            return self._fail(f"Account {account_id} is {acc['status']}")
        if acc["balance"] - value < -acc["overdraft_limit"]:
            return self._fail("Insufficient funds")
        acc["balance"] -= value
        return self._ok(self._record(account_id, "withdrawal", -value, "cash withdrawal"))

    def transfer(self, from_account_id: str, to_account_id: str, amount: str,
                 memo: str = "") -> dict:
        """Transfer money from one of the customer's accounts to any open account.

        Args:
            from_account_id (str): Source account, owned by the logged-in customer.
            to_account_id (str): Destination account number (own or a payee's).
            amount (str): Positive amount with at most two decimals.
            memo (str): Optional reference shown on both statements.
        """
        if self.current_user is None:
            return self._fail("Login required")
        src, value = self._own_account(from_account_id), self._parse_amount(amount)
        dst = self.accounts.get(to_account_id)
        if src is None or dst is None or value is None:
            return self._fail("Unknown account or invalid amount")
        if from_account_id == to_account_id:
            return self._fail("Source and destination must differ")
        if src["status"] != "open" or dst["status"] != "open":
            return self._fail("Both accounts must be open")
        if src["balance"] - value < -src["overdraft_limit"]:
            return self._fail("Insufficient funds")
        src["balance"] -= value
        dst["balance"] += value
        out = self._record(from_account_id, "transfer_out", -value, memo)
        self._record(to_account_id, "transfer_in", value, memo)
        return self._ok(out)
