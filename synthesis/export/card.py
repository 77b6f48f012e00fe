"""The dataset card: `README.md` beside the shards, with its plots, byte-stable per build.

What is in the dataset, counts per split, archetype and difficulty, the reward definition and
how the build was made, in the Hugging Face card layout (YAML front matter, then Markdown).
The plots are SVG drawn by the report's own bar chart (synthesis/export/charts.py): plain
text with no timestamps or renderer metadata, so the same build draws the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.export.reward_audit import RewardAudit, render_reward_audit
from synthesis.export.rl_tasks import (
    REWARD_DEFINITION,
    REWARD_MODULE,
    USER_MODULE,
    VERIFIERS_MODULE,
)

CARD_NAME = "README.md"
PLOTS_DIR = "plots"
# The project declares no licence of its own; the card says so rather than guess one.
DATASET_LICENSE = "unknown"


@dataclass
class CardFacts:
    """What the card reports, gathered while the shards are written."""

    seed: int
    inputs_sha256: str | None
    provenance: Mapping[str, str] = field(default_factory=dict)
    # One per published task: split, archetype, final_tier, chain_length.
    tasks: list[dict[str, Any]] = field(default_factory=list)
    # policy -> (episodes, successful episodes), over every episode the build played.
    policies: dict[str, tuple[int, int]] = field(default_factory=dict)
    trajectories_selection: str = ""
    # What the self-tests measured of the reward (None: shards made without a warehouse).
    reward_audit: RewardAudit | None = None


def plots(facts: CardFacts) -> dict[str, bytes]:
    """The card's plots, by path relative to the card."""
    from synthesis.export.charts import Chart, svg_bar_chart

    lengths = Counter(int(t.get("chain_length") or 0) for t in facts.tasks)
    tiers = Counter(str(t.get("final_tier") or "unrated") for t in facts.tasks)
    charts = {
        "chain_lengths": Chart(
            "Tasks by gold chain length (tool calls)",
            [f"{n} call{'s' if n != 1 else ''}" for n in sorted(lengths)],
            [float(lengths[n]) for n in sorted(lengths)],
        ),
        "difficulty": Chart(
            "Tasks by difficulty tier",
            sorted(tiers, key=_tier_order),
            [float(tiers[t]) for t in sorted(tiers, key=_tier_order)],
        ),
        "success_by_policy": Chart(
            "Share of episodes solved, by policy",
            sorted(facts.policies),
            [
                facts.policies[p][1] / facts.policies[p][0] if facts.policies[p][0] else 0.0
                for p in sorted(facts.policies)
            ],
            value_format="{:.0%}",
        ),
    }
    return {
        f"{PLOTS_DIR}/{name}.svg": (svg_bar_chart(chart) + "\n").encode()
        for name, chart in charts.items()
    }


def _tier_order(tier: str) -> tuple[int, str]:
    order = {"trivial": 0, "easy": 1, "medium": 2, "hard": 3, "expert": 4}
    return order.get(tier, 9), tier


def render_card(facts: CardFacts, files: Sequence[Mapping[str, Any]]) -> bytes:
    """README.md for the shards `files` (manifest entries, the card's plots among them)."""
    splits = sorted({t["split"] for t in facts.tasks})
    lines = [
        "---",
        f"license: {DATASET_LICENSE}",
        "pretty_name: EnvFoundry tool-use environments and tasks",
        "tags:",
        "- tool-use",
        "- agents",
        "- reinforcement-learning",
        "- synthetic",
        "configs:",
        *_configs(files),
        "---",
        "",
        "# EnvFoundry dataset",
        "",
        "Executable tool environments with tasks whose success is checked on the final state "
        "and reply, made by EnvFoundry. Every file below is listed in `manifest.json` with its "
        "sha256.",
        "",
        "## What is in it",
        "",
        _md_table(
            ["file", "kind", "split", "rows"],
            [
                [f"`{f['path']}`", f["kind"], f["split"], "" if f["rows"] is None else f["rows"]]
                for f in files
            ],
        ),
        "",
        "- `rl/<split>.jsonl`: one self-contained RL task per line: `prompt` (system + user "
        "messages), `tools` (OpenAI function schemas), `environment` (its bundled code file "
        "under `environments/`, class name and whether EnvFoundry compiled it), `requires` "
        "(what that code imports beyond the standard library), `initial_state`, `checks`, "
        "`reward_rule` and `difficulty`. A multi-turn task also has `user`: its prompt's user "
        "message is what the user says first, `task_text` the whole request.",
        f"- `{REWARD_MODULE}`: standard-library-only `load_env`, `step` and `score` for those "
        "lines.",
        f"- `{USER_MODULE}`: standard-library-only simulated user of the multi-turn lines: "
        "it gives the details its opening held back when the agent asks for them.",
        f"- `{VERIFIERS_MODULE}`: the same lines as a `verifiers` (0.4) taskset for GRPO-style "
        "training, rewarded by that `score`.",
        "- `sft/<split>.jsonl`: OpenAI fine-tuning chat lines (tool-call arguments as JSON "
        "text, as OpenAI requires); `sft/<split>.parquet`: the same rows for TRL's SFT "
        "trainer (`messages` with arguments as objects, `tools`).",
        f"- `trajectories/<split>.parquet`: {facts.trajectories_selection}; the `policy` "
        "column names the policy of each row.",
        "",
        "## Counts",
        "",
        _md_table(
            ["split", "tasks", "environments"],
            [
                [
                    s,
                    sum(t["split"] == s for t in facts.tasks),
                    len({t["env_id"] for t in facts.tasks if t["split"] == s}),
                ]
                for s in splits
            ],
        ),
        "",
        "Tasks by archetype:",
        "",
        _counts_table("archetype", [t["archetype"] for t in facts.tasks]),
        "",
        "Tasks by difficulty tier:",
        "",
        _counts_table(
            "tier", [str(t.get("final_tier") or "unrated") for t in facts.tasks], _tier_order
        ),
        "",
        "## Plots",
        "",
        *[
            f"![{name}]({path})\n"
            for path, name in (
                (f"{PLOTS_DIR}/chain_lengths.svg", "Tasks by gold chain length"),
                (f"{PLOTS_DIR}/difficulty.svg", "Tasks by difficulty tier"),
                (f"{PLOTS_DIR}/success_by_policy.svg", "Share of episodes solved by policy"),
            )
        ],
        "Episodes by policy (every episode the build played, before the trajectories shard "
        "keeps its selection):",
        "",
        _md_table(
            ["policy", "episodes", "solved"],
            [[p, n, ok] for p, (n, ok) in sorted(facts.policies.items())],
        ),
        "",
        "## Reward",
        "",
        REWARD_DEFINITION,
        "",
        f"`{REWARD_MODULE}` implements it (`score(task, env, final_reply)`); it is the rule "
        "every episode of the build was scored by.",
        "",
        *(render_reward_audit(facts.reward_audit) if facts.reward_audit is not None else []),
        "## How it was made",
        "",
        _md_table(["", ""], [[k, f"`{v}`"] for k, v in _made(facts)]),
        "",
    ]
    return "\n".join(lines).encode()


def _made(facts: CardFacts) -> list[tuple[str, Any]]:
    made = dict(facts.provenance)
    made.setdefault("seed", str(facts.seed))
    if facts.inputs_sha256:
        made.setdefault("inputs sha256", facts.inputs_sha256)
    if "generator" not in made:
        from synthesis.export.charts import generator_version

        made["generator"] = generator_version()
    return list(made.items())


def _configs(files: Sequence[Mapping[str, Any]]) -> list[str]:
    """Hugging Face `configs` for the tabular files, so the hub's viewer finds each kind."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for f in files:
        if f["kind"] in ("trl_chat", "trajectories", "rl_tasks"):
            by_kind.setdefault(f["kind"], []).append(f)
    out = []
    for kind in sorted(by_kind):
        out += [f"- config_name: {kind}", "  data_files:"]
        for f in sorted(by_kind[kind], key=lambda f: f["split"]):
            out += [f"  - split: {f['split']}", f"    path: {f['path']}"]
    return out


def _counts_table(label: str, values: list[str], order: Any = None) -> str:
    counts = Counter(values)
    return _md_table([label, "tasks"], [[k, counts[k]] for k in sorted(counts, key=order)])


def _md_table(columns: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out)
