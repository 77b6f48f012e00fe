"""Attributes-only style: a no-argument __init__ fills nested records as literals (no loader),
with a @property, a @staticmethod and {"status": "ok" | "error"} results."""


class TeamCalendar:
    def __init__(self):
        self.members = {
            "u_01": {"name": "Hana Kim", "email": "hana.kim@team.test", "team": "design",
                     "hours": {"start": "09:00", "end": "17:00"}},
            "u_02": {"name": "Lars Eriksen", "email": "lars.e@team.test", "team": "backend",
                     "hours": {"start": "08:00", "end": "16:00"}},
            "u_03": {"name": "Nadia Haddad", "email": "nadia.h@team.test", "team": "backend",
                     "hours": {"start": "10:00", "end": "18:00"}},
            "u_04": {"name": "Pedro Alves", "email": "pedro.alves@team.test", "team": "design",
                     "hours": {"start": "09:00", "end": "17:00"}},
            "u_05": {"name": "Grace Liu", "email": "grace.liu@team.test", "team": "product",
                     "hours": {"start": "09:00", "end": "15:00"}},
            "u_06": {"name": "Sam O'Neill", "email": "sam.oneill@team.test", "team": "backend",
                     "hours": {"start": "09:00", "end": "17:00"}},
        }
        self.rooms = {"Fjord": {"capacity": 4}, "Atlas": {"capacity": 8}, "Nook": {"capacity": 2}}
        self.events = {
            "ev_1": {"title": "Design review", "date": "2025-06-10", "start": "10:00",
                     "end": "11:00", "organizer": "u_01", "room": "Fjord",
                     "attendees": {"u_04": "accepted", "u_05": "pending"}},
            "ev_2": {"title": "Sprint planning", "date": "2025-06-10", "start": "13:00",
                     "end": "14:30", "organizer": "u_05", "room": "Atlas",
                     "attendees": {"u_02": "accepted", "u_03": "accepted", "u_06": "declined"}},
            "ev_3": {"title": "1:1 Lars / Nadia", "date": "2025-06-11", "start": "10:00",
                     "end": "10:30", "organizer": "u_02", "room": "Nook",
                     "attendees": {"u_03": "accepted"}},
            "ev_4": {"title": "Roadmap sync", "date": "2025-06-11", "start": "14:00",
                     "end": "15:00", "organizer": "u_05", "room": None,
                     "attendees": {"u_01": "pending", "u_02": "accepted"}},
            "ev_5": {"title": "API deep dive", "date": "2025-06-10", "start": "15:00",
                     "end": "16:00", "organizer": "u_03", "room": "Fjord",
                     "attendees": {"u_06": "accepted"}},
        }
        self.next_event_number = 6

    @property
    def member_count(self) -> int:
        return len(self.members)

    @staticmethod
    def to_minutes(hhmm: str) -> int:
        hours, minutes = hhmm.split(":")
        return int(hours) * 60 + int(minutes)

    _hhmm = staticmethod(lambda minutes: f"{minutes // 60:02d}:{minutes % 60:02d}")

    def _busy(self, member_id: str, date: str, ignore: str | None = None) -> list:
        return [(self.to_minutes(ev["start"]), self.to_minutes(ev["end"]))
                for eid, ev in self.events.items() if eid != ignore and ev["date"] == date
                and (ev["organizer"] == member_id or ev["attendees"].get(member_id) == "accepted")]

    def _problem(self, people: list, date: str, start: int, end: int, room: str | None,
                 ignore: str | None = None) -> str | None:
        for mid in people:
            hours = self.members[mid]["hours"]
            if start < self.to_minutes(hours["start"]) or end > self.to_minutes(hours["end"]):
                return f"{self.members[mid]['name']} is outside working hours"
            if any(s < end and start < e for s, e in self._busy(mid, date, ignore)):
                return f"{self.members[mid]['name']} is busy then"
        if room is not None:
            if room not in self.rooms or self.rooms[room]["capacity"] < len(people):
                return f"Room {room} does not exist or is too small"
            for eid, ev in self.events.items():
                if eid != ignore and ev["room"] == room and ev["date"] == date and \
                        self.to_minutes(ev["start"]) < end and start < self.to_minutes(ev["end"]):
                    return f"Room {room} is already booked"
        return None

    def find_members(self, query: str = "", team: str | None = None) -> dict:
        """Find members whose name or email contains some text, optionally within one team.

        Args:
            query (str): Case-insensitive part of a name or email; empty matches everyone.
            team (str | None): Team name such as "backend"; None for every team.
        """
        rows = [{"member_id": mid, **m} for mid, m in self.members.items()
                if query.lower() in (m["name"] + " " + m["email"]).lower()
                and team in (None, m["team"])]
        return {"status": "ok", "members": rows}

    def get_agenda(self, member_id: str, date: str) -> dict:
        """List the events a member organises or is invited to on a day, by start time.

        Args:
            member_id (str): Id of the member, e.g. "u_03".
            date (str): Day in YYYY-MM-DD form.
        """
        if member_id not in self.members:
            return {"status": "error", "message": f"Unknown member {member_id}"}
        rows = [{"event_id": eid, **ev} for eid, ev in self.events.items() if ev["date"] == date
                and (ev["organizer"] == member_id or member_id in ev["attendees"])]
        return {"status": "ok", "events": sorted(rows, key=lambda r: r["start"])}

    def find_free_slot(self, member_ids: list, date: str, duration_minutes: int) -> dict:
        """Find the earliest start time when all given members are free, in 15-minute steps.

        Args:
            member_ids (list): Ids of everyone who must attend.
            date (str): Day in YYYY-MM-DD form.
            duration_minutes (int): Length of the meeting in minutes.
        """
        if not member_ids or any(m not in self.members for m in member_ids):
            return {"status": "error", "message": "Unknown or missing members"}
        for start in range(7 * 60, 20 * 60, 15):
            if self._problem(member_ids, date, start, start + duration_minutes, None) is None:
                return {"status": "ok", "start": self._hhmm(start),
                        "end": self._hhmm(start + duration_minutes)}
        return {"status": "error", "message": "No common free slot that day"}

    def book_meeting(self, organizer_id: str, title: str, date: str, start: str,
                     duration_minutes: int, attendee_ids: list, room: str | None = None) -> dict:
        """Book a meeting; everyone must be within working hours and free, the room free.

        Args:
            organizer_id (str): Id of the member organising it.
            title (str): Meeting title.
            date (str): Day in YYYY-MM-DD form.
            start (str): Start time in HH:MM form.
            duration_minutes (int): Length in minutes, 15 to 240.
            attendee_ids (list): Ids of invited members (not the organizer).
            room (str | None): Room name, or None for a video call.
        """
        people = [organizer_id, *attendee_ids]
        if any(p not in self.members for p in people) or len(set(people)) != len(people) \
                or not 15 <= duration_minutes <= 240:
            return {"status": "error", "message": "Unknown or repeated members, or bad duration"}
        begin = self.to_minutes(start)
        problem = self._problem(people, date, begin, begin + duration_minutes, room)
        if problem:
            return {"status": "error", "message": problem}
        event_id = f"ev_{self.next_event_number}"
        self.next_event_number += 1
        self.events[event_id] = {"title": title, "date": date, "start": start,
                                 "end": self._hhmm(begin + duration_minutes),
                                 "organizer": organizer_id, "room": room,
                                 "attendees": {a: "pending" for a in attendee_ids}}
        return {"status": "ok", "event_id": event_id}

    def respond_to_invite(self, event_id: str, member_id: str, response: str) -> dict:
        """Accept or decline an invitation.

        Args:
            event_id (str): Id of the event.
            member_id (str): Id of the invited member.
            response (str): "accepted" or "declined".
        """
        ev = self.events.get(event_id)
        if ev is None or member_id not in ev["attendees"]:
            return {"status": "error", "message": "No such invitation"}
        if response not in ("accepted", "declined"):
            return {"status": "error", "message": "Response must be accepted or declined"}
        if response == "accepted":
            begin, end = self.to_minutes(ev["start"]), self.to_minutes(ev["end"])
            if any(s < end and begin < e for s, e in self._busy(member_id, ev["date"], event_id)):
                return {"status": "error", "message": "Member has a clashing accepted event"}
        ev["attendees"][member_id] = response
        return {"status": "ok", "event_id": event_id, "response": response}

    def reschedule_meeting(self, event_id: str, new_date: str, new_start: str) -> dict:
        """Move a meeting, keeping its length and room; invitations go back to pending.

        Args:
            event_id (str): Id of the event.
            new_date (str): New day in YYYY-MM-DD form.
            new_start (str): New start time in HH:MM form.
        """
        ev = self.events.get(event_id)
        if ev is None:
            return {"status": "error", "message": f"No event {event_id}"}
        length = self.to_minutes(ev["end"]) - self.to_minutes(ev["start"])
        begin = self.to_minutes(new_start)
        people = [ev["organizer"], *(a for a, r in ev["attendees"].items() if r != "declined")]
        problem = self._problem(people, new_date, begin, begin + length, ev["room"], event_id)
        if problem:
            return {"status": "error", "message": problem}
        ev.update(date=new_date, start=new_start, end=self._hhmm(begin + length))
        ev["attendees"] = {a: ("declined" if r == "declined" else "pending")
                           for a, r in ev["attendees"].items()}
        return {"status": "ok", "event_id": event_id, "date": new_date, "start": new_start}

    def cancel_meeting(self, event_id: str, requested_by: str) -> dict:
        """Cancel a meeting; only its organizer may do so.

        Args:
            event_id (str): Id of the event.
            requested_by (str): Id of the member asking to cancel.
        """
        ev = self.events.get(event_id)
        if ev is None:
            return {"status": "error", "message": f"No event {event_id}"}
        if ev["organizer"] != requested_by:
            return {"status": "error", "message": "Only the organizer can cancel"}
        del self.events[event_id]
        return {"status": "ok", "cancelled": event_id}
