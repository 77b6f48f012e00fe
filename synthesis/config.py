"""The project's one config system: build profiles, paths and the LLM endpoint, from env vars."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
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
    min_published: int = Field(
        default=1,
        ge=0,
        description="the publish floor's least number of tasks: a build that would publish "
        "fewer keeps the current dataset and fails, naming the stage that lost them "
        "(`--allow-empty`, or ENVFOUNDRY_MIN_PUBLISHED=0, publishes whatever it made)",
    )
    min_published_share: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="the publish floor as a share of the candidate tasks the build asked for "
        "(its environments times `scenarios_per_env`); the floor is the larger of this and "
        "`min_published`",
    )
    difficulty_attempts: int = Field(
        default=3,
        ge=0,
        description="seeded attempts of the guesser (synthesis.rollouts.guesser) per published "
        "task; their solve rate is the empirical half of the task's tier (0: structure only)",
    )
    # The LLM stages' share of a build (docs/llm-stages.md); used only when an endpoint is set.
    llm_mined_topics: int = Field(
        default=2, ge=0, description="topics the `topic` stage mines from the task corpus"
    )
    llm_authored_specs: int = Field(
        default=2, ge=0, description="topics that also get an EnvSpec written by `env_spec`"
    )
    llm_written_envs: int = Field(
        default=2, ge=0, description="topics that also get a class written by `env_code`"
    )
    llm_initial_states: int = Field(
        default=1, ge=0, description="seed states per environment written by `initial_state`"
    )
    llm_task_plans: int = Field(
        default=2, ge=0, description="goals per environment proposed by `task_plan`"
    )
    llm_agent_attempts: int = Field(
        default=3,
        ge=1,
        description="attempts of the LLM agent per published task (k of the "
        "difficulty calibration)",
    )


PROFILES: dict[str, Profile] = {
    "tiny": Profile(
        name="tiny",
        max_topics=4,
        initial_states_per_env=1,
        scenarios_per_env=4,
        records_per_entity=4,
        difficulty_attempts=2,
        llm_mined_topics=1,
        llm_authored_specs=1,
        llm_written_envs=1,
        llm_task_plans=1,
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
        # One topic of each archetype and a second of the first (approvals).
        max_topics=13,
        initial_states_per_env=2,
        scenarios_per_env=12,
        records_per_entity=8,
        # A tenth of the candidates asked for (13 environments: 16 of 156). An offline build
        # publishes most of them; with an endpoint the difficulty filter may drop many (every
        # task the agent solves k of k times), never nine in ten of a healthy build.
        min_published_share=0.1,
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
        min_published_share=0.1,
        llm_mined_topics=10,
        llm_authored_specs=10,
        llm_written_envs=10,
        llm_task_plans=4,
    ),
}


def publish_floor(profile: Profile, environments: int) -> int:
    """The fewest tasks a build of `profile` over `environments` environments may publish
    (docs/builds.md, "The publish floor"): `min_published`, or the profile's share of the
    candidates asked for when that is more. A floor set for the build (ENVFOUNDRY_MIN_PUBLISHED,
    `--min-published`, `--allow-empty`) replaces it (assets/_settings.py `publish_floor`)."""
    asked = environments * profile.scenarios_per_env
    return max(profile.min_published, math.ceil(profile.min_published_share * asked))


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}") from None


def envfoundry_home() -> Path:
    """`$ENVFOUNDRY_HOME`, defaulting to ./var (docs/architecture.md, Warehouse)."""
    return Path(os.environ.get("ENVFOUNDRY_HOME", "var")).resolve()


# Where the LLM stages keep their files under a home: accepted answers (a rebuild reuses
# them), each build's budget account (shared by its processes), and the ledger spool, one
# append-only file of LLMCall rows per asset run (synthesis/llm/spool.py).
LLM_CACHE_DIR = "llm_cache"
LLM_BUDGETS_DIR = "llm_budgets"
LEDGER_SPOOL_DIR = "ledger"


# Where a publish keeps each environment's task features for the next one's screening
# (synthesis/tasks/task_features.py).
TASK_FEATURES_DIR = "task_features"
PROGRAM_SHAPES_FILE = "program_shapes.json"


def task_features_dir(home: Path) -> Path:
    return home / TASK_FEATURES_DIR


def llm_attempts_dir(home: Path) -> Path:
    """Where screening keeps each environment's LLM agent attempts (beside its features)."""
    return task_features_dir(home) / "llm_attempts"


def program_shapes_path(home: Path) -> Path:
    return home / PROGRAM_SHAPES_FILE


def llm_cache_dir(home: Path) -> Path:
    return home / LLM_CACHE_DIR


def llm_budget_path(home: Path, build_id: str) -> Path:
    return home / LLM_BUDGETS_DIR / f"{build_id}.json"


def ledger_spool_dir(home: Path) -> Path:
    return home / LEDGER_SPOOL_DIR


# Settings a stage may override with `<ENV VAR>__<STAGE>` (e.g. ENVFOUNDRY_BUDGET_USD__AGENT):
# the field each env var sets, so one table serves the build-wide value and every override.
STAGE_SETTINGS: dict[str, str] = {
    "ENVFOUNDRY_LLM_MAX_TOKENS": "max_tokens",
    "ENVFOUNDRY_PRICE_IN_PER_MTOK": "price_in_per_mtok",
    "ENVFOUNDRY_PRICE_OUT_PER_MTOK": "price_out_per_mtok",
    "ENVFOUNDRY_BUDGET_USD": "budget_usd",
    "ENVFOUNDRY_BUDGET_TOKENS": "budget_tokens",
}
# Stages whose answers are whole artifacts (a spec, a class, a state) need room a one-line
# answer does not: their `max_tokens` unless a `__<STAGE>` override says otherwise (a
# build-wide ENVFOUNDRY_LLM_MAX_TOKENS sets the other stages').
STAGE_MAX_TOKENS: dict[str, int] = {"env_spec": 8192, "env_code": 8192, "initial_state": 4096}
# The rest are build-wide only.
BUILD_SETTINGS: dict[str, str] = {
    "ENVFOUNDRY_MODEL": "model",
    "ENVFOUNDRY_LLM_TIMEOUT_S": "timeout_s",
    "ENVFOUNDRY_LLM_RETRIES": "retries",
    "ENVFOUNDRY_LLM_CONCURRENCY": "concurrency",
    "ENVFOUNDRY_LLM_DEADLINE_S": "deadline_s",
    "ENVFOUNDRY_LLM_MAX_ANSWER_CHARS": "max_answer_chars",
    "ENVFOUNDRY_LLM_BREAKER_FAILURES": "breaker_failures",
    "ENVFOUNDRY_LLM_REPAIRS": "repairs",
}


class StageLimits(BaseModel):
    """What one stage may send and spend: its answer length, its prices and its own caps."""

    max_tokens: int
    price_in_per_mtok: float
    price_out_per_mtok: float
    budget_usd: float | None
    budget_tokens: int | None

    def cost_usd(self, tokens_in: int, tokens_out: int) -> float:
        return round(
            tokens_in * self.price_in_per_mtok / 1e6 + tokens_out * self.price_out_per_mtok / 1e6,
            8,
        )


class LLMSettings(BaseModel):
    """An OpenAI-compatible endpoint; absent means the whole pipeline runs offline.

    Defaults suit a network-bound remote endpoint: a hanging server costs at most
    `breaker_failures` timeouts per stage before the stage stops, never the whole deadline.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    # USD per million tokens, for the token-cost marts and budgets; your own servers cost 0.
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    timeout_s: float = Field(default=60.0, gt=0, description="one request's timeout")
    retries: int = Field(default=3, ge=0, description="retries on 429, 5xx, timeouts, resets")
    backoff_s: float = Field(default=1.0, ge=0, description="first retry's mean delay")
    backoff_max_s: float = Field(default=30.0, ge=0, description="longest delay between tries")
    retry_seed: int = Field(default=0, description="seeds the retry jitter (replayable)")
    concurrency: int = Field(
        default=64,
        ge=1,
        description="requests in flight at once. A request waits on the network and the "
        "server, not on our CPU, so 64 (the agent episodes issue 9 runs at once) costs only "
        "sockets; an endpoint that cannot take them answers 429, which is retried with "
        "backoff. Budgets still hold: each request reserves its worst case before it is sent",
    )
    deadline_s: float = Field(
        default=1800.0, gt=0, description="wall clock the LLM stages of one build may use"
    )
    max_tokens: int = Field(default=1024, ge=1, description="answer cap sent on every request")
    max_answer_chars: int = Field(
        default=64_000,
        ge=1,
        description="longer answers are rejected, whatever the server says (a written class "
        "or spec of 8,192 tokens is about 32,000 characters)",
    )
    breaker_failures: int = Field(
        default=5, ge=1, description="consecutive failed requests that stop a stage"
    )
    repairs: int = Field(default=2, ge=0, description="repair prompts after a schema violation")
    budget_usd: float | None = Field(default=None, ge=0, description="build-wide cost cap")
    budget_tokens: int | None = Field(default=None, ge=0, description="build-wide token cap")
    stage_overrides: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="stage → {field: value} for the fields of STAGE_SETTINGS",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)

    def for_stage(self, stage: str) -> StageLimits:
        """The stage's limits: its overrides over the build-wide values. The budget caps here
        are the stage's own; the build-wide caps apply on top (see synthesis.llm.budget)."""
        own = self.stage_overrides.get(stage.lower(), {})
        budget_tokens = own.get("budget_tokens")
        return StageLimits(
            max_tokens=int(
                own.get("max_tokens", STAGE_MAX_TOKENS.get(stage.lower(), self.max_tokens))
            ),
            price_in_per_mtok=own.get("price_in_per_mtok", self.price_in_per_mtok),
            price_out_per_mtok=own.get("price_out_per_mtok", self.price_out_per_mtok),
            budget_usd=own.get("budget_usd"),
            budget_tokens=None if budget_tokens is None else int(budget_tokens),
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings:
        env = os.environ if environ is None else environ
        values: dict[str, object] = {
            "base_url": env.get("OPENAI_BASE_URL") or None,
            "api_key": env.get("OPENAI_API_KEY") or None,
        }
        for var, name in {**BUILD_SETTINGS, **STAGE_SETTINGS}.items():
            if env.get(var):
                values[name] = env[var]  # pydantic casts and range-checks the text
        overrides: dict[str, dict[str, float]] = {}
        for key, raw in env.items():
            var, sep, stage = key.partition("__")
            if sep and stage and var in STAGE_SETTINGS and raw:
                overrides.setdefault(stage.lower(), {})[STAGE_SETTINGS[var]] = float(raw)
        values["stage_overrides"] = overrides
        return cls.model_validate(values)
