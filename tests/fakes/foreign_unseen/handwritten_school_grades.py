"""Gradebook for one school term -- plain-Python simulator written by hand."""
from typing import Dict, List, Set, Tuple


class Gradebook:
    def __init__(self):
        self.term = "2024-Autumn"
        self.term_locked = False
        self.students = [
            {"id": 4101, "name": "Amelia Clarke", "email": "a.clarke@school.example", "year": 10},
            {"id": 4102, "name": "Bilal Hussain", "email": "b.hussain@school.example", "year": 10},
            {"id": 4107, "name": "Chiara Romano", "email": "c.romano@school.example", "year": 11},
            {"id": 4113, "name": "Daniel Osei", "email": "d.osei@school.example", "year": 11},
            {"id": 4120, "name": "Elif Yilmaz", "email": "e.yilmaz@school.example", "year": 10},
            {"id": 4128, "name": "Finn Murphy", "email": "f.murphy@school.example", "year": 12},
            {"id": 4135, "name": "Gabriela Silva", "email": "g.silva@school.example", "year": 12},
        ]
        self.student_by_name: Dict[str, int] = {s["name"]: s["id"] for s in self.students}
        self.courses = {
            "MAT10": {"title": "Mathematics", "teacher": "Mr. Novak", "capacity": 4, "weights": {"homework": 0.4, "exam": 0.6}},
            "BIO11": {"title": "Biology", "teacher": "Dr. Asante", "capacity": 3, "weights": {"homework": 0.3, "lab": 0.2, "exam": 0.5}},
            "HIS10": {"title": "History", "teacher": "Ms. Laurent", "capacity": 5, "weights": {"essay": 0.5, "exam": 0.5}},
            "ART12": {"title": "Studio Art", "teacher": "Mrs. Ortiz", "capacity": 2, "weights": {"portfolio": 1.0}},
            "CS11": {"title": "Computer Science", "teacher": "Mr. Ito", "capacity": 4, "weights": {"project": 0.5, "exam": 0.5}},
        }
        self.enrollments: Set[Tuple[int, str]] = {
            (4101, "MAT10"), (4101, "HIS10"), (4102, "MAT10"), (4102, "CS11"), (4107, "BIO11"), (4107, "CS11"),
            (4113, "BIO11"), (4120, "MAT10"), (4120, "HIS10"), (4128, "ART12"), (4135, "ART12"), (4135, "CS11"),
        }
        self.grades = [
            {"student": 4101, "course": "MAT10", "kind": "homework", "score": 88},
            {"student": 4101, "course": "MAT10", "kind": "exam", "score": 92},
            {"student": 4101, "course": "HIS10", "kind": "essay", "score": 75},
            {"student": 4102, "course": "MAT10", "kind": "homework", "score": 64},
            {"student": 4102, "course": "CS11", "kind": "project", "score": 95},
            {"student": 4107, "course": "BIO11", "kind": "lab", "score": 81},
            {"student": 4107, "course": "BIO11", "kind": "exam", "score": 77},
            {"student": 4120, "course": "HIS10", "kind": "essay", "score": 90},
            {"student": 4120, "course": "HIS10", "kind": "exam", "score": 86},
            {"student": 4128, "course": "ART12", "kind": "portfolio", "score": 97},
        ]

    def find_student(self, name: str) -> int:
        """Return the student id for a full name, or -1 if there is no such student."""
        return self.student_by_name.get(name, -1)

    def roster(self, course_code: str) -> List[str]:
        """Names of the students enrolled in a course, alphabetically."""
        ids = {sid for sid, c in self.enrollments if c == course_code}
        return sorted(s["name"] for s in self.students if s["id"] in ids)

    def enroll(self, student_id: int, course_code: str) -> str:
        """Enrol a student in a course if it has capacity. Returns 'enrolled' or a reason."""
        if self.term_locked:
            return "term is locked"
        if student_id not in {s["id"] for s in self.students}:
            return "unknown student"
        if course_code not in self.courses:
            return "unknown course"
        if (student_id, course_code) in self.enrollments:
            return "already enrolled"
        if sum(1 for _, c in self.enrollments if c == course_code) >= self.courses[course_code]["capacity"]:
            return "course full"
        self.enrollments.add((student_id, course_code))
        return "enrolled"

    def drop(self, student_id: int, course_code: str) -> bool:
        """Drop a course; only allowed while no grade has been recorded for it."""
        if self.term_locked or (student_id, course_code) not in self.enrollments:
            return False
        if any(g["student"] == student_id and g["course"] == course_code for g in self.grades):
            return False
        self.enrollments.discard((student_id, course_code))
        return True

    def record_grade(self, student_id: int, course_code: str, kind: str, score: int) -> bool:
        """Record a 0-100 score for an assessment kind the course weights. Each kind is graded once."""
        if self.term_locked or (student_id, course_code) not in self.enrollments:
            return False
        if kind not in self.courses[course_code]["weights"] or not 0 <= score <= 100:
            return False
        if any(g["student"] == student_id and g["course"] == course_code and g["kind"] == kind for g in self.grades):
            return False
        self.grades.append({"student": student_id, "course": course_code, "kind": kind, "score": score})
        return True

    def course_average(self, student_id: int, course_code: str) -> float:
        """Weighted average over the graded kinds (weights renormalised). 0.0 if nothing is graded yet."""
        weights = self.courses.get(course_code, {}).get("weights", {})
        got = [(weights[g["kind"]], g["score"]) for g in self.grades
               if g["student"] == student_id and g["course"] == course_code]
        total_w = sum(w for w, _ in got)
        return round(sum(w * s for w, s in got) / total_w, 2) if total_w else 0.0

    def honor_roll(self, threshold: float = 85.0) -> List[str]:
        """Names of students whose every graded course average is at least the threshold."""
        out = []
        for s in self.students:
            courses = {c for sid, c in self.enrollments if sid == s["id"]}
            avgs = [self.course_average(s["id"], c) for c in courses
                    if any(g["student"] == s["id"] and g["course"] == c for g in self.grades)]
            if avgs and min(avgs) >= threshold:
                out.append(s["name"])
        return out

    def lock_term(self) -> bool:
        """Freeze the gradebook for the term. Fails if any enrolment has no grade at all."""
        if self.term_locked:
            return False
        graded = {(g["student"], g["course"]) for g in self.grades}
        if self.enrollments - graded:
            return False
        self.term_locked = True
        return True
