"""The project's one config system: build profiles, paths and the LLM endpoint, from env vars."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"


class Profile(BaseModel):
    """How much to build. Every count is an upper bound; the seed decides which items."""

    name: str
    max_topics: int = Field(description="topics taken from the catalogue (implemented archetypes)")
    initial_states_per_env: int = Field(
        description="distinct seeded initial states per environment"
    )
    scenarios_per_env: int = Field(description="scenario candidates generated per environment")
    records_per_entity: int = Field(description="records per entity collection in an initial state")
    max_chain_length: int = Field(
        default=14,
        description="the longest gold chain a task may have (lookups, changes and reads)",
    )
    min_mutation_kill_rate: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="the bar for an environment's mean mutant kill rate over its published "
        "scenarios (the `mutation_kill_rate` asset check on `checks`)",
    )
    difficulty_attempts: int = Field(
        default=3,
        ge=0,
        description="seeded attempts of the guesser (synthesis.rollouts.guesser) per published "
        "task; their solve rate is the empirical half of the task's tier (0: structure only)",
    )


PROFILES: dict[str, Profile] = {
    "tiny": Profile(
        name="tiny",
        max_topics=4,
        initial_states_per_env=1,
        scenarios_per_env=4,
        records_per_entity=4,
        difficulty_attempts=2,
    ),
    "small": Profile(
        name="small",
        max_topics=6,
        initial_states_per_env=2,
        scenarios_per_env=6,
        records_per_entity=6,
    ),
    "default": Profile(
        name="default",
        max_topics=12,
        initial_states_per_env=2,
        scenarios_per_env=12,
        records_per_entity=8,
    ),
    # Every topic of the catalogue (170 today), 150 candidates each: ~25K candidates, so at the
    # self-test's 80%+ yield more than 20K tasks publish. Four states of 12 records per entity
    # give the planner room for that many distinct tasks (it finds ~148 per environment with
    # no near-duplicates in every archetype).
    "full": Profile(
        name="full",
        max_topics=220,
        initial_states_per_env=4,
        scenarios_per_env=150,
        records_per_entity=12,
        max_chain_length=16,
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}") from None


def envfoundry_home() -> Path:
    """`$ENVFOUNDRY_HOME`, defaulting to ./var (docs/architecture.md, Warehouse)."""
    return Path(os.environ.get("ENVFOUNDRY_HOME", "var")).resolve()


class LLMSettings(BaseModel):
    """An OpenAI-compatible endpoint; absent means the whole pipeline runs offline."""

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    # USD per million tokens, for the token-cost marts; servers you run yourself cost 0.
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    timeout_s: float = 120.0
    max_retries: int = 2

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)

    @classmethod
    def from_env(cls) -> LLMSettings:
        return cls(
            base_url=os.environ.get("OPENAI_BASE_URL") or None,
            api_key=os.environ.get("OPENAI_API_KEY") or None,
            model=os.environ.get("ENVFOUNDRY_MODEL", "gpt-4o-mini"),
            price_in_per_mtok=float(os.environ.get("ENVFOUNDRY_PRICE_IN_PER_MTOK", "0")),
            price_out_per_mtok=float(os.environ.get("ENVFOUNDRY_PRICE_OUT_PER_MTOK", "0")),
        )
