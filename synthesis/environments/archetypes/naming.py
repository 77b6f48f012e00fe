"""Identifier helpers shared by archetypes: nouns, plural nouns, class names, id prefixes.

Vocabulary words are written by people, in any script and with any punctuation. Every
identifier derived from one (tool names, collections, id prefixes, class names) goes through
`identifier`, which transliterates to ASCII and never drops a letter silently; the words shown
to people (labels in task text and descriptions) keep the original spelling (`label`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

# Latin letters that Unicode decomposition leaves alone (ß and ſ are handled by casefold).
_EXTRA_LETTERS = {
    "æ": "ae",
    "œ": "oe",
    "ø": "o",
    "đ": "d",
    "ð": "d",
    "þ": "th",
    "ł": "l",
    "ı": "i",
    "ħ": "h",
    "ŀ": "l",
    "ŋ": "ng",
    "ĸ": "k",
}


class NamingError(ValueError):
    """A word that cannot name identifiers; `generate_spec` adds the topic to the message."""

    def __init__(self, subject: str, word: Any, problem: str) -> None:
        super().__init__(f"{subject} = {word!r} {problem}")
        self.subject, self.word, self.problem = subject, word, problem


def identifier(word: Any, subject: str) -> str:
    """`word` as a snake_case ASCII identifier part: "Élève" → "eleve", "Straße" → "strasse".

    Letters are transliterated (decomposed, accents dropped); anything that is neither a letter
    nor a digit separates words. Raises NamingError (naming `subject`, e.g. "vocabulary
    'customer'") when a letter has no ASCII spelling, or nothing usable is left: losing part
    of a word silently would give tools names nobody chose.
    """
    if not isinstance(word, str):
        raise NamingError(subject, word, f"must be a text, not {type(word).__name__}")
    # casefold spells ß as ss; decomposing before and after it separates every accent.
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", word).casefold())
    out: list[str] = []
    lost: list[str] = []
    for ch in text:
        if unicodedata.combining(ch):
            continue
        ch = _EXTRA_LETTERS.get(ch, ch)
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif unicodedata.category(ch) == "Nd":
            out.append(str(unicodedata.decimal(ch)))
        elif unicodedata.category(ch).startswith("L"):
            lost.append(ch)
            out.append(" ")
        else:
            out.append(" ")  # punctuation, spaces, symbols, emoji: word separators
    if lost:
        shown = ", ".join(repr(ch) for ch in dict.fromkeys(lost))
        raise NamingError(
            subject, word, f"has letters with no ASCII spelling for identifiers ({shown})"
        )
    name = re.sub(r"[^a-z0-9]+", "_", "".join(out)).strip("_")
    if not re.search(r"[a-z]", name):
        raise NamingError(subject, word, "has no letters to name identifiers with")
    if not name[0].isalpha():
        raise NamingError(
            subject, word, f"must start with a letter to name identifiers (it gives {name!r})"
        )
    return name


def label(word: str) -> str:
    """The word as people read it: the original spelling, underscores read as spaces, and
    runs of whitespace (newlines included) as one space so it fits in a sentence."""
    return " ".join(word.replace("_", " ").split())


@dataclass(frozen=True)
class Noun:
    """A vocabulary noun: `name` for identifiers, `label` for text shown to people."""

    name: str
    label: str

    @property
    def plural(self) -> str:
        return plural(self.name)

    @property
    def plural_label(self) -> str:
        return plural(self.label)


def noun(vocabulary: dict[str, Any], key: str) -> Noun:
    """The noun a topic's vocabulary gives for `key` (KeyError when the topic lacks it)."""
    word = vocabulary[key]
    return Noun(name=identifier(word, f"vocabulary {key!r}"), label=label(word))


def plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def class_name(topic_id: str) -> str:
    """ "dental_clinic" → "DentalClinicEnv" (a topic id is transliterated like any word)."""
    parts = identifier(topic_id, "topic_id").split("_")
    return "".join(part.capitalize() for part in parts) + "Env"


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
