"""A build's settings as plain values, without Dagster.

`BuildSettings` (assets/_resources.py) is the Dagster resource every asset reads, and
declares the fields. Where their values come from and what they hash to are here, as functions
of the values (`values_from_env()`, or a resource's `model_dump()`), so the CLI can tell that
nothing changed since the last build (orchestration/last_build.py) before it imports Dagster,
which would be most of that answer's time.

Where each value comes from (`resolve`): a command-line flag (the CLI's build only), else its
ENVFOUNDRY_* variable, else the home's `build-settings.json` (what the last CLI build ran
with: `make ui` and the daemon's runs read it), else the default. Whatever the source, the
build's inputs are checked in one place, `input_problem`: the CLI refuses before any work,
and a run launched from the UI or the daemon fails at its first steps (`mined_topics`,
`topics`), each naming where the bad value came from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxes import limits
from sandboxes.errors import SandboxError
from synthesis import codec
from synthesis.config import LLMSettings, Profile, envfoundry_home, get_profile
from synthesis.config import publish_floor as profile_floor
from synthesis.environments.splits import parse_holdout
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export import datasets
from synthesis.hashing import content_hash, sha256_file
from synthesis.llm.topic_mining import CORPUS_PATH

# Written by `envfoundry build` into its home: the settings its runs used.
SETTINGS_FILE = "build-settings.json"
# Each setting's variable and flag, in the order of BuildSettings' fields.
VARIABLES = {
    "profile": "ENVFOUNDRY_PROFILE",
    "seed": "ENVFOUNDRY_SEED",
    "home": "ENVFOUNDRY_HOME",
    "sandbox_backend": "ENVFOUNDRY_SANDBOX",
    "catalogue": "ENVFOUNDRY_CATALOGUE",
    "corpus": "ENVFOUNDRY_CORPUS",
    "envs": "ENVFOUNDRY_ENVS",
    "holdout_archetypes": "ENVFOUNDRY_HOLDOUT_ARCHETYPES",
    "min_published": "ENVFOUNDRY_MIN_PUBLISHED",
}
FLAGS = {
    "profile": "--profile",
    "seed": "--seed",
    "home": "--home",
    "sandbox_backend": "--sandbox",
    "catalogue": "--catalogue",
    "corpus": "--corpus",
    "envs": "--envs",
    "holdout_archetypes": "--holdout-archetypes",
    "min_published": "--min-published",
}
DEFAULTS: dict[str, Any] = {
    "profile": "default",
    "seed": 0,
    "sandbox_backend": "auto",
    "catalogue": "",
    "corpus": "",
    "envs": [],
    "holdout_archetypes": [],
    "min_published": None,
}
DEFAULT = "default"


@dataclass(frozen=True)
class Resolved:
    """A build's settings (`values`, BuildSettings' fields) and where each came from
    (`sources`: a flag such as "--catalogue", a variable such as "ENVFOUNDRY_CATALOGUE", the
    path of the home's build-settings.json, or "default")."""

    values: dict[str, Any]
    sources: dict[str, str]

    def named(self, field: str) -> str:
        """The setting as its source says it, for a message: `--catalogue x.json`,
        `ENVFOUNDRY_CATALOGUE=x.json`, `catalogue x.json (from H/build-settings.json)`, or
        the default's meaning."""
        source, value = self.sources[field], self.values[field]
        if isinstance(value, list):
            value = json.dumps(value) if field == "envs" else ",".join(value)
        if source.startswith("--"):
            return f"{source} {value}"
        if source.startswith("ENVFOUNDRY_"):
            return f"{source}={value}"
        if source != DEFAULT:
            return f"{field} {value or '(default)'} (from {source})"
        if field == "catalogue":
            return f"the shipped catalogue {CATALOGUE_PATH}"
        if field == "corpus":
            return f"the shipped corpus {CORPUS_PATH}"
        return f"{field} {value} (the default)"


def resolve(flags: Mapping[str, Any] | None = None, *, settings_file: bool = True) -> Resolved:
    """Every field of `BuildSettings` with its source: `flags` first (a flag given on the
    command line; None or absent: not given), then ENVFOUNDRY_* variables, then the settings
    of the home's last CLI build (`settings_file`; so `make ui` on a home launches runs like
    the build's), then the defaults. Raises ValueError, naming the source, for a value that
    is not of its kind (a seed that is not a number, ENVFOUNDRY_ENVS that is not a list)."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    home = Path(flags["home"]).resolve() if "home" in flags else envfoundry_home()
    last = _last_build_settings(home) if settings_file else {}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for field, variable in VARIABLES.items():
        if field == "home":
            values[field] = str(home)
            sources[field] = FLAGS[field] if "home" in flags else variable
            continue
        if field in flags:
            value, source = flags[field], FLAGS[field]
        elif variable in os.environ:
            value, source = _from_variable(field, variable), variable
        elif field in last:
            value, source = last[field], str(home / SETTINGS_FILE)
        else:
            value, source = DEFAULTS[field], DEFAULT
        values[field], sources[field] = _typed(field, value, source), source
    return Resolved(values, sources)


def _from_variable(field: str, variable: str) -> Any:
    if field == "envs":
        return envs_from_env()
    if field == "holdout_archetypes":
        return holdout_from_env()
    raw = os.environ[variable]
    if field == "min_published" and not raw.strip():
        return None  # set empty: the profile's floor
    return raw


def _typed(field: str, value: Any, source: str) -> Any:
    """`value` as the field's type, or a ValueError naming where it came from."""
    if field == "seed" or (field == "min_published" and value is not None):
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{source}: {value!r} is not a whole number") from None
        if field == "min_published" and number < 0:
            raise ValueError(f"{source}: {number} is negative (0 publishes even nothing)")
        return number
    return value


def values_from_env() -> dict[str, Any]:
    """Every field of `BuildSettings`: ENVFOUNDRY_* variables first, then the settings of the
    home's last CLI build (so `make ui` on a home launches runs like the build's), then the
    defaults."""
    return resolve().values


def input_problem(resolved: Resolved, *, sandbox: bool = True) -> str | None:
    """Why a build of these settings cannot start, in one line naming the setting's source
    (None: it can). The one check of a build's inputs, wherever they came from: the
    catalogue (readable, well formed, not empty unless the floor is 0, its `source` entries
    found), the `envs` sources, the corpus, the held-out archetypes, and a real sandbox for
    code we did not compile (`sandbox` False: not that one, for a run that is already
    where its code runs). Nothing is built before this."""
    from synthesis.environments.archetypes import known_archetypes
    from synthesis.environments.foreign import SourceError, resolve_sources
    from synthesis.environments.runtime import sandbox_refusal
    from synthesis.environments.splits import FOREIGN_ARCHETYPE
    from synthesis.environments.topics import CatalogueError, load_catalogue

    values = resolved.values
    try:
        get_profile(values["profile"])
    except ValueError as exc:
        return f"{resolved.named('profile')}: {exc}"
    envs, catalogue = list(values["envs"]), values["catalogue"]
    known = known_archetypes()
    unknown = sorted(set(values["holdout_archetypes"]) - known - {FOREIGN_ARCHETYPE})
    if unknown:
        return (
            f"{resolved.named('holdout_archetypes')}: unknown archetype(s) "
            f"{', '.join(unknown)}; known: {', '.join(sorted(known | {FOREIGN_ARCHETYPE}))}"
        )
    problem = corpus_problem(resolved)
    if problem is not None:
        return problem
    try:
        limits.message_mb()
    except SandboxError as exc:
        return str(exc)
    foreign = list(envs)
    path = catalogue_path(catalogue)
    if path is None and not envs:
        return f"nothing to build: {resolved.named('catalogue')} needs at least one --envs source"
    if path is not None:
        try:
            topics = load_catalogue(path, known=known)
        except CatalogueError as exc:
            return f"{resolved.named('catalogue')}: {_without_path(str(exc), path)}"
        if not topics and not envs and publish_floor(values, 0)[0] > 0:
            return (
                f"{resolved.named('catalogue')}: the catalogue is empty (it has no topics), and "
                "publishing would replace the current dataset with an empty one; pass "
                "--allow-empty to build nothing on purpose"
            )
        foreign += [t.source for t in topics if t.source]
        for topic in topics:
            if topic.source:
                try:
                    resolve_sources(topic.source, base=path.parent)
                except SourceError as exc:
                    return f"{resolved.named('catalogue')}: topic {topic.topic_id!r}: {exc}"
    for spec in envs:
        try:
            resolve_sources(spec)
        except SourceError as exc:
            source = resolved.sources["envs"]
            where = source if source.startswith(("--", "ENVFOUNDRY_")) else resolved.named("envs")
            return f"{where}: {exc}"
    if foreign and sandbox:
        refusal = sandbox_refusal(values["sandbox_backend"])
        if refusal is not None:
            return refusal
    return None


def run_input_problem(values: Mapping[str, Any]) -> str | None:
    """`input_problem` for a run's settings (`values`, its BuildSettings' fields), each named
    by where this process reads it from: the first step of a run launched from the UI or the
    daemon (`topics`) refuses what the CLI would have refused before starting."""
    try:
        sources = resolve().sources
    except ValueError as exc:
        return str(exc)
    return input_problem(Resolved(dict(values), sources), sandbox=False)


def corpus_problem(resolved: Resolved) -> str | None:
    """Why the corpus cannot be read (None: it can, or it is the shipped one, or none)."""
    given = resolved.values["corpus"]
    corpus = corpus_path(given)
    if corpus is not None and given and not corpus.is_file():
        return f"{resolved.named('corpus')}: no such file (a JSONL of user requests, or 'none')"
    return None


def _without_path(message: str, path: Path) -> str:
    """A catalogue error without its own "catalogue PATH: " head (the source names it)."""
    return message.removeprefix(f"catalogue {path}: ")


def catalogue_path(catalogue: str) -> Path | None:
    """Empty: the shipped data/topics.json; "none": no catalogue."""
    if catalogue.lower() == "none":
        return None
    return Path(catalogue) if catalogue else CATALOGUE_PATH


def corpus_path(corpus: str) -> Path | None:
    """Empty: the shipped data/task_corpus.jsonl; "none": no corpus."""
    if corpus.lower() == "none":
        return None
    return Path(corpus) if corpus else CORPUS_PATH


def profile(name: str) -> Profile:
    return get_profile(name)


def publish_floor(values: Mapping[str, Any], environments: int) -> tuple[int, str]:
    """(the fewest tasks a build of `values` over `environments` environments may publish,
    what set that number): the build's own `min_published` when set, else its profile's."""
    if values["min_published"] is not None:
        return values["min_published"], (
            f"the build's floor (--min-published, --allow-empty or {VARIABLES['min_published']})"
        )
    chosen = get_profile(values["profile"])
    floor = profile_floor(chosen, environments)
    share = (
        f", a {chosen.min_published_share:g} share of {environments} environment(s) x "
        f"{chosen.scenarios_per_env} candidates"
        if floor > chosen.min_published
        else ""
    )
    return floor, f"profile {chosen.name}'s floor{share}"


def warehouse_path(home: Path) -> Path:
    """The published (current) dataset's warehouse, as readers see it at the home's root."""
    from synthesis.export import warehouse  # duckdb and pyarrow: not before the CLI needs them

    return warehouse.warehouse_path(home)


def staging_dir(home: Path, run_id: str) -> Path:
    """The dataset a publish run builds beside the published one (synthesis.export.datasets)."""
    return datasets.staging_dir(home, run_id)


def inputs_sha256(values: Mapping[str, Any]) -> str:
    """What a build was asked to build: profile, catalogue content and sources."""
    path = catalogue_path(values["catalogue"])
    catalogue = sha256_file(path) if path is not None and path.is_file() else "none"
    asked = [values["profile"], catalogue, sorted(values["envs"])]
    # Held-out archetypes change every split; a build without them hashes as before.
    if values["holdout_archetypes"]:
        asked.append({"holdout_archetypes": sorted(values["holdout_archetypes"])})
    # The corpus is read only by the `topic` stage, so only an online build is made from it;
    # an offline build hashes as before.
    corpus = corpus_path(values["corpus"])
    if LLMSettings.from_env().enabled and corpus is not None:
        asked.append({"corpus": sha256_file(corpus) if corpus.is_file() else "missing"})
    return content_hash(asked)


def run_fingerprint(values: Mapping[str, Any]) -> str:
    """What every environment's artifacts depend on besides the environment's own definition:
    the profile, the seed, held-out archetypes, the sandbox (foreign code is refused without a
    real one), its message limit when not the default, and the model when one is configured.
    A change of any of them makes every stage of every environment stale
    (assets._util.versioned)."""
    llm = LLMSettings.from_env()
    depends = {
        "profile": values["profile"],
        "seed": values["seed"],
        "holdout_archetypes": sorted(values["holdout_archetypes"]),
        "sandbox": values["sandbox_backend"],
        "model": llm.model if llm.enabled else None,
    }
    # A larger message limit confirms tools whose results were refused; the default hashes
    # as it did before the limit was a setting.
    if limits.message_mb() != limits.DEFAULT_MESSAGE_MB:
        depends["message_mb"] = limits.message_mb()
    return content_hash(depends)[:32]


def _last_build_settings(home: Path) -> dict:
    path = home / SETTINGS_FILE
    if not path.is_file():
        return {}
    try:
        value = codec.read_json(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a settings file of envfoundry build: {exc}") from exc
    return value if isinstance(value, dict) else {}


def envs_from_env() -> list[str]:
    """`ENVFOUNDRY_ENVS`: a JSON list of environment sources (what `--envs` sets)."""
    raw = os.environ.get("ENVFOUNDRY_ENVS", "")
    if not raw:
        return []
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("ENVFOUNDRY_ENVS must be a JSON list of strings")
    return value


def holdout_from_env() -> list[str]:
    """`ENVFOUNDRY_HOLDOUT_ARCHETYPES`: archetype names, comma-separated (what
    `--holdout-archetypes` sets)."""
    return parse_holdout(os.environ.get("ENVFOUNDRY_HOLDOUT_ARCHETYPES", ""))
