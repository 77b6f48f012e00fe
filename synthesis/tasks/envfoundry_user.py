"""EnvFoundry's simulated user: the other side of a multi-turn task, offline and deterministic.

Shipped verbatim beside the shards (next to `envfoundry_reward.py`); it needs nothing but
the Python standard library. A task line whose `user` record is set is multi-turn: the
prompt's user message is the record's `opening`, which leaves out a detail the agent needs
(the new value of a field, say), and the agent has to ask for it, or asks for the first thing
only, the next ones (`stages`) coming once the agent has replied:

    import json, envfoundry_reward as efr, envfoundry_user as efu
    task = json.loads(open("rl/train.jsonl").readline())
    user = efu.SimulatedUser(task["user"])      # None-safe: efu.for_task(task)
    messages = [*task["prompt"]]                 # system + the user's opening
    ...                                          # the agent's turn, appended to messages
    follow_up = user.answer(messages)            # the user's next message, or None: over

The user answers each text turn of the agent (an assistant message without tool calls):

* a question, or a statement that it needs something, about a detail the user holds gets
  that detail's answer (`say`); a question that names several gets each of them;
* a question asking for more in general ("anything else I should know?") gets every detail
  not given yet, and ends the conversation when there is none;
* a question about anything else gets `unknown`: the user knows only its record, never a
  record id or a value the task's plan did not give it;
* a message that announces work to come ("I'll update it now") gets `go_ahead`, once per
  stretch of the agent's work: a second announcement with no tool call since is stalling;
* any other message is the agent's reply: while the user has more to ask (`stages`: what a
  person asks for next, once the first thing is done) it gets the next of them; after the
  last, `answer` returns None.

So the user never ends the conversation before the agent's last message, and every word it
says comes from its record. The same record and the same agent messages give the same
answers. After `MAX_ANSWERS` answers the user has nothing more to say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# 1: details held back and asked for; `unknown`, `go_ahead` and the general "more" question.
# 2: `stages`: requests the user makes after the agent's reply to the one before.
USER_SIM_VERSION = 2
MAX_ANSWERS = 8

# A sentence that asks the user something: a question mark, or the words of a request.
_ASKS = re.compile(
    r"\?|\b(?:could|can|would|will) you (?:please |kindly )?(?:tell|give|confirm|let|send|"
    r"share|provide|clarify|specify|say)\b|\b(?:please|kindly) (?:tell|give|confirm|let|"
    r"send|share|provide|clarify|specify)\b|\blet me know\b|\bi (?:need|will need|'ll need|"
    r"would need|require|still need)\b|\bneed (?:to know|you to (?:tell|give|confirm))\b",
    re.IGNORECASE,
)
# Asking for more without naming what: "anything else?", "what else do I need to know?".
_MORE = re.compile(
    r"\b(?:anything else|something else|any other|other details?|more details?|more "
    r"information|more info|further details?|what else|the details|all the details|"
    r"any details?|missing details?|what do you need|what would you like|how can i help)\b",
    re.IGNORECASE,
)
# Work announced, not done: the agent means to go on after the user's answer.
_ANNOUNCES = re.compile(
    r"\b(?:i'll|i will|let me|i'm going to|i am going to|i shall|one moment|just a moment|"
    r"give me a moment|bear with me|i'll now|i will now|proceeding|about to)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d')
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(text: str) -> set[str]:
    """Lower-cased words, each with its plural's singular beside it ('tags' -> 'tag')."""
    out = set()
    for word in _WORD.findall(text.lower()):
        out.add(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            out.add(word[:-1])
    return out


def _names(about: Sequence[str], words: set[str]) -> bool:
    """Whether a sentence's `words` name one of `about` (each of its words present)."""
    return any(_words(key) <= words for key in about if key.strip())


def _asks(sentence: str) -> bool:
    return bool(_ASKS.search(sentence))


class Detail:
    """Something the user can say when asked: what it is `about` (the words a question
    names it by), the `say` answer, and whether the opening `held` it back."""

    def __init__(self, record: dict[str, Any], held: bool) -> None:
        self.about = [str(a) for a in record.get("about", ())]
        self.say = str(record["say"])
        self.question = str(record.get("question", ""))
        self.facts = [str(f) for f in record.get("facts", ())]
        self.held = held


class SimulatedUser:
    """The user of one task: `opening`, then `answer(messages)` after each agent turn."""

    def __init__(self, record: dict[str, Any]) -> None:
        if not isinstance(record, dict) or not isinstance(record.get("opening"), str):
            raise ValueError("a user record needs its 'opening' message")
        version = record.get("version", USER_SIM_VERSION)
        if not isinstance(version, int) or not 1 <= version <= USER_SIM_VERSION:
            raise ValueError(
                f"user record version {version} is newer than this simulator's ({USER_SIM_VERSION})"
            )
        self.opening = record["opening"]
        self.details = [Detail(d, True) for d in record.get("details", ())]
        self.known = [Detail(d, False) for d in record.get("known", ())]
        self.stages = [Detail(d, True) for d in record.get("stages", ())]
        self.staged = 0  # how many of `stages` the user has asked for so far
        replies = record.get("replies") or {}
        self.unknown = str(replies.get("unknown") or "Sorry, I don't know that.")
        self.go_ahead = str(replies.get("go_ahead") or "Yes, please go ahead.")
        self.given: set[int] = set()  # indices of `details` said so far
        self.answers: list[str] = []
        self._said_go_ahead = False  # the user's last answer was `go_ahead`
        self.over = False

    def metadata(self) -> dict[str, Any]:
        """What a transcript records of its user: user messages (the opening included),
        the details held back and how many the agent got, and for a task asked one request
        at a time, its requests and how many the user made."""
        out: dict[str, Any] = {
            "turns": 1 + len(self.answers),
            "user_sim": "offline",
            "withheld": len(self.details),
            "revealed": len(self.given),
        }
        if self.stages:
            out.update(stages=1 + len(self.stages), staged=1 + self.staged)
        return out

    @property
    def pending(self) -> list[Detail]:
        """The held details the user has not said yet."""
        return [d for i, d in enumerate(self.details) if i not in self.given]

    def answer(self, messages: Sequence[dict[str, Any]]) -> str | None:
        """The user's next message after the agent's last text turn in `messages` (OpenAI
        chat messages), or None when the conversation is over."""
        if self.over or len(self.answers) >= MAX_ANSWERS:
            self.over = True
            return None
        text = _last_text(messages)
        reply = self._reply(text, _acted_since_user(messages))
        self._said_go_ahead = reply == self.go_ahead
        if reply is None:
            self.over = True
            return None
        self.answers.append(reply)
        return reply

    def _reply(self, text: str, acted: bool) -> str | None:
        # What the agent quotes (a record's text: "Please confirm the order", "I will call")
        # is not the agent asking or announcing anything.
        text = _QUOTED.sub('""', text)
        asking = [s for s in _SENTENCE.split(text) if s.strip() and _asks(s)]
        if asking:
            words = set().union(*(_words(s) for s in asking))
            named = [i for i, d in enumerate(self.details) if _names(d.about, words)]
            known = [d for d in self.known if _names(d.about, words)]
            if not named and not known and any(_MORE.search(s) for s in asking):
                named = [i for i, _ in enumerate(self.details) if i not in self.given]
                if not named:
                    # "Anything else?" with nothing held back: the next request, if any.
                    return self._next_stage()
            if named or known:
                self.given.update(named)
                return " ".join([*(self.details[i].say for i in named), *(d.say for d in known)])
            return self.unknown
        # Told to go ahead and announcing again without a call since: stalling, not working.
        if _ANNOUNCES.search(text) and (acted or not self._said_go_ahead):
            return self.go_ahead
        return self._next_stage()

    def _next_stage(self) -> str | None:
        """What the user asks for next after the agent's reply, or None: nothing more."""
        if self.staged >= len(self.stages):
            return None
        self.staged += 1
        return self.stages[self.staged - 1].say


def for_task(task: dict[str, Any]) -> SimulatedUser | None:
    """The simulated user of a task line, or None for a single-turn task."""
    record = task.get("user")
    return SimulatedUser(record) if record else None


def _last_text(messages: Sequence[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, list):  # content parts: the text ones, joined
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def _acted_since_user(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether the agent called a tool since the user last spoke."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return False
        if message.get("role") == "tool" or message.get("tool_calls"):
            return True
    return False
