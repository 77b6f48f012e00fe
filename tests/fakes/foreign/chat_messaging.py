"""BFCL style messaging backend: no-argument __init__ with a seeded random.Random instance,
_load_scenario with DEFAULT_STATE fallback, a login precondition and {"error": ...} failures."""

import copy
import random
from datetime import datetime

DEFAULT_STATE = {
    "user_map": {"alice": "USR001", "bruno": "USR002", "chiara": "USR003", "dev": "USR004",
                 "elif": "USR005", "femi": "USR006"},
    "users": {
        "USR001": {"display_name": "Alice Chen", "email": "alice@chat.test", "password": "a1ice!"},
        "USR002": {"display_name": "Bruno Costa", "email": "bruno@chat.test", "password": "br-22"},
        "USR003": {"display_name": "Chiara Bianchi", "email": "chiara@chat.test",
                   "password": "ciao-3"},
        "USR004": {"display_name": "Dev Malhotra", "email": "dev@chat.test", "password": "d3v"},
        "USR005": {"display_name": "Elif Yilmaz", "email": "elif@chat.test", "password": "e-lif"},
        "USR006": {"display_name": "Femi Adeyemi", "email": "femi@chat.test", "password": "f3mi"},
    },
    "messages": [
        {"id": 30412, "sender": "USR002", "receiver": "USR001", "text": "Lunch at 12:30?",
         "sent_at": "2025-06-01T11:02:00", "read": False},
        {"id": 30413, "sender": "USR001", "receiver": "USR002", "text": "Sure, the usual place",
         "sent_at": "2025-06-01T11:05:00", "read": True},
        {"id": 30488, "sender": "USR003", "receiver": "USR001",
         "text": "Slides for Thursday are in the shared drive", "sent_at": "2025-06-01T15:40:00",
         "read": False},
        {"id": 30501, "sender": "USR004", "receiver": "USR003", "text": "Can you review my PR?",
         "sent_at": "2025-06-02T09:12:00", "read": True},
        {"id": 30517, "sender": "USR005", "receiver": "USR001", "text": "Invoice #448 attached",
         "sent_at": "2025-06-02T10:00:00", "read": False},
        {"id": 30522, "sender": "USR006", "receiver": "USR004", "text": "Standup moved to 10",
         "sent_at": "2025-06-02T08:45:00", "read": False},
    ],
    "contacts": {"USR001": ["USR002", "USR003"], "USR002": ["USR001"], "USR003": ["USR004"]},
    "blocked": {"USR003": ["USR006"]},
    "current_user": None,
}


class MessagingApp:
    def __init__(self):
        self.user_map: dict = {}
        self.users: dict = {}
        self.messages: list = []
        self.contacts: dict = {}
        self.blocked: dict = {}
        self.current_user: str | None = None
        self._random = random.Random(200)

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        for key, default in DEFAULT_STATE.items():
            setattr(self, key, copy.deepcopy(scenario.get(key, default)))
        if long_context:
            for n in range(40):
                self.messages.append({"id": 20000 + n, "sender": "USR002",
                                      "receiver": "USR004", "text": f"build #{n} passed",
                                      "sent_at": "2025-05-01T00:00:00", "read": True})

    def _mine(self, message_id: int) -> dict | None:
        return next((m for m in self.messages if m["id"] == message_id
                     and self.current_user in (m["sender"], m["receiver"])), None)

    def login(self, username: str, password: str) -> dict:
        """Log in to the messaging service.

        Args:
            username (str): Short username, e.g. "alice".
            password (str): The user's password.
        """
        user_id = self.user_map.get(username)
        if user_id is None or self.users[user_id]["password"] != password:
            return {"error": "Invalid credentials"}
        self.current_user = user_id
        return {"login_status": True, "user_id": user_id}

    def get_user_id(self, username: str) -> dict:
        """Resolve a username to its user id.

        Args:
            username (str): Short username.
        """
        if username not in self.user_map:
            return {"error": f"No user named {username}"}
        return {"user_id": self.user_map[username]}

    def list_users(self) -> dict:
        """List all usernames with their display names."""
        return {"users": [{"username": u, "display_name": self.users[uid]["display_name"]}
                          for u, uid in self.user_map.items()]}

    def send_message(self, receiver_username: str, text: str) -> dict:
        """Send a message as the logged-in user; refused if the receiver has blocked you.

        Args:
            receiver_username (str): Username of the receiver.
            text (str): Message body, 1 to 500 characters.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        receiver = self.user_map.get(receiver_username)
        if receiver is None or receiver == self.current_user:
            return {"error": f"Cannot send to {receiver_username}"}
        if self.current_user in self.blocked.get(receiver, []):
            return {"error": "You cannot message this user"}
        if not 1 <= len(text) <= 500:
            return {"error": "Message must be 1 to 500 characters"}
        message_id = self._random.randint(10000, 99999)
        while any(m["id"] == message_id for m in self.messages):
            message_id = self._random.randint(10000, 99999)
        self.messages.append({"id": message_id, "sender": self.current_user,
                              "receiver": receiver, "text": text,
                              "sent_at": datetime.now().isoformat(timespec="seconds"),
                              "read": False})
        return {"sent_status": True, "message_id": message_id}

    def view_inbox(self, unread_only: bool = False) -> dict:
        """List messages received by the logged-in user, newest first.

        Args:
            unread_only (bool): Only list messages not yet marked read.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        rows = [m for m in self.messages if m["receiver"] == self.current_user
                and (not unread_only or not m["read"])]
        return {"messages": sorted(rows, key=lambda m: m["sent_at"], reverse=True)}

    def mark_read(self, message_id: int) -> dict:
        """Mark a received message as read.

        Args:
            message_id (int): Id of the message.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        message = self._mine(message_id)
        if message is None or message["receiver"] != self.current_user:
            return {"error": f"No received message {message_id}"}
        message["read"] = True
        return {"message_id": message_id, "read": True}

    def delete_message(self, message_id: int) -> dict:
        """Delete a message the logged-in user sent or received.

        Args:
            message_id (int): Id of the message.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        message = self._mine(message_id)
        if message is None:
            return {"error": f"No message {message_id}"}
        self.messages.remove(message)
        return {"deleted_status": True, "message_id": message_id}

    def search_messages(self, keyword: str) -> dict:
        """Search the logged-in user's sent and received messages for a keyword.

        Args:
            keyword (str): Case-insensitive text to look for.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        return {"results": [m for m in self.messages
                            if self.current_user in (m["sender"], m["receiver"])
                            and keyword.lower() in m["text"].lower()]}

    def add_contact(self, username: str) -> dict:
        """Add a user to the logged-in user's contacts.

        Args:
            username (str): Username to add.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        user_id = self.user_map.get(username)
        mine = self.contacts.get(self.current_user, [])
        if user_id is None or user_id == self.current_user or user_id in mine:
            return {"error": f"Cannot add {username}"}
        self.contacts.setdefault(self.current_user, []).append(user_id)
        return {"added_status": True, "user_id": user_id}

    def block_user(self, username: str) -> dict:
        """Block a user so they can no longer message you; also removes them from contacts.

        Args:
            username (str): Username to block.
        """
        if self.current_user is None:
            return {"error": "Login required"}
        user_id = self.user_map.get(username)
        if user_id is None or user_id == self.current_user or \
                user_id in self.blocked.get(self.current_user, []):
            return {"error": f"Cannot block {username}"}
        self.blocked.setdefault(self.current_user, []).append(user_id)
        if user_id in self.contacts.get(self.current_user, []):
            self.contacts[self.current_user].remove(user_id)
        return {"blocked_status": True, "user_id": user_id}
