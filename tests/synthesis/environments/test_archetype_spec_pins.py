"""Every archetype's spec for every catalogue topic is pinned by its hash, so a refactor of the
archetypes (or their toolkit) that changes a spec, and with it the default build, shows up
here first, naming the topics."""

from __future__ import annotations

import sys
from pathlib import Path

from synthesis import codec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.hashing import sha256_text

PINS = Path(__file__).parents[2] / "data" / "archetype_specs.json"
RENEW = "`.venv/bin/python -m tests.synthesis.environments.test_archetype_spec_pins`"


def spec_hashes() -> dict[str, str]:
    """sha256 of each archetype topic's spec JSON, by topic id."""
    return {
        topic.topic_id: sha256_text(generate_spec(topic).model_dump_json())
        for topic in load_catalogue()
        if topic.archetype
    }


def test_every_archetype_topic_builds_the_pinned_spec():
    pinned = codec.read_json(PINS)["specs"]
    built = spec_hashes()
    changed = sorted(t for t in pinned.keys() & built.keys() if pinned[t] != built[t])
    assert not changed, f"specs changed for {changed}; if that is meant, renew with {RENEW}"
    assert built.keys() == pinned.keys(), (
        f"topics without a pin: {sorted(built.keys() - pinned.keys())}, pins without a "
        f"topic: {sorted(pinned.keys() - built.keys())}; renew with {RENEW}"
    )


if __name__ == "__main__":
    about = codec.read_json(PINS)["about"]
    codec.write_json(PINS, {"about": about, "specs": spec_hashes()})
    print(f"{PINS}: {len(spec_hashes())} specs pinned", file=sys.stderr)
