"""EnvCraft style: _load_scenario(config), get_env_state(), records keyed by id, and tools that
raise ValueError or KeyError to refuse a request."""

import copy
import uuid
from datetime import datetime

ACTIVE = ("scheduled", "checked_in")
TRANSITIONS = {"scheduled": {"checked_in", "cancelled", "no_show"}, "checked_in": {"completed"},
               "completed": set(), "cancelled": set(), "no_show": set()}
_APPOINTMENTS = [  # id, patient, doctor, date, time, reason, status, booked at
    ("APT-a1b2c3", "P-2001", "D-100", "2025-06-02", "09:00", "palpitations", "scheduled",
     "2025-05-20T10:12:00"),
    ("APT-d4e5f6", "P-2002", "D-102", "2025-06-02", "08:00", "flu symptoms", "checked_in",
     "2025-05-28T08:01:00"),
    ("APT-0a9b8c", "P-2003", "D-101", "2025-06-02", "11:00", "mole check", "scheduled",
     "2025-05-21T16:40:00"),
    ("APT-77e1aa", "P-2005", "D-100", "2025-06-03", "14:00", "follow-up ECG", "cancelled",
     "2025-05-15T09:00:00"),
    ("APT-3c3c3c", "P-2004", "D-104", "2025-06-04", "10:00", "vaccination", "scheduled",
     "2025-05-22T12:30:00"),
]
DEFAULT_CONFIG = {
    "doctors": {
        "D-100": {"name": "Dr. Priya Raman", "specialty": "cardiology",
                  "slots": {"2025-06-02": ["09:00", "09:30", "10:00", "10:30"],
                            "2025-06-03": ["14:00", "14:30", "15:00"]}},
        "D-101": {"name": "Dr. Tomas Lindqvist", "specialty": "dermatology",
                  "slots": {"2025-06-02": ["11:00", "11:30"], "2025-06-04": ["09:00", "09:30"]}},
        "D-102": {"name": "Dr. Amara Okafor", "specialty": "general practice",
                  "slots": {"2025-06-02": ["08:00", "08:20", "08:40", "09:00"],
                            "2025-06-03": ["08:00", "08:20"]}},
        "D-103": {"name": "Dr. Kenji Watanabe", "specialty": "general practice",
                  "slots": {"2025-06-03": ["13:00", "13:20", "13:40"]}},
        "D-104": {"name": "Dr. Sofia Marquez", "specialty": "pediatrics",
                  "slots": {"2025-06-04": ["10:00", "10:30", "11:00"]}},
    },
    "patients": {
        "P-2001": {"name": "Hannah Becker", "email": "hannah.b@mail.test", "dob": "1984-02-11"},
        "P-2002": {"name": "Omar Farouk", "email": "omar.f@mail.test", "dob": "1990-07-30"},
        "P-2003": {"name": "Lucia Romano", "email": "lucia.romano@mail.test", "dob": "1975-12-05"},
        "P-2004": {"name": "Ben Carter", "email": "ben.carter@mail.test", "dob": "2016-04-18"},
        "P-2005": {"name": "Mei Tanaka", "email": "mei.tanaka@mail.test", "dob": "1962-09-23"},
        "P-2006": {"name": "Ravi Shah", "email": "ravi.shah@mail.test", "dob": "1999-01-02"},
    },
    "appointments": {
        a[0]: {"patient_id": a[1], "doctor_id": a[2], "date": a[3], "time": a[4], "reason": a[5],
               "status": a[6], "booked_at": a[7], "notes": ""} for a in _APPOINTMENTS},
}


class ClinicScheduler:
    def __init__(self):
        self._load_scenario(DEFAULT_CONFIG)

    def _load_scenario(self, config: dict) -> None:
        self.doctors = copy.deepcopy(config.get("doctors", DEFAULT_CONFIG["doctors"]))
        self.patients = copy.deepcopy(config.get("patients", DEFAULT_CONFIG["patients"]))
        self.appointments = copy.deepcopy(config.get("appointments", {}))

    def get_env_state(self) -> dict:
        return copy.deepcopy(vars(self))

    def _appointment(self, appointment_id: str) -> dict:
        if appointment_id not in self.appointments:
            raise KeyError(f"Unknown appointment {appointment_id}")
        return self.appointments[appointment_id]

    def _move(self, appointment_id: str, new_status: str) -> dict:
        appt = self._appointment(appointment_id)
        if new_status not in TRANSITIONS[appt["status"]]:
            raise ValueError(f"Cannot go from {appt['status']} to {new_status}")
        appt["status"] = new_status
        return {"appointment_id": appointment_id, "status": new_status}

    def _check_slot(self, patient_id: str, doctor_id: str, date: str, time: str,
                    ignore: str | None = None) -> None:
        if doctor_id not in self.doctors:
            raise KeyError(f"Unknown doctor {doctor_id}")
        if time not in self.doctors[doctor_id]["slots"].get(date, []):
            raise ValueError(f"{self.doctors[doctor_id]['name']} has no slot at {date} {time}")
        for aid, a in self.appointments.items():
            if aid != ignore and a["status"] in ACTIVE and (a["date"], a["time"]) == (date, time):
                if a["doctor_id"] == doctor_id:
                    raise ValueError("That slot is already booked")
                if a["patient_id"] == patient_id:
                    raise ValueError("Patient already has an appointment at that time")

    def list_doctors(self, specialty: str | None = None) -> list:
        """List doctors, optionally only those of one specialty.

        Args:
            specialty (str | None): Specialty such as "cardiology"; None lists everyone.
        """
        return [{"doctor_id": did, "name": d["name"], "specialty": d["specialty"]}
                for did, d in self.doctors.items() if specialty in (None, d["specialty"])]

    def find_patient(self, email: str) -> dict:
        """Find a patient record by email address.

        Args:
            email (str): The patient's email address.
        """
        for pid, p in self.patients.items():
            if p["email"].lower() == email.lower():
                return {"patient_id": pid, **p}
        raise KeyError(f"No patient with email {email}")

    def list_patient_appointments(self, patient_id: str) -> list:
        """List every appointment of a patient, whatever its status.

        Args:
            patient_id (str): Id of the patient, e.g. "P-2001".
        """
        if patient_id not in self.patients:
            raise KeyError(f"Unknown patient {patient_id}")
        return [{"appointment_id": aid, **a} for aid, a in self.appointments.items()
                if a["patient_id"] == patient_id]

    def list_free_slots(self, doctor_id: str, date: str) -> list:
        """List a doctor's unbooked slots on a day.

        Args:
            doctor_id (str): Id of the doctor.
            date (str): Day in YYYY-MM-DD form.
        """
        if doctor_id not in self.doctors:
            raise KeyError(f"Unknown doctor {doctor_id}")
        taken = {a["time"] for a in self.appointments.values()
                 if a["doctor_id"] == doctor_id and a["date"] == date and a["status"] in ACTIVE}
        return [t for t in self.doctors[doctor_id]["slots"].get(date, []) if t not in taken]

    def book_appointment(self, patient_id: str, doctor_id: str, date: str, time: str,
                         reason: str) -> dict:
        """Book a patient into a free slot. A patient may hold one open booking per doctor.

        Args:
            patient_id (str): Id of the patient.
            doctor_id (str): Id of the doctor.
            date (str): Day in YYYY-MM-DD form.
            time (str): Slot start time in HH:MM form.
            reason (str): Short reason for the visit.
        """
        if patient_id not in self.patients:
            raise KeyError(f"Unknown patient {patient_id}")
        self._check_slot(patient_id, doctor_id, date, time)
        if any(a["patient_id"] == patient_id and a["doctor_id"] == doctor_id
               and a["status"] in ACTIVE for a in self.appointments.values()):
            raise ValueError("Patient already has an open appointment with this doctor")
        appointment_id = f"APT-{uuid.uuid4().hex[:6]}"
        self.appointments[appointment_id] = {
            "patient_id": patient_id, "doctor_id": doctor_id, "date": date, "time": time,
            "reason": reason, "status": "scheduled",
            "booked_at": datetime.now().isoformat(timespec="seconds"), "notes": ""}
        return {"appointment_id": appointment_id, **self.appointments[appointment_id]}

    def reschedule_appointment(self, appointment_id: str, new_date: str, new_time: str) -> dict:
        """Move a scheduled appointment to another free slot of the same doctor.

        Args:
            appointment_id (str): Id of the appointment.
            new_date (str): New day in YYYY-MM-DD form.
            new_time (str): New start time in HH:MM form.
        """
        appt = self._appointment(appointment_id)
        if appt["status"] != "scheduled":
            raise ValueError(f"Only scheduled appointments can be moved, not {appt['status']}")
        self._check_slot(appt["patient_id"], appt["doctor_id"], new_date, new_time,
                         ignore=appointment_id)
        appt["date"], appt["time"] = new_date, new_time
        return {"appointment_id": appointment_id, "date": new_date, "time": new_time}

    def cancel_appointment(self, appointment_id: str) -> dict:
        """Cancel a scheduled appointment.

        Args:
            appointment_id (str): Id of the appointment.
        """
        return self._move(appointment_id, "cancelled")

    def check_in(self, appointment_id: str) -> dict:
        """Record that the patient has arrived for a scheduled appointment.

        Args:
            appointment_id (str): Id of the appointment.
        """
        return self._move(appointment_id, "checked_in")

    def complete_appointment(self, appointment_id: str, notes: str) -> dict:
        """Close a checked-in appointment with the doctor's notes.

        Args:
            appointment_id (str): Id of the appointment.
            notes (str): Clinical notes; must not be empty.
        """
        if not notes.strip():
            raise ValueError("Notes are required to complete an appointment")
        result = self._move(appointment_id, "completed")
        self.appointments[appointment_id]["notes"] = notes
        return result
