"""EnvCraft style with @dataclass records: _load_scenario(config) builds Ticket objects,
get_env_state() serialises them, and tools raise exceptions to refuse."""

import copy
import datetime
import random
from dataclasses import asdict, dataclass, field

PRIORITIES = ("low", "medium", "high", "critical")
TRANSITIONS = {"open": {"in_progress"}, "in_progress": {"resolved"},
               "resolved": {"closed", "in_progress"}, "closed": set()}


class TransitionError(ValueError):
    """Raised when a ticket cannot move to the requested status."""


@dataclass
class Ticket:
    ticket_id: int
    title: str
    requester_email: str
    priority: str
    status: str = "open"
    assignee: str | None = None
    created_at: str = ""
    resolution: str = ""
    comments: list = field(default_factory=list)


DEFAULT_CONFIG = {
    "agents": [
        {"agent_id": "ag_kim", "name": "Kim Larsen", "email": "kim@corp.test", "team": "network"},
        {"agent_id": "ag_raj", "name": "Raj Patel", "email": "raj@corp.test", "team": "desktop",
         "max_open": 4},
        {"agent_id": "ag_eve", "name": "Eve Dubois", "email": "eve@corp.test", "team": "desktop"},
        {"agent_id": "ag_tom", "name": "Tom Becker", "email": "tom@corp.test", "team": "accounts",
         "max_open": 2},
    ],
    "tickets": [
        {"ticket_id": 4102, "title": "VPN drops every 10 minutes", "priority": "high",
         "requester_email": "lena@corp.test", "status": "in_progress", "assignee": "ag_kim"},
        {"ticket_id": 4117, "title": "Printer on 3rd floor jams", "priority": "low",
         "requester_email": "marco@corp.test"},
        {"ticket_id": 4120, "title": "Laptop will not boot after update", "priority": "critical",
         "requester_email": "ana@corp.test", "assignee": "ag_raj"},
        {"ticket_id": 4125, "title": "Password reset for payroll system", "priority": "medium",
         "requester_email": "lena@corp.test", "status": "resolved", "assignee": "ag_tom",
         "resolution": "Reset and MFA re-enrolled"},
        {"ticket_id": 4131, "title": "Request second monitor", "priority": "low",
         "requester_email": "joel@corp.test", "status": "closed", "assignee": "ag_eve"},
        {"ticket_id": 4133, "title": "Wi-Fi slow in meeting room Orca", "priority": "medium",
         "requester_email": "ana@corp.test", "status": "in_progress", "assignee": "ag_kim"},
        {"ticket_id": 4140, "title": "Outlook keeps asking for password", "priority": "medium",
         "requester_email": "marco@corp.test", "created_at": "2025-06-02T08:14:00"},
    ],
}

class HelpdeskDesk:
    def __init__(self):
        self._load_scenario(DEFAULT_CONFIG)

    def _load_scenario(self, config: dict) -> None:
        config = copy.deepcopy(config)
        self.agents = {a["agent_id"]: {"max_open": 3, **a} for a in config.get("agents", [])}
        self.tickets = {t["ticket_id"]: Ticket(**t) for t in config.get("tickets", [])}

    def get_env_state(self) -> dict:
        return {"agents": [dict(a) for a in self.agents.values()],
                "tickets": [asdict(t) for t in self.tickets.values()]}

    @staticmethod
    def normalise_priority(priority: str) -> str:
        value = priority.strip().lower()
        if value not in PRIORITIES:
            raise ValueError(f"Priority must be one of {', '.join(PRIORITIES)}")
        return value

    def _transition(self, ticket: Ticket, new_status: str) -> None:
        if new_status not in TRANSITIONS[ticket.status]:
            raise TransitionError(f"Ticket is {ticket.status}; cannot move to {new_status}")
        ticket.status = new_status

    def list_tickets(self, status: str | None = None, assignee: str | None = None) -> list:
        """List tickets filtered by status and/or assigned agent.

        Args:
            status (str | None): One of open, in_progress, resolved, closed; None for all.
            assignee (str | None): Agent id; None for any assignee.
        """
        return [asdict(t) for t in self.tickets.values()
                if status in (None, t.status) and assignee in (None, t.assignee)]

    def get_ticket(self, ticket_id: int) -> dict:
        """Get one ticket with its comments.

        Args:
            ticket_id (int): Numeric ticket id, e.g. 4117.
        """
        return asdict(self.tickets[ticket_id])

    def find_agent_by_email(self, email: str) -> dict:
        """Find a support agent by email address.

        Args:
            email (str): The agent's email address.
        """
        for agent in self.agents.values():
            if agent["email"].lower() == email.lower():
                return dict(agent)
        raise KeyError(f"No agent with email {email}")

    def create_ticket(self, title: str, requester_email: str, priority: str = "medium") -> int:
        """Open a new ticket and return its id.

        Args:
            title (str): One-line summary of the problem.
            requester_email (str): Email of the person reporting it.
            priority (str): low, medium, high or critical.
        """
        level = self.normalise_priority(priority)
        if not title.strip() or "@" not in requester_email:
            raise ValueError("A title and a valid requester email are required")
        ticket_id = random.randint(4200, 9999)
        while ticket_id in self.tickets:
            ticket_id = random.randint(4200, 9999)
        self.tickets[ticket_id] = Ticket(
            ticket_id=ticket_id, title=title, requester_email=requester_email, priority=level,
            created_at=datetime.datetime.now().isoformat(timespec="seconds"))
        return ticket_id

    def assign_ticket(self, ticket_id: int, agent_id: str) -> dict:
        """Assign an open or in-progress ticket to an agent who has spare capacity.

        Args:
            ticket_id (int): Numeric ticket id.
            agent_id (str): Id of the agent, e.g. "ag_raj".
        """
        ticket = self.tickets[ticket_id]
        if agent_id not in self.agents:
            raise KeyError(f"Agent {agent_id} does not exist")
        if ticket.status not in ("open", "in_progress"):
            raise TransitionError(f"Ticket {ticket_id} is {ticket.status}")
        load = sum(1 for t in self.tickets.values() if t.assignee == agent_id
                   and t.status in ("open", "in_progress") and t.ticket_id != ticket_id)
        if load >= self.agents[agent_id]["max_open"]:
            raise ValueError(f"{self.agents[agent_id]['name']} already has {load} open tickets")
        ticket.assignee = agent_id
        return asdict(ticket)

    def start_work(self, ticket_id: int) -> dict:
        """Move an assigned open ticket to in_progress.

        Args:
            ticket_id (int): Numeric ticket id.
        """
        ticket = self.tickets[ticket_id]
        if ticket.assignee is None:
            raise ValueError("Assign the ticket before starting work")
        self._transition(ticket, "in_progress")
        return asdict(ticket)

    def resolve_ticket(self, ticket_id: int, resolution: str) -> dict:
        """Mark an in-progress ticket resolved with a resolution note.

        Args:
            ticket_id (int): Numeric ticket id.
            resolution (str): What fixed the problem; must not be empty.
        """
        ticket = self.tickets[ticket_id]
        if not resolution.strip():
            raise ValueError("A resolution note is required")
        self._transition(ticket, "resolved")
        ticket.resolution = resolution
        return asdict(ticket)

    def close_ticket(self, ticket_id: int) -> dict:
        """Close a resolved ticket for good.

        Args:
            ticket_id (int): Numeric ticket id.
        """
        ticket = self.tickets[ticket_id]
        self._transition(ticket, "closed")
        return asdict(ticket)

    def reopen_ticket(self, ticket_id: int, reason: str) -> dict:
        """Send a resolved ticket back to in_progress, recording why as a comment.

        Args:
            ticket_id (int): Numeric ticket id.
            reason (str): Why the fix did not work.
        """
        ticket = self.tickets[ticket_id]
        self._transition(ticket, "in_progress")
        ticket.resolution = ""
        ticket.comments.append({"author": ticket.requester_email, "text": reason})
        return asdict(ticket)
