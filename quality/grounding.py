"""Whether an episode's final answer tells only what its conversation showed.

An SFT target teaches a model to write its answers: one that states a balance no tool ever
returned, or says nothing changed after five edits, teaches it to make things up. This reads
an episode's messages (system, user, the assistant's tool calls, the tool results, the final
answer) and its initial and final state, and lists the answer's problems:

* a value (number, amount, date, time, phone, email, id or code, quoted text, name) that no
  earlier message supports, compared after the reward module's normalising (`normalise`,
  `tokens`, `mentions`), so "$1,200.00" is supported by 1200 and "March 4, 2026 at 2 PM" by
  "2026-03-04T14:00:00";
* a denial of a change the episode made: the answer says nothing changed while the final
  state differs from the initial one.

`benchmarks/sft_grounding.py` calls `answer_problems` on a home's oracle trajectories; a
self-test, which holds a run's calls and results rather than its chat, builds the chat with
`episode_messages` first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from synthesis.tasks.envfoundry_reward import mentions, normalise, tokens

# Global denials only: "I did not make the change you asked for" (an infeasible request's
# refusal) says nothing about the rest of the episode, so it is not one.
_DENIAL = re.compile(
    r"\b(?:nothing (?:needed|had|has|needs) to (?:change|be changed)"
    r"|nothing (?:was|has been|got|is|were) (?:changed|modified|updated|touched|altered)"
    r"|nothing changed"
    r"|no changes? (?:was |were |has been |have been )?(?:made|needed|necessary|required)"
    r"|(?:did not|didn't|have not|haven't|did no|made no) (?:make |made )?(?:any )?changes?\b"
    r"|(?:did not|didn't|have not|haven't) (?:change|changed|modify|modified) anything"
    r"|left everything (?:as it was|unchanged))",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Groups of digits joined by the separators phone numbers are written with (seven digits or
# more, checked where it is used; an ISO date has the shape too and is no phone).
_PHONE = re.compile(r"(?<![\w.-])\+?\(?\d{1,4}\)?(?:[ .-]\(?\d{2,4}\)?){2,}(?![\w-])")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{1,200})[\"”]")
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Dates in words are checked as dates (their normalised tokens); their capitals are no name.
_DATE_WORDS = re.compile(
    rf"\b(?:(?:{_WEEKDAYS}),?\s+)?(?:(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\.?)(?:,?\s+\d{{4}})?\b"
    rf"|\b(?:{_WEEKDAYS})\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll", "am", "pm", "a.m.", "p.m."})
_NUMERIC = re.compile(r"^-?\d+(?:\.\d+)?%?$")
_DATE_TOKEN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME_TOKEN = re.compile(r"^\d{2}:\d{2}$")
_EDGE = "\"'`.,;:!?()[]{}<>«»“”‘’*"
# Separators inside one shown value ("week-03/notes.md:2:Lecturer: Ann Lee", a grep line):
# what they join is supported on its own too.
_INNER = re.compile(r"[:|/=]")
_GAP = " \u00a6 "  # between two shown values, so a run of words never spans both


def answer_problems(
    messages: Sequence[dict[str, Any]],
    initial_state: dict[str, Any] | None,
    final_state: dict[str, Any] | None,
) -> list[str]:
    """What is wrong with the episode's final answer (the last assistant text): each value it
    states that no earlier message supports, and a denial of a change the episode made.
    Empty when the answer is grounded (or there is none)."""
    at = _final_answer_index(messages)
    if at is None:
        return []
    answer = str(messages[at]["content"])
    support = Support(shown_texts(messages[:at]))
    problems = [
        f"states {kind} {value!r}, which no earlier message shows"
        for kind, value in support.unsupported(answer)
    ]
    denial = _DENIAL.search(answer)
    changed = None not in (initial_state, final_state) and initial_state != final_state
    if denial is not None and changed:
        problems.append(f"says {denial.group(0)!r}, but the episode changed the state")
    return problems


def episode_messages(
    system: str,
    request: str,
    calls: Sequence[tuple[str, dict[str, Any]]],
    results: Sequence[Any],
    answer: str,
) -> list[dict[str, Any]]:
    """A run's chat as a rollout records it (synthesis.rollouts.episodes): each call is one
    assistant message followed by its result, then the final answer. A call without a result
    (None: it did not run) is left out."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": request},
    ]
    for i, ((tool, args), result) in enumerate(zip(calls, results, strict=False)):
        if result is None:
            continue
        function = {"name": tool, "arguments": json.dumps(args, sort_keys=True)}
        messages.append(
            {"role": "assistant", "tool_calls": [{"id": f"call_{i}", "function": function}]}
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps(result)}
        )
    messages.append({"role": "assistant", "content": answer})
    return messages


def _final_answer_index(messages: Sequence[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") != "assistant" or message.get("tool_calls"):
            continue
        if isinstance(message.get("content"), str):
            return i
    return None


def shown_texts(messages: Iterable[dict[str, Any]]) -> list[str]:
    """Every value the messages showed, as text: the system and user words, the arguments
    of each tool call and the scalars of each tool result. The assistant's own earlier words
    are no evidence (they may be what is wrong)."""
    out: list[str] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "user") and isinstance(message.get("content"), str):
            out.append(message["content"])
        elif role == "tool":
            out += _scalars(_parsed(message.get("content")))
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                out += _scalars(_parsed((call.get("function") or {}).get("arguments")))
    return out


def _parsed(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content


def _scalars(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for v in value.values() for text in _scalars(v)]
    if isinstance(value, list):
        return [text for v in value for text in _scalars(v)]
    if value is None:
        return []
    if isinstance(value, bool):
        return ["yes" if value else "no"]
    return [str(value)]


class Support:
    """What a conversation showed, ready to be asked whether it shows a value."""

    def __init__(self, texts: Iterable[str]) -> None:
        pieces: list[str] = []
        for text in texts:
            pieces.append(text)
            if _INNER.search(text):
                pieces.append(_INNER.sub(" ", text))
        self.blob = _GAP.join(pieces)
        self.normalised = normalise(self.blob)
        self.tokens = set(tokens(self.blob))
        self.digits = {_digits(m.group(0)) for m in _PHONE.finditer(self.blob)}

    def shows(self, text: str) -> bool:
        return mentions(self.blob, text)

    def unsupported(self, answer: str) -> list[tuple[str, str]]:
        """(kind, value) of every value `answer` states that this conversation does not."""
        out: list[tuple[str, str]] = []
        rest = answer
        for m in _EMAIL.finditer(answer):
            if normalise(m.group(0)) not in self.normalised:
                out.append(("email", m.group(0)))
        rest = _EMAIL.sub(" ", rest)
        for m in _PHONE.finditer(rest):
            phone = m.group(0).strip()
            if phone.endswith(")") and "(" not in phone:
                phone = phone[:-1]  # the bracket of the sentence, not of the number
            digits = _digits(phone)
            if len(digits) < 7 or _ISO_DATE.match(phone):
                continue
            # Written another way ("(546) 076-1028" for +1-546-076-1028): the same digits.
            if not any(digits in shown for shown in self.digits):
                out.append(("phone", phone))
            rest = rest.replace(m.group(0), " ")
        for m in _QUOTED.finditer(rest):
            if not self.shows(m.group(1)):
                out.append(("quoted text", m.group(1)))
        rest = _QUOTED.sub(" ", rest)
        for token in dict.fromkeys(tokens(rest)):
            if _has_digit(token) and not self._shows_token(token):
                out.append((_kind(token), _as_written(rest, token)))
        for name in _names(_DATE_WORDS.sub(" . ", rest)):
            if not any(self.shows(candidate) for candidate in name):
                out.append(("name", name[0]))
        return out

    def _shows_token(self, token: str) -> bool:
        if token in self.tokens:
            return True
        if _NUMERIC.match(token) or _DATE_TOKEN.match(token) or _TIME_TOKEN.match(token):
            return False
        # A code inside a longer shown value ("week-03/notes.md" in a grep line).
        return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", self.normalised) is not None


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _as_written(text: str, token: str) -> str:
    """`token` (normalised, lower case) as `text` writes it, where it does so verbatim."""
    m = re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text, re.IGNORECASE)
    return m.group(0) if m else token


def _kind(token: str) -> str:
    if _DATE_TOKEN.match(token):
        return "date"
    if _TIME_TOKEN.match(token):
        return "time"
    if _NUMERIC.match(token):
        return "number"
    return "id"


def _names(text: str) -> list[tuple[str, ...]]:
    """Runs of capitalised words in `text`, each with the readings that would support it:
    a run that opens a sentence may owe its first capital to the sentence ("The", "Nothing"),
    so it is supported without that word too, and a one-word run there is no name at all."""
    out: list[tuple[str, ...]] = []
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n+|\s[(\u2014-]\s?", text):
        run: list[str] = []
        starts = True
        opened = True

        def close() -> None:
            nonlocal run, opened
            words = [w for w in run if w]
            if words and not (opened and len(words) == 1):
                full = " ".join(words)
                out.append((full, " ".join(words[1:])) if opened else (full,))
            run, opened = [], False

        for raw in sentence.split():
            word = raw.strip(_EDGE)
            if word.lower().endswith(("'s", "’s")):
                word = word[:-2]
            capital = bool(word) and word[0].isupper() and word.lower() not in _NOT_NAMES
            continues = bool(run) and bool(word) and word[0].isdigit()
            if capital or continues:
                if not run:
                    opened = starts
                run.append(word)
            else:
                close()
            starts = False
            if raw and (raw[-1] in ",;:)" or raw[0] in '("“'):
                close()
        close()
    # A run of codes only ("ORD-0004") is an id, checked as one.
    return [name for name in out if any(not _has_digit(w) for w in name[0].split())]


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)
