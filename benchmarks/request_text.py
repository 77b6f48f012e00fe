"""Whether published requests read as people write them, beside BFCL's human-written turns.

    python benchmarks/request_text.py --home DIR [--show N]

Reads the RL lines of a finished build (`DIR/current/shards/rl/*.jsonl`: every published
task, its tools and, for a multi-turn task, its simulated user) and measures the task texts
(the whole request) against the user turns of BFCL's `multi_turn_base` file that bfcl-eval
ships, on as many of our texts as BFCL has turns (a sample fixed by a seed):

* sentence reuse: the share of sentences (5+ words; names, ids, numbers and dates replaced
  by placeholders as in benchmarks/text_variety.py) that occur word for word in another
  text of the same corpus. Goal: ours at most 2x BFCL's.
* gzip ratio of the placeholder texts joined (text_variety's measure). Goal: ours <= BFCL's.
* slips, on every published text, each of which must be 0: a tool name or a parameter name
  of the task's own tools written as an identifier (`stock_level`, `updateOrder`); a field
  whose name is no noun said as one ("the available of the stock level"); a
  placeholder value (a bracketed marker, a template field, lorem ipsum, TODO); an a/an slip
  ("a order", "an booking").
* multi-turn share: the tasks whose simulated user holds back a detail the agent needs, or a
  later request, and first says it in a later turn. Goal: at least 30% of the published tasks.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.text_variety import gzip_ratio, placeholders  # noqa: E402

SEED = 0
MIN_WORDS = 5
GOAL_REUSE_TIMES = 2.0
GOAL_MULTI_TURN = 0.30
# A sentence ends at a full stop, a question or exclamation mark, or before a list's number.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s+(?=\d[.)-] )")
_WORD = re.compile(r"[\w<>'-]+")
# Markers a template or a generator leaves behind, never words a person writes.
_PLACEHOLDER = re.compile(
    r"\[[A-Za-z _]{1,30}\d*\]|\{[\w ]{1,30}\}|<[A-Z_]{2,}>|\b(?:lorem|ipsum|"
    r"placeholder|dummy|foobar|value_?\d+|string_?\d+|sample_\w+)\b"
)
_ARTICLE = re.compile(r"\b([Aa]n?) ([A-Za-z][\w-]*)")
# Words whose first letter misleads: a vowel letter said as a consonant, a silent h.
_A_BEFORE_VOWEL = re.compile(r"^(?:uni|use|usa|usu|uti|ure|uro|ubiq|eu|ewe|one\b|once)", re.I)
_AN_BEFORE_CONSONANT = re.compile(r"^(?:hour|honest|honou?r|heir)", re.I)


def sentences(text: str) -> list[str]:
    """The sentences of 5+ words of `text`, placeholders put in, lower-cased."""
    out = []
    for part in _SENTENCE_END.split(placeholders(text)):
        words = _WORD.findall(part.lower())
        if len(words) >= MIN_WORDS:
            out.append(" ".join(words))
    return out


def reuse_rate(texts: list[str]) -> float:
    """The share of sentences that occur, word for word, in another text of `texts`."""
    per_text = [set(sentences(t)) for t in texts]
    in_texts = Counter(s for found in per_text for s in found)
    total = reused = 0
    for text in texts:
        for s in sentences(text):
            total += 1
            reused += in_texts[s] > 1
    return reused / max(1, total)


def identifiers(text: str, tools: list[dict[str, Any]]) -> list[str]:
    """Tool and parameter names of `tools` written in `text` as code writes them: a name
    with an underscore or an inner capital (a plain word such as 'status' is a word). A name
    in double quotes is a key the user means literally (a setting in a file: '"timeout_s"'
    is config/app.ini's key, whatever a tool's parameter is called), not a slip."""
    names = set()
    for tool in tools:
        fn = tool.get("function", tool)
        names.add(fn.get("name", ""))
        names |= set((fn.get("parameters") or {}).get("properties", {}))
    coded = {n for n in names if "_" in n or re.search(r"[a-z][A-Z]", n)}
    unquoted = re.sub(r'"[^"\n]*"', '""', text)
    return sorted(n for n in coded if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", unquoted))


# A field named by a word that is no noun ("the available of the stock level").
_ADJECTIVE_FIELD = re.compile(r"^(?:\w+ed|\w+able|\w+ible|active|open|free|due|visible|public)$")


def field_words_as_nouns(text: str, tools: list[dict[str, Any]]) -> list[str]:
    """'the available of ...': a parameter of the task's tools whose name is an adjective
    or a participle, said as if it were a noun."""
    names = set()
    for tool in tools:
        fn = tool.get("function", tool)
        names |= set((fn.get("parameters") or {}).get("properties", {}))
    words = {n.replace("_", " ") for n in names if _ADJECTIVE_FIELD.match(n.split("_")[-1])}
    return sorted(
        w for w in words if re.search(rf"\bthe {re.escape(w)} (?:of|on|for)\b", text, re.I)
    )


# A section header of an INI file the request names ("[defaults]" in config/app.ini) is the
# file's own text, which a person quotes as it is.
_INI_SECTION = re.compile(r"\[[a-z][a-z_]*\]")


def placeholder_marks(text: str) -> list[str]:
    """The markers a template or a generator left in `text` (INI section headers of a
    request that names an .ini file are the file's words, not markers)."""
    marks = _PLACEHOLDER.findall(text)
    if ".ini" in text:
        marks = [m for m in marks if not _INI_SECTION.fullmatch(m)]
    return marks


def article_slips(text: str) -> list[str]:
    """'a order', 'an booking': an article its next word does not take (codes and
    abbreviations, whose sound the letters do not tell, are left alone)."""
    slips = []
    for m in _ARTICLE.finditer(text):
        art, word = m[1].lower(), m[2]
        if word.isupper() or any(c.isdigit() for c in word) or len(word) == 1:
            continue
        vowel = word[0].lower() in "aeiou"
        wants_an = (vowel and not _A_BEFORE_VOWEL.match(word)) or bool(
            _AN_BEFORE_CONSONANT.match(word)
        )
        if (art == "an") != wants_an:
            slips.append(m[0])
    return slips


def bfcl_base_turns() -> list[str]:
    """Every user turn of BFCL's multi_turn_base questions (as bfcl-eval ships them)."""
    data = resources.files("bfcl_eval") / "data"
    path = next(p for p in data.iterdir() if "multi_turn_base" in p.name)
    turns = []
    for line in path.read_text().splitlines():
        if line.strip():
            for turn in json.loads(line)["question"]:
                turns += [m["content"].strip() for m in turn if m.get("role") == "user"]
    return [t for t in turns if t]


def published_lines(home: Path) -> list[dict[str, Any]]:
    rl = home / "current" / "shards" / "rl"
    lines = []
    for path in sorted(rl.glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not lines:
        raise SystemExit(f"no RL lines under {rl}: build the home first")
    return sorted(lines, key=lambda line: line["scenario_id"])


def multi_turn(line: dict[str, Any]) -> bool:
    """Whether the task's simulated user first says something the agent needs after its
    opening: a detail it held back, or a later request (`stages`)."""
    user = line.get("user") or {}
    return bool(user.get("details") or user.get("stages"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--show", type=int, default=0, help="print N sampled texts")
    args = parser.parse_args()

    lines = published_lines(args.home)
    texts = [line["task_text"] for line in lines]
    bfcl = bfcl_base_turns()
    sample = random.Random(SEED).sample(texts, min(len(texts), len(bfcl)))
    ours_reuse, bfcl_reuse = reuse_rate(sample), reuse_rate(bfcl)
    ours_gzip, bfcl_gzip = (
        gzip_ratio([placeholders(t) for t in sample]),
        gzip_ratio([placeholders(t) for t in random.Random(SEED).sample(bfcl, len(bfcl))]),
    )
    coded = [(line, identifiers(line["task_text"], line["tools"])) for line in lines]
    coded = [(line, found) for line, found in coded if found]
    nouned = [(line, field_words_as_nouns(line["task_text"], line["tools"])) for line in lines]
    nouned = [(line, found) for line, found in nouned if found]
    marked = [(t, placeholder_marks(t)) for t in texts]
    marked = [(t, found) for t, found in marked if found]
    slips = [(t, article_slips(t)) for t in texts]
    slips = [(t, found) for t, found in slips if found]
    multi = sum(map(multi_turn, lines))

    for text in sample[: args.show]:
        print(f"  {text}")
    n = len(sample)
    print(f"request text, {len(lines)} published tasks of {args.home}")
    print(f"{'':34}{'ours':>10}{'BFCL':>10}{'goal':>22}")
    reuse_goal = ours_reuse <= GOAL_REUSE_TIMES * bfcl_reuse
    print(
        f"{'sentence reuse (' + str(n) + ' texts)':34}{ours_reuse:>10.2%}{bfcl_reuse:>10.2%}"
        f"{'<= 2x BFCL':>22}  {_verdict(reuse_goal)}"
    )
    print(
        f"{'gzip ratio (placeholders)':34}{ours_gzip:>10.3f}{bfcl_gzip:>10.3f}"
        f"{'<= BFCL':>22}  {_verdict(ours_gzip <= bfcl_gzip)}"
    )
    for label, found in (
        ("tool/field identifiers", coded),
        ("field words as nouns", nouned),
        ("placeholder values", marked),
        ("a/an slips", slips),
    ):
        print(f"{label:34}{len(found):>10}{'':>10}{'0':>22}  {_verdict(not found)}")
        for item, what in found[:3]:
            text = item["task_text"] if isinstance(item, dict) else item
            print(f"      {what}: {text[:160]}")
    share = multi / len(lines)
    print(
        f"{'multi-turn (detail said later)':34}{share:>10.1%}{'':>10}{'>= 30%':>22}  "
        f"{_verdict(share >= GOAL_MULTI_TURN)}"
    )
    # Refusals must be multi-turn about as often as the rest, or the turns would tell them.
    for kind, infeasible in (("feasible", False), ("infeasible", True)):
        of_kind = [
            line for line in lines if bool(line["difficulty"].get("infeasible")) == infeasible
        ]
        if of_kind:
            rate = sum(map(multi_turn, of_kind)) / len(of_kind)
            print(f"{'  of ' + kind + ' tasks':34}{rate:>10.1%}  ({len(of_kind)} tasks)")
    # A figure, like benchmarks/task_shapes.py's: each line says whether its goal is met.
    return 0


def _verdict(met: bool) -> str:
    return "met" if met else "NOT MET"


if __name__ == "__main__":
    sys.exit(main())
