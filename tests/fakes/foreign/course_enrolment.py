"""EnvCraft style with nested records (courses hold sections that hold rosters and waitlists):
_load_scenario(config), get_env_state(), a @property, and tools that raise on refusal."""

import copy


def _sec(instructor: str, days: str, time: str, capacity: int, enrolled: list | None = None,
         waitlist: list | None = None) -> dict:
    return {"instructor": instructor, "days": days, "time": time, "capacity": capacity,
            "enrolled": enrolled or [], "waitlist": waitlist or []}


DEFAULT_CONFIG = {
    "term": "2025-FALL",
    "students": {sid: {"name": n, "email": e, "completed": c, "max_credits": m}
                 for sid, n, e, c, m in [
                     ("s_101", "Aylin Demir", "aylin.demir@uni.test", ["CS101", "MA101"], 12),
                     ("s_102", "Bjorn Halvorsen", "bjorn.h@uni.test", ["CS101"], 12),
                     ("s_103", "Camila Reyes", "camila.reyes@uni.test", [], 8),
                     ("s_104", "Dmitri Volkov", "dmitri.v@uni.test", ["CS101", "CS201", "MA101"],
                      16),
                     ("s_105", "Esi Mensah", "esi.mensah@uni.test", ["MA101"], 12),
                     ("s_106", "Felix Wagner", "felix.wagner@uni.test", ["CS101", "MA101"], 12)]},
    "courses": {
        "CS101": {"title": "Introduction to Programming", "credits": 4, "prerequisites": [],
                  "sections": {"A": _sec("Dr. Iyer", "MWF", "09:00", 3, ["s_103"]),
                               "B": _sec("Dr. Iyer", "TR", "14:00", 2)}},
        "CS201": {"title": "Data Structures", "credits": 4, "prerequisites": ["CS101"],
                  "sections": {"A": _sec("Prof. Novak", "MW", "11:00", 2, ["s_101", "s_102"],
                                         ["s_106"])}},
        "CS301": {"title": "Algorithms", "credits": 4, "prerequisites": ["CS201", "MA101"],
                  "sections": {"A": _sec("Prof. Novak", "TR", "09:00", 2, ["s_104"])}},
        "MA101": {"title": "Calculus I", "credits": 4, "prerequisites": [],
                  "sections": {"A": _sec("Dr. Okoye", "MWF", "11:00", 4)}},
        "MA201": {"title": "Linear Algebra", "credits": 3, "prerequisites": ["MA101"],
                  "sections": {"A": _sec("Dr. Okoye", "TR", "11:00", 3, ["s_105"]),
                               "B": _sec("Dr. Brandt", "MW", "16:00", 3)}},
        "HI110": {"title": "World History", "credits": 3, "prerequisites": [],
                  "sections": {"A": _sec("Dr. Laine", "F", "13:00", 5, ["s_101"])}},
    },
}

class CourseRegistry:
    def __init__(self):
        self._load_scenario(DEFAULT_CONFIG)

    def _load_scenario(self, config: dict) -> None:
        self.term = config.get("term", DEFAULT_CONFIG["term"])
        self.students = copy.deepcopy(config["students"])
        self.courses = copy.deepcopy(config["courses"])

    def get_env_state(self) -> dict:
        return copy.deepcopy(vars(self))

    @property
    def open_sections(self) -> list:
        return [(code, name) for code, c in self.courses.items()
                for name, s in c["sections"].items() if len(s["enrolled"]) < s["capacity"]]

    def _section(self, course_code: str, section: str) -> dict:
        if course_code not in self.courses:
            raise KeyError(f"No course {course_code} in {self.term}")
        if section not in self.courses[course_code]["sections"]:
            raise KeyError(f"{course_code} has no section {section}")
        return self.courses[course_code]["sections"][section]

    def _current(self, student_id: str) -> dict:
        if student_id not in self.students:
            raise KeyError(f"No student {student_id}")
        return {code: name for code, c in self.courses.items()
                for name, s in c["sections"].items() if student_id in s["enrolled"]}

    def _check_can_join(self, student_id: str, course_code: str, section: str) -> None:
        sec, student = self._section(course_code, section), self.students[student_id]
        current = self._current(student_id)
        current.pop(course_code, None)
        course = self.courses[course_code]
        missing = [p for p in course["prerequisites"] if p not in student["completed"]]
        if missing:
            raise ValueError(f"Missing prerequisites: {', '.join(missing)}")
        if course_code in student["completed"]:
            raise ValueError(f"{student['name']} has already passed {course_code}")
        credits = sum(self.courses[c]["credits"] for c in current) + course["credits"]
        if credits > student["max_credits"]:
            raise ValueError(f"Would exceed the {student['max_credits']}-credit limit")
        for code, name in current.items():
            other = self.courses[code]["sections"][name]
            if other["time"] == sec["time"] and set(other["days"]) & set(sec["days"]):
                raise ValueError(f"Clashes with {code} section {name}")

    def search_courses(self, keyword: str) -> list:
        """Search courses by code or title.

        Args:
            keyword (str): Case-insensitive text in the course code or title.
        """
        k = keyword.lower()
        return [{"course_code": code, "title": c["title"], "credits": c["credits"]}
                for code, c in self.courses.items() if k in code.lower() or k in c["title"].lower()]

    def get_course(self, course_code: str) -> dict:
        """Get a course with its sections, rosters and waitlists.

        Args:
            course_code (str): Course code, e.g. "CS201".
        """
        if course_code not in self.courses:
            raise KeyError(f"No course {course_code} in {self.term}")
        return {"course_code": course_code, **copy.deepcopy(self.courses[course_code])}

    def find_student(self, email: str) -> dict:
        """Find a student by email address; includes their current course-to-section schedule.

        Args:
            email (str): The student's university email.
        """
        for sid, s in self.students.items():
            if s["email"].lower() == email.lower():
                return {"student_id": sid, **copy.deepcopy(s), "schedule": self._current(sid)}
        raise KeyError(f"No student with email {email}")

    def enrol(self, student_id: str, course_code: str, section: str) -> dict:
        """Enrol a student in a section with a free seat.

        Args:
            student_id (str): Student id.
            course_code (str): Course code.
            section (str): Section letter, e.g. "A".
        """
        if course_code in self._current(student_id):
            raise ValueError(f"Already enrolled in {course_code}; use switch_section")
        self._check_can_join(student_id, course_code, section)
        sec = self._section(course_code, section)
        if len(sec["enrolled"]) >= sec["capacity"]:
            raise ValueError(f"{course_code}-{section} is full; join the waitlist")
        sec["enrolled"].append(student_id)
        return self._current(student_id)

    def join_waitlist(self, student_id: str, course_code: str, section: str) -> int:
        """Put a student on a full section's waitlist; returns their position.

        Args:
            student_id (str): Student id.
            course_code (str): Course code.
            section (str): Section letter.
        """
        if course_code in self._current(student_id):
            raise ValueError(f"Already enrolled in {course_code}")
        self._check_can_join(student_id, course_code, section)
        sec = self._section(course_code, section)
        if len(sec["enrolled"]) < sec["capacity"] or student_id in sec["waitlist"]:
            raise ValueError("Section has free seats or student is already waiting")
        sec["waitlist"].append(student_id)
        return len(sec["waitlist"])

    def drop(self, student_id: str, course_code: str) -> dict:
        """Drop a course; the first waitlisted student who still qualifies takes the seat.

        Args:
            student_id (str): Student id.
            course_code (str): Course code the student is enrolled in.
        """
        section = self._current(student_id).get(course_code)
        if section is None:
            raise ValueError(f"{student_id} is not enrolled in {course_code}")
        sec = self._section(course_code, section)
        sec["enrolled"].remove(student_id)
        promoted = None
        for waiting in list(sec["waitlist"]):
            try:
                self._check_can_join(waiting, course_code, section)
            except ValueError:
                continue
            sec["waitlist"].remove(waiting)
            sec["enrolled"].append(waiting)
            promoted = waiting
            break
        return {"dropped": course_code, "promoted": promoted}

    def switch_section(self, student_id: str, course_code: str, new_section: str) -> dict:
        """Move an enrolled student to another section of the same course.

        Args:
            student_id (str): Student id.
            course_code (str): Course code.
            new_section (str): Section letter to move to; it must have a free seat.
        """
        old = self._current(student_id).get(course_code)
        if old is None or old == new_section:
            raise ValueError(f"Not enrolled in {course_code}, or already in that section")
        sec = self._section(course_code, new_section)
        self._check_can_join(student_id, course_code, new_section)
        if len(sec["enrolled"]) >= sec["capacity"]:
            raise ValueError(f"{course_code}-{new_section} is full")
        self.courses[course_code]["sections"][old]["enrolled"].remove(student_id)
        sec["enrolled"].append(student_id)
        return self._current(student_id)
