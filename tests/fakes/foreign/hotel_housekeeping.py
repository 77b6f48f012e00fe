"""Loader style _load_scenario(scenario) over lists of dicts with integer "id" fields, with
datetime.datetime.now() stamps, assert_invariants() and {"ok": ..., "reason": ...} results."""

import copy
import datetime

MAX_OPEN_TASKS = 4
DEFAULT_STATE = {
    "rooms": [
        {"id": 101, "floor": 1, "type": "double", "status": "dirty", "occupied": False},
        {"id": 102, "floor": 1, "type": "twin", "status": "ready", "occupied": True},
        {"id": 103, "floor": 1, "type": "single", "status": "cleaning", "occupied": False},
        {"id": 104, "floor": 1, "type": "double", "status": "out_of_order", "occupied": False},
        {"id": 201, "floor": 2, "type": "suite", "status": "dirty", "occupied": False},
        {"id": 202, "floor": 2, "type": "double", "status": "clean", "occupied": False},
        {"id": 203, "floor": 2, "type": "twin", "status": "dirty", "occupied": True},
        {"id": 301, "floor": 3, "type": "suite", "status": "ready", "occupied": False},
        {"id": 302, "floor": 3, "type": "double", "status": "dirty", "occupied": False},
    ],
    "attendants": {
        "hk_1": {"name": "Rosa Delgado", "floors": [1, 2], "on_shift": True},
        "hk_2": {"name": "Piotr Zielinski", "floors": [2, 3], "on_shift": True},
        "hk_3": {"name": "Amina Yusuf", "floors": [3], "on_shift": False},
        "hk_4": {"name": "Tuan Nguyen", "floors": [1], "on_shift": True},
    },
    "tasks": [
        {"id": 1, "room_id": 103, "attendant_id": "hk_4", "status": "in_progress",
         "created_at": "2025-06-02T08:05:00"},
        {"id": 2, "room_id": 202, "attendant_id": "hk_2", "status": "done",
         "created_at": "2025-06-02T07:40:00"},
    ],
    "out_of_order_reasons": {"104": "Leaking shower valve"},
}


class HousekeepingBoard:
    def __init__(self):
        self.rooms: list = []
        self.attendants: dict = {}
        self.tasks: list = []
        self.out_of_order_reasons: dict = {}

    def _load_scenario(self, scenario: dict) -> None:
        for key, default in DEFAULT_STATE.items():
            setattr(self, key, copy.deepcopy(scenario.get(key, default)))

    def assert_invariants(self) -> None:
        for room in self.rooms:
            open_tasks = [t for t in self.tasks if t["room_id"] == room["id"]
                          and t["status"] != "done"]
            assert len(open_tasks) <= 1, room["id"]
            assert (room["status"] == "out_of_order") == (str(room["id"]) in
                                                          self.out_of_order_reasons), room["id"]

    def _room(self, room_id: int) -> dict | None:
        return next((r for r in self.rooms if r["id"] == room_id), None)

    def _task(self, task_id: int) -> dict | None:
        return next((t for t in self.tasks if t["id"] == task_id), None)

    def list_rooms(self, status: str | None = None, floor: int | None = None) -> dict:
        """List rooms by housekeeping status and/or floor.

        Args:
            status (str | None): dirty, cleaning, clean, ready or out_of_order; None for all.
            floor (int | None): Floor number; None for all floors.
        """
        rows = [dict(r) for r in self.rooms if status in (None, r["status"])
                and floor in (None, r["floor"])]
        return {"ok": True, "rooms": rows}

    def find_attendant(self, name: str) -> dict:
        """Find a room attendant by (part of) their name.

        Args:
            name (str): Case-insensitive part of the attendant's name.
        """
        hits = [{"attendant_id": aid, **a} for aid, a in self.attendants.items()
                if name.lower() in a["name"].lower()]
        if len(hits) != 1:
            return {"ok": False, "reason": f"{len(hits)} attendants match {name!r}"}
        return {"ok": True, **hits[0]}

    def record_checkout(self, room_id: int) -> dict:
        """Record that the guests of an occupied room have left; the room becomes dirty.

        Args:
            room_id (int): Room number.
        """
        room = self._room(room_id)
        if room is None or not room["occupied"]:
            return {"ok": False, "reason": f"Room {room_id} is not occupied"}
        room["occupied"] = False
        if room["status"] != "cleaning":
            room["status"] = "dirty"
        return {"ok": True, "room_id": room_id, "status": room["status"]}

    def assign_cleaning(self, room_id: int, attendant_id: str) -> dict:
        """Create a cleaning task for a dirty room and give it to an on-shift attendant
        who covers that floor and has fewer than four open tasks.

        Args:
            room_id (int): Room number, e.g. 201.
            attendant_id (str): Attendant id, e.g. "hk_1".
        """
        room, att = self._room(room_id), self.attendants.get(attendant_id)
        if room is None or att is None:
            return {"ok": False, "reason": "Unknown room or attendant"}
        if room["status"] != "dirty":
            return {"ok": False, "reason": f"Room {room_id} is {room['status']}, not dirty"}
        if any(t["room_id"] == room_id and t["status"] != "done" for t in self.tasks):
            return {"ok": False, "reason": f"Room {room_id} already has an open task"}
        if not att["on_shift"] or room["floor"] not in att["floors"]:
            return {"ok": False, "reason": f"{att['name']} is off shift or not on that floor"}
        load = sum(1 for t in self.tasks if t["attendant_id"] == attendant_id
                   and t["status"] != "done")
        if load >= MAX_OPEN_TASKS:
            return {"ok": False, "reason": f"{att['name']} already has {load} open tasks"}
        task_id = max((t["id"] for t in self.tasks), default=0) + 1
        self.tasks.append({"id": task_id, "room_id": room_id, "attendant_id": attendant_id,
                           "status": "assigned",
                           "created_at": datetime.datetime.now().isoformat(timespec="seconds")})
        return {"ok": True, "task_id": task_id}

    def start_cleaning(self, task_id: int) -> dict:
        """Mark an assigned task as started; the room becomes "cleaning".

        Args:
            task_id (int): Numeric task id.
        """
        task = self._task(task_id)
        if task is None or task["status"] != "assigned":
            return {"ok": False, "reason": f"Task {task_id} is not waiting to start"}
        if self._room(task["room_id"])["occupied"]:
            return {"ok": False, "reason": "Guest is still in the room"}
        task["status"] = "in_progress"
        self._room(task["room_id"])["status"] = "cleaning"
        return {"ok": True, "task_id": task_id, "room_id": task["room_id"]}

    def finish_cleaning(self, task_id: int) -> dict:
        """Mark a started task done; the room becomes "clean" and awaits inspection.

        Args:
            task_id (int): Numeric task id.
        """
        task = self._task(task_id)
        if task is None or task["status"] != "in_progress":
            return {"ok": False, "reason": f"Task {task_id} is not in progress"}
        task["status"] = "done"
        self._room(task["room_id"])["status"] = "clean"
        return {"ok": True, "task_id": task_id, "room_id": task["room_id"]}

    def inspect_room(self, room_id: int, passed: bool) -> dict:
        """Inspect a clean room: it becomes "ready" if it passes, or "dirty" again if not.

        Args:
            room_id (int): Room number.
            passed (bool): Whether the room passed inspection.
        """
        room = self._room(room_id)
        if room is None or room["status"] != "clean":
            return {"ok": False, "reason": f"Room {room_id} is not awaiting inspection"}
        room["status"] = "ready" if passed else "dirty"
        return {"ok": True, "room_id": room_id, "status": room["status"]}

    def mark_out_of_order(self, room_id: int, reason: str) -> dict:
        """Take an unoccupied room out of service.

        Args:
            room_id (int): Room number.
            reason (str): What is wrong with the room.
        """
        room = self._room(room_id)
        if room is None or room["occupied"] or room["status"] == "out_of_order":
            return {"ok": False, "reason": "Unknown, occupied or already out-of-order room"}
        if any(t["room_id"] == room_id and t["status"] != "done" for t in self.tasks):
            return {"ok": False, "reason": "Finish the open cleaning task first"}
        room["status"] = "out_of_order"
        self.out_of_order_reasons[str(room_id)] = reason
        return {"ok": True, "room_id": room_id}

    def return_to_service(self, room_id: int) -> dict:
        """Bring an out-of-order room back; it needs cleaning before guests.

        Args:
            room_id (int): Room number.
        """
        room = self._room(room_id)
        if room is None or room["status"] != "out_of_order":
            return {"ok": False, "reason": f"Room {room_id} is not out of order"}
        room["status"] = "dirty"
        del self.out_of_order_reasons[str(room_id)]
        return {"ok": True, "room_id": room_id, "status": "dirty"}
