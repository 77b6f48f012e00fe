"""Identifier helpers shared by archetypes: plural nouns, class names, env ids."""

from __future__ import annotations

import re


def snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def human(noun: str) -> str:
    return noun.replace("_", " ")


def class_name(topic_id: str) -> str:
    return "".join(part.capitalize() for part in topic_id.split("_")) + "Env"


def id_prefix(noun: str) -> str:
    letters = re.sub(r"[^A-Za-z]", "", noun).upper()
    consonants = letters[0] + re.sub(r"[AEIOU]", "", letters[1:])
    return (consonants + letters)[:3]


def assign_prefixes(nouns: list[str]) -> list[str]:
    """Distinct id prefixes for the entities of one environment, in order."""
    taken: set[str] = set()
    prefixes = []
    for noun in nouns:
        prefix = id_prefix(noun)
        n = 2
        while prefix in taken:
            prefix = f"{id_prefix(noun)[:2]}{n}"
            n += 1
        taken.add(prefix)
        prefixes.append(prefix)
    return prefixes
