"""English the banks cannot spell out: articles, plurals, capitals, lists and sentence ends."""

from __future__ import annotations

import re

# Words starting with a vowel letter but a consonant sound, and the other way round.
_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "eu", "one", "once", "ur")
_VOWEL_SOUND = ("hour", "honest", "honour", "honor", "heir")
_LETTER_VOWEL_SOUND = set("aefhilmnorsx")


def article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows it, by the sound of its first word."""
    word = phrase.strip().split(" ", 1)[0]
    low = word.lower()
    if not low:
        return "a"
    # Spelled-out codes (an SMS, an HR request) go by the sound of their first letter.
    if len(word) > 1 and word.isupper() and word.isalpha():
        return "an" if low[0] in _LETTER_VOWEL_SOUND else "a"
    if low.startswith(_VOWEL_SOUND):
        return "an"
    if low.startswith(_CONSONANT_SOUND):
        return "a"
    if low[0].isdigit():
        return "an" if low.startswith(("8", "11", "18")) else "a"
    return "an" if low[0] in "aeiou" else "a"


def with_article(phrase: str) -> str:
    return f"{article(phrase)} {phrase}"


_IRREGULAR = {
    "person": "people",
    "child": "children",
    "man": "men",
    "woman": "women",
    "staff": "staff",
    "series": "series",
    "equipment": "equipment",
}


def plural(noun: str) -> str:
    """The plural of a noun phrase (its last word changes)."""
    head, _, last = noun.rpartition(" ")
    low = last.lower()
    if low in _IRREGULAR:
        out = _IRREGULAR[low]
    elif re.search(r"[^aeiou]y$", low):
        out = last[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", low):
        out = last + "es"
    else:
        out = last + "s"
    return f"{head} {out}" if head else out


def count_noun(n: int, noun: str) -> str:
    """'1 ticket', '3 tickets': the number agrees with the noun."""
    return f"{n} {noun if n == 1 else plural(noun)}"


def capitalise(text: str) -> str:
    """The first letter upper case, the rest as it is (names keep their capitals)."""
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
        if not (ch.isspace() or ch in "\"'(“"):
            return text
    return text


def join_phrases(parts: list[str], conjunction: str = "and") -> str:
    """'a', 'a and b', 'a, b and c'."""
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {conjunction} " + parts[-1]


def sentence(text: str, end: str = ".") -> str:
    """A sentence: capitalised, one end mark (a question keeps its '?')."""
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return ""
    text = capitalise(text)
    if text[-1] in ".!?":
        return text
    if text[-1] in ",;:":
        text = text[:-1]
    return text + end


def tidy(text: str) -> str:
    """Whole text: single spaces, no space before punctuation, articles agreeing."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r" ([,.;:!?])", r"\1", text)
    text = re.sub(r"([.!?])\1+", r"\1", text)
    return fix_articles(_say_once(text))


# Fillers a person says once in a message; banks drawn per goal could repeat them.
_ONCE = re.compile(r"(?:(?<=[.!?] )|^)If you would, (\w)|, if you would,|\bif you would, ")


def _say_once(text: str) -> str:
    """`text` with every 'if you would' after the first left out."""
    seen = False

    def drop(m: re.Match[str]) -> str:
        nonlocal seen
        if not seen:
            seen = True
            return m[0]
        if m[1]:
            return m[1].upper()
        return "," if m[0].startswith(",") else ""

    return _ONCE.sub(drop, text)


_ARTICLE = re.compile(r"\b([Aa])(n?) ([\"'(]?)([A-Za-z0-9][\w-]*)")


def fix_articles(text: str) -> str:
    """Correct 'a'/'an' before every word, so phrases joined in any order agree."""

    def repl(m: re.Match[str]) -> str:
        want = article(m.group(4))
        a = m.group(1)
        word = a + ("n" if want == "an" else "")
        return f"{word} {m.group(3)}{m.group(4)}"

    return _ARTICLE.sub(repl, text)
