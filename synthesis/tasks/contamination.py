"""Benchmark contamination: task text that shares a passage with a benchmark's questions.

A task is contaminated when its text shares a run of `NGRAM_WORDS` consecutive words
(normalised: NFKC, lower case, punctuation dropped) with a benchmark question, so a model
trained on it could have seen that benchmark's text. The run must carry content: a passage
made only of the words our own phrasing writes ("could you please help me with the
following") is the project's stock wording meeting a benchmark's, not the benchmark's task.
The benchmarks are read at run time from packages installed beside the project, never
downloaded: today the BFCL multi-turn questions (every user turn of the
`BFCL_*multi_turn*.json` files that bfcl-eval ships).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from synthesis.models import Scenario
from synthesis.tasks.task_features import words

NGRAM_WORDS = 8
BFCL_PACKAGE = "bfcl_eval"
BFCL_DISTRIBUTION = "bfcl-eval"
BFCL_MULTI_TURN_FILES = "BFCL_*multi_turn*.json"


@dataclass(frozen=True)
class Benchmark:
    name: str
    passages: Mapping[str, str]
    """Every normalised `NGRAM_WORDS`-word passage of its questions → the first question's id."""


def ngrams(text: str, size: int = NGRAM_WORDS) -> list[str]:
    return ngrams_of(words(text), size)


def ngrams_of(w: Sequence[str], size: int = NGRAM_WORDS) -> list[str]:
    return [" ".join(w[i : i + size]) for i in range(len(w) - size + 1)]


def benchmark_from_questions(name: str, questions: Iterable[tuple[str, str]]) -> Benchmark:
    """A benchmark from (question id, text) pairs; a passage maps to the first id holding it."""
    passages: dict[str, str] = {}
    for question_id, text in questions:
        for gram in ngrams(text):
            passages.setdefault(gram, question_id)
    return Benchmark(name=name, passages=passages)


@functools.cache
def bfcl_multi_turn() -> Benchmark | None:
    """The BFCL multi-turn user turns of the installed bfcl-eval (None when it is not
    installed). Read from the package's data files without importing it."""
    spec = importlib.util.find_spec(BFCL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    files = sorted(data.glob(BFCL_MULTI_TURN_FILES))
    if not files:
        return None
    version = importlib.metadata.version(BFCL_DISTRIBUTION)
    return benchmark_from_questions(
        f"BFCL multi-turn (bfcl-eval {version})", _bfcl_user_turns(files)
    )


def _bfcl_user_turns(files: list[Path]) -> Iterable[tuple[str, str]]:
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            for turn in entry.get("question", []):
                for message in turn:
                    if message.get("role") == "user" and isinstance(message.get("content"), str):
                        yield entry["id"], message["content"]


# The modules whose string constants are the words task text is phrased with.
PHRASING_MODULES = (
    "synthesis/tasks/phrasing.py",
    "synthesis/tasks/dialogue.py",
    "synthesis/tasks/text/banks.py",
    "synthesis/tasks/text/grammar.py",
    "synthesis/tasks/text/voices.py",
)


@functools.cache
def stock_words() -> frozenset[str]:
    """Every word of the project's own phrasing: what its phrasing modules' strings hold
    (read from their source, so a new phrase counts the day it is written)."""
    root = Path(__file__).resolve().parents[2]
    found: set[str] = set()
    for name in PHRASING_MODULES:
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(re.findall(r"[a-z]+", node.value.lower()))
    return frozenset(found)


def carries_content(passage: str) -> bool:
    """Whether a passage holds a word our phrasing does not write (a name, a file, a fact)."""
    stock = stock_words()
    return any(word not in stock for word in passage.split())


def installed_benchmarks() -> list[Benchmark]:
    """Every benchmark whose text this installation ships (bfcl-eval is installed by
    `make install`; without it, nothing is checked and the publish stage says so)."""
    return [b for b in (bfcl_multi_turn(),) if b is not None]


def contamination_reasons(
    scenarios: Iterable[Scenario], benchmarks: Iterable[Benchmark]
) -> dict[str, str]:
    """Scenario id → which benchmark passage its text shares, for every contaminated one."""
    return passages_shared(((s.scenario_id, words(s.task_text)) for s in scenarios), benchmarks)


def passages_shared(
    tasks: Iterable[tuple[str, Sequence[str]]], benchmarks: Iterable[Benchmark]
) -> dict[str, str]:
    """`contamination_reasons` of tasks given as (scenario id, their text's `words`)."""
    benchmarks = list(benchmarks)
    reasons: dict[str, str] = {}
    for scenario_id, task_words in sorted(tasks, key=lambda task: task[0]):
        grams = ngrams_of(task_words)
        for benchmark in benchmarks:
            hit = next((g for g in grams if g in benchmark.passages and carries_content(g)), None)
            if hit is not None:
                reasons[scenario_id] = (
                    f'contaminated: shares the {NGRAM_WORDS}-word passage "{hit}" with '
                    f"{benchmark.name} question {benchmark.passages[hit]}"
                )
                break
    return reasons
