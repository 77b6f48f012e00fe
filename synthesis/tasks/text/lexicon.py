"""Word-level variation: interchangeable words and spellings, swapped inside bank phrases.

People who ask for the same thing rarely repeat each other word for word; a bank phrase
drawn twice should not either. Only words of a bank's own phrasing are swapped (never a
value, a name or a record's words: those are filled in after), and every group holds words
that fit wherever any of them appears in the banks.
"""

from __future__ import annotations

import random
import re

_GROUPS = (
    ("thanks", "thank you", "many thanks"),
    ("quick", "brief", "small", "short"),
    ("small", "little", "minor"),
    ("request", "ask", "query"),
    ("really", "truly", "genuinely"),
    ("done", "finished", "complete"),
    ("colleague", "coworker", "teammate"),
    ("manager", "boss", "supervisor"),
    ("system", "database"),
    ("records", "entries"),
    ("details", "particulars", "information"),
    ("hi", "hello", "hey"),
    ("grateful", "thankful"),
    ("urgent", "pressing", "time-sensitive"),
    ("noticed", "spotted", "saw"),
    ("problem", "issue", "glitch"),
    ("mistake", "error", "slip-up"),
    ("busy", "hectic", "packed"),
    ("lately", "recently", "of late"),
    ("fine", "okay", "alright"),
    ("double-check", "verify", "check"),
    ("carefully", "closely", "with care"),
    ("great", "lovely", "wonderful", "brilliant"),
    ("nice", "lovely", "good"),
    ("sorry", "apologies"),
    ("message", "note"),
    ("want", "would like"),
    ("changes", "updates", "edits"),
    ("task", "job"),
    ("item", "entry"),
    ("meeting", "catch-up", "huddle"),
    ("holiday", "vacation", "break"),
    ("website", "site", "web portal"),
    ("numbers", "figures", "totals"),
    ("figures", "numbers"),
    ("i'd", "i would"),
    ("i'm", "i am"),
    ("it's", "it is"),
    ("that's", "that is"),
    ("don't", "do not"),
    ("we're", "we are"),
    ("they're", "they are"),
    ("you're", "you are"),
    ("i've", "i have"),
    ("it'd", "it would"),
    ("they'd", "they would"),
    ("currently", "at the moment", "right now"),
    ("sometime", "at some point"),
    ("afterwards", "after that", "later"),
    ("altogether", "entirely", "completely"),
    ("already", "by now"),
    ("important", "essential", "crucial"),
    ("simple", "straightforward", "easy"),
    ("quickly", "promptly", "swiftly"),
    ("mess", "muddle", "tangle"),
    ("odd", "strange", "off"),
    ("keen", "eager"),
    ("trouble", "bother", "hassle"),
    ("then", "next"),
    ("sure", "certain"),
    ("complaint", "grievance"),
    ("sorted", "handled", "dealt with"),
    ("handle", "deal with", "take care of"),
    ("properly", "correctly"),
    ("rush", "hurry"),
    ("hurry", "rush"),
    ("stressed", "anxious", "worried"),
    ("polite", "courteous", "civil"),
    ("relieved", "glad"),
    ("messy", "untidy", "cluttered"),
    ("loose", "stray"),
    ("forgive", "excuse"),
    ("spotted", "noticed"),
    ("tiny", "small"),
    ("huge", "big", "large"),
    ("chaos", "mayhem", "madness"),
    ("honestly", "frankly", "truthfully"),
    ("usually", "normally", "typically"),
    ("probably", "likely"),
    ("several", "a number of"),
    ("asap", "as soon as possible"),
)
SWAPS: dict[str, tuple[str, ...]] = {group[0]: group for group in _GROUPS}
# Phrases of several words, swapped before single words.
_PHRASES = (
    ("let me know", "tell me", "give me a shout", "drop me a line"),
    ("right away", "straight away", "immediately"),
    ("as soon as you can", "as soon as possible", "at your earliest convenience"),
    ("when you get a chance", "when you have a moment", "when you can"),
    ("in the system", "in the records", "on file"),
    ("thank you", "thanks a lot", "many thanks"),
    ("a bit", "a little", "somewhat"),
    ("this morning", "earlier this morning", "first thing today"),
    ("at the moment", "right now", "currently"),
    ("make sure", "be sure"),
    ("go ahead and", "please", "feel free to"),
    ("i need you to", "i'd like you to", "i want you to"),
    ("once that is done", "once that's finished", "when that's through"),
    ("after that", "afterwards", "next"),
    ("a couple of", "a few", "some"),
    ("sort out", "deal with", "handle"),
    ("look up", "find", "check"),
    ("could you", "would you", "can you"),
    ("once that's done", "once that's sorted", "once that's through", "when that's finished"),
    ("while you're at it", "while you're in there", "at the same time"),
    ("on top of that", "in addition", "besides that", "as well as that"),
    ("with that out of the way", "with that sorted", "with that dealt with"),
    ("straight after", "right after", "immediately after"),
    ("i'd appreciate it if you'd", "i'd be grateful if you'd", "it would be great if you'd"),
    ("tell me", "let me know"),
    ("when that's sorted", "when that's dealt with", "when that's handled"),
    ("the whole thing", "all of it"),
    ("i'd like you to", "i want you to", "i need you to"),
    ("if possible", "if you can", "where possible"),
    ("no rush", "no hurry", "whenever suits"),
    ("a long time", "ages", "years"),
    ("keep an eye out for", "watch out for", "look out for"),
    ("thanks in advance", "thanks ahead of time", "thank you in advance"),
    ("have a look at", "take a look at", "look at"),
    ("any chance you could", "is there any chance you could", "could you possibly"),
    ("it would help if you could", "it'd help if you could", "it would be useful if you could"),
    (
        "i'd be grateful if you could",
        "i'd appreciate it if you could",
        "it'd be great if you could",
    ),
    ("as soon as that's through", "the moment that's through", "as soon as that's finished"),
)
_PHRASE = re.compile(r"\b(" + "|".join(re.escape(g[0]) for g in _PHRASES) + r")\b", re.IGNORECASE)
_PHRASE_SWAPS = {g[0]: g for g in _PHRASES}
SWAP_PROBABILITY = 0.8
# Words kept as they are before what only they can precede: "sorted this out" (not "dealt
# with this out"), "a bit of a mess" (not "somewhat of a mess"), "thanks a million".
_HAD_PARTICIPLE = re.compile(
    r"\s+(?:\w+ed|been|got|gone|done|seen|known|taken|left|sent|lost|bought|brought|made|"
    r"had|paid|put|said|told|thought|forgotten|written|given|run|set|kept|found|meant)\b"
)
_FIXED_BEFORE = {
    "sorted": re.compile(r"\s+(?:\w+\s+)?out\b"),
    "a bit": re.compile(r"\s+of\b"),
    "thanks": re.compile(r"\s+a million\b"),
    # "it's been" is "it has been", "they'd bought" is "they had bought".
    "it's": re.compile(r"\s+(?:been|got|gone)\b"),
    "i'd": _HAD_PARTICIPLE,
    "it'd": _HAD_PARTICIPLE,
    "they'd": _HAD_PARTICIPLE,
    "details": re.compile(r"\s+(?:are|were|have)\b"),  # "information are"
    "several": re.compile(r"\s+of\b"),  # "a number of of"
}
# Words kept after what they belong to: "have done" ("have complete"), "by mistake",
# "bank holiday".
_FIXED_AFTER = {
    "done": re.compile(r"(?:have|has|had|'ve|been|get|got|be|being)\s+$", re.IGNORECASE),
    "mistake": re.compile(r"\bby\s+$", re.IGNORECASE),
    "holiday": re.compile(r"\bbank\s+$", re.IGNORECASE),
}
_TOKEN = re.compile(r"\{[^}]*\}|[A-Za-z][A-Za-z'-]*")


def vary(template: str, rng: random.Random) -> str:
    """`template` with some of its words swapped for ones that mean the same there.

    Placeholders ({t}, {name}) are kept as they are; a capital stays a capital.
    """

    def swap(m: re.Match[str]) -> str:
        word = m[0]
        if word.startswith("{"):
            return word
        group = SWAPS.get(word.lower())
        if group is None or _fixed(m) or rng.random() >= SWAP_PROBABILITY:
            return word
        choice = rng.choice(group)
        if choice.startswith("i ") or choice == "i":
            choice = "I" + choice[1:]
        elif choice.startswith("i'"):
            choice = "I" + choice[1:]
        return choice[:1].upper() + choice[1:] if word[:1].isupper() else choice

    def swap_phrase(m: re.Match[str]) -> str:
        if _fixed(m) or rng.random() >= SWAP_PROBABILITY:
            return m[0]
        choice = rng.choice(_PHRASE_SWAPS[m[0].lower()])
        choice = re.sub(r"\bi\b|\bi'", lambda x: "I" + x[0][1:], choice)
        return choice[:1].upper() + choice[1:] if m[0][:1].isupper() else choice

    return _TOKEN.sub(swap, _PHRASE.sub(swap_phrase, template))


def _fixed(m: re.Match[str]) -> bool:
    """Whether the matched word is part of an idiom it must stay in (_FIXED_BEFORE/AFTER)."""
    word = m[0].lower()
    after, before = _FIXED_BEFORE.get(word), _FIXED_AFTER.get(word)
    if after is not None and after.match(m.string, m.end()) is not None:
        return True
    return before is not None and before.search(m.string[: m.start()]) is not None
