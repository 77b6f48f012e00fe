"""The catalogue's breadth before any build: every topic compiled, its program shape and tool
graph counted.

    python benchmarks/catalogue_breadth.py [--catalogue data/topics.json]

Compiles each topic's spec in-process (our own compiler's output: no generated code runs) and
prints, overall and per archetype, how many environments are accepted, the distinct program
shapes (AST with identifiers and constants abstracted, `synthesis.environments.shape`) and
tool graphs up to isomorphism, and the range of tool counts. A build's own figures, read from
its warehouse, are `benchmarks/dataset_figures.py`.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthesis.environments.archetypes import known_archetypes  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.model import model_of  # noqa: E402
from synthesis.environments.shape import (  # noqa: E402
    environment_tool_graph_shape,
    program_shape,
)
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.topics import CATALOGUE_PATH, load_catalogue  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalogue", type=Path, default=CATALOGUE_PATH)
    args = parser.parse_args(argv)
    topics = load_catalogue(args.catalogue, known=known_archetypes())
    shapes: dict[str, set[str]] = collections.defaultdict(set)
    graphs: dict[str, set[str]] = collections.defaultdict(set)
    tools: dict[str, list[int]] = collections.defaultdict(list)
    refused: list[tuple[str, str]] = []
    for topic in topics:
        if not topic.archetype:
            continue
        try:
            env = build_environment(generate_spec(topic))
        except Exception as exc:  # noqa: BLE001 - a refused topic is a figure, not a crash
            refused.append((topic.topic_id, str(exc)))
            continue
        if env.status != "accepted":
            refused.append((topic.topic_id, env.reason or "quarantined"))
            continue
        shapes[topic.archetype].add(program_shape(env.code, env.class_name))
        graphs[topic.archetype].add(environment_tool_graph_shape(model_of(env)))
        tools[topic.archetype].append(len(env.tools))
    every_shape = set().union(*shapes.values()) if shapes else set()
    every_graph = set().union(*graphs.values()) if graphs else set()
    accepted = sum(len(v) for v in tools.values())
    counts = [n for v in tools.values() for n in v]
    print(f"topics {len(topics)}  accepted {accepted}  archetypes {len(tools)}")
    print(f"distinct program shapes {len(every_shape)}   distinct tool graphs {len(every_graph)}")
    if counts:
        print(f"tools per environment   {min(counts)}–{max(counts)}")
    print(f"\n{'archetype':<18}{'envs':>6}{'shapes':>8}{'graphs':>8}{'tools':>10}")
    for archetype in sorted(tools):
        n = tools[archetype]
        span = f"{min(n)}–{max(n)}"
        print(
            f"{archetype:<18}{len(n):>6}{len(shapes[archetype]):>8}"
            f"{len(graphs[archetype]):>8}{span:>10}"
        )
    for topic_id, reason in refused:
        print(f"refused {topic_id}: {reason}")
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
