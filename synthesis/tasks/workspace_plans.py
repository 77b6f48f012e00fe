"""Task planning for workspace environments: find the file, then do something to it.

A task names each file it acts on by what is in it ("the invoice whose reference is
INV-0412"), by its name, or by two header values that only together single it out, never by
its path, so the gold chain starts with the lookups (grep, find) an agent has to make.
Conditional goals read the file first (cat) and act on what it says. Outcomes are predicted
by running the environment's own verbs over an in-memory copy of the tree (`MemoryTree`,
synthesis.environments.workspace_verbs); the sandboxed gold run is the judge, as for every
planner. A scenario is a pure function of (environment, initial state, seed, index).

About as often as a tool environment's request is infeasible, one goal of a workspace task is
a request the verbs refuse in the tree the user sees, asked in the very words a feasible one
is: a move or copy into a folder that already holds a file of that name, a rename to a name
the file's folder already holds (the system prompt's "never overwrites" rule). The gold chain
finds the file, lists the folder whose file is in the way (the fact the refusal states), and
ends that goal with the attempt itself (role `refused`), as the tool environments' infeasible
family does (synthesis.tasks.families.infeasible).
"""

from __future__ import annotations

import copy
import posixpath
import random
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.workspace_code import workspace_constants
from synthesis.environments.workspace_tree import WORKSPACE_KEY, field_value
from synthesis.environments.workspace_verbs import MemoryTree
from synthesis.hashing import derive_seed
from synthesis.models import Environment, InitialState, Scenario, ToolCall
from synthesis.tasks.assembly import (
    keep_distinct,
    mentions_an_id,
    scenario_of,
    stored_reply,
)
from synthesis.tasks.checks import AskedValue
from synthesis.tasks.difficulty import difficulty_record
from synthesis.tasks.envfoundry_reward import error_tells
from synthesis.tasks.families.refusals import rule_lines_for
from synthesis.tasks.phrasing import task_text
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.text.voices import STAFF

GENERATOR = "workspace_walk/v1"
ATTEMPTS_PER_SCENARIO = 8
GOAL_COUNT_WEIGHTS = (2, 3, 4, 4, 3, 2)
NEW_FOLDERS = ("review", "to-sign", "shared", "follow-up", "final", "on-hold", "for-audit")
NEW_FILES = ("notes.txt", "TODO.txt", "checklist.txt", "questions.txt")
RENAME_SUFFIXES = ("final", "v2", "signed", "copy", "old", "checked")
# How often a feasible rename takes the name another document has in another folder (which
# its own folder does not hold): a refused rename takes a name its folder holds, so without
# these a rename to a plain document name would be a refused one.
RENAME_AS_OTHER = 0.4
# The sentences of the goals a refused request can be: one list for both kinds, so a request
# reads the same whether the tree allows it or not.
MV_TEMPLATES = ("move {t} into the {d} folder", "file {t} under {d}", "put {t} in the {d} folder")
CP_TEMPLATES = ("put a copy of {t} in the {d} folder", "copy {t} into {d}, keeping the original")
RENAME_TEMPLATES = ("rename {t} to {n}", "give {t} the new name {n}")
# How often a candidate (in a tree where some request is refused) has one refused goal: tuned
# so that about as many workspace candidates are infeasible as tool environments' (their
# family weight, 0.16, synthesis.tasks.scenarios); some draws find no refusable target.
INFEASIBLE_RATE = 0.17
# How often a feasible candidate (in a tree that refuses some request) asks for one of the
# verbs a refused request would name, as the tool environments' chains do
# (synthesis.tasks.families.chains.GUARDED_FIRST): a refused rename is the likeliest, and
# without these a rename in a request gave it away.
GUARDED_FIRST = 0.6
# The goals that can be refused by "A move, copy or rename never overwrites an existing file
# or folder", drawn with their feasible weights.
REFUSABLE = ("mv", "cp", "rename")
# Goals and how often they are drawn when the environment has their verbs.
GOALS: dict[str, tuple[tuple[str, ...], float]] = {
    "mv": (("mv",), 2.0),
    "mkdir_mv": (("mkdir", "mv"), 1.0),
    "cp": (("cp",), 1.0),
    "rename": (("rename",), 1.5),
    "rm": (("rm",), 0.7),
    "trash": (("trash",), 1.0),
    "restore": (("restore",), 0.8),
    "archive": (("archive",), 1.5),
    "tag": (("tag",), 1.5),
    "untag": (("untag",), 1.0),
    "set_status": (("set_status",), 2.0),
    "conditional": (("set_status", "cat"), 1.5),
    "append": (("append",), 1.0),
    "replace": (("replace",), 1.5),
    "touch": (("touch",), 0.5),
    "rmdir": (("rmdir",), 0.5),
}


def plan_workspace_scenarios(
    env: Environment,
    state: InitialState,
    *,
    seed: int,
    count: int,
    max_chain_length: int = 4,
) -> list[Scenario]:
    """Up to `count` distinct candidate scenarios in one initial workspace."""
    out: list[Scenario] = []
    seen: set[str] = set()
    for index in range(count * ATTEMPTS_PER_SCENARIO):
        if len(out) >= count:
            break
        scenario = plan_workspace_scenario(
            env, state, seed=seed, index=index, max_chain_length=max_chain_length
        )
        if scenario is not None:
            keep_distinct(scenario, seen, out)
    return out


def plan_workspace_scenario(
    env: Environment, state: InitialState, *, seed: int, index: int, max_chain_length: int = 4
) -> Scenario | None:
    """Candidate `index` alone (None when this draw found no feasible task)."""
    rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed, index))
    planner = _Planner.start(env, state, rng)
    # Longer allowances get more goals (a goal is one to four steps): a tidy-up of several
    # files, each found first, makes the long chains long-horizon training needs.
    sizes = range(1, max(1, min(len(GOAL_COUNT_WEIGHTS), max_chain_length // 2)) + 1)
    n_goals = rng.choices(list(sizes), weights=GOAL_COUNT_WEIGHTS[: len(sizes)])[0]
    # Whether (and where among the goals) one is refused is drawn apart from the goals' own
    # draws: a feasible candidate is planned as it would be without infeasible ones.
    odds = random.Random(derive_seed("infeasible", env.env_id, state.state_id, seed, index))
    refused_at = odds.randrange(n_goals) if odds.random() < INFEASIBLE_RATE else None
    refusable = planner.refusable_verbs(odds)
    if refused_at is not None and not refusable:
        refused_at = None  # nothing in this tree is refused: the candidate is a feasible one
    # A feasible candidate asks for one of the verbs a refused request would name, in the
    # order it would try them, as often as GUARDED_FIRST (chains.py says why).
    guarded_at = (
        odds.randrange(n_goals)
        if refused_at is None and refusable and odds.random() < GUARDED_FIRST
        else None
    )
    for _ in range(n_goals * 3):
        if len(planner.goals) >= n_goals:
            break
        if refused_at is not None and planner.refusal is None and len(planner.goals) == refused_at:
            planner.try_refused(refusable, max_chain_length)
        elif guarded_at is not None and len(planner.goals) == guarded_at:
            guarded_at = None if planner.try_first_of(refusable, max_chain_length) else guarded_at
            if guarded_at is not None:
                guarded_at = None  # none of them fits here: the slot takes any goal
                planner.try_goal(max_chain_length)
        else:
            planner.try_goal(max_chain_length)
    if refused_at is not None and planner.refusal is None:
        return None  # the refused request found no place: no task rather than another kind
    if not planner.goals or (
        planner.refusal is None and planner.world.files == planner.initial.files
    ):
        return None
    plan = TaskPlan(
        env_id=env.env_id,
        state_id=state.state_id,
        seed=seed,
        index=index,
        title=env.spec.title if env.spec else env.env_id,
        goals=planner.goals,
        gold_chain=planner.steps,
        roles=planner.roles,
        facts=list(dict.fromkeys(planner.facts)),
        hidden_ids=sorted(set(planner.hidden)),
        goal_tools=[g.tool for g in planner.goals],
        generator=GENERATOR,
        extra={"workspace_goals": [g.verb for g in planner.goals]},
    )
    if planner.refusal is not None:
        plan = _refused_plan(env, plan, planner)
    return _assemble(env, state, plan, planner.sentences, rng)


@dataclass
class _Planner:
    ws: dict[str, Any]
    verbs: set[str]
    initial: MemoryTree
    world: MemoryTree
    rng: random.Random
    rules: list[str]
    """The system prompt's rule lines (what a refusal's reason and a pasted prompt state)."""
    tool_texts: list[str]
    """The tools' descriptions (what a pasted tool list states)."""
    steps: list[ToolCall] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    goals: list[PlanGoal] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    listings: dict[str, list[tuple[str, str]] | None] = field(default_factory=dict)
    """Per tree ("initial", "world"): every file `tree` lists with its casefolded text, kept
    until the tree changes (the initial one never does; the world only in `_do` and
    `_rollback`). Locating a file greps many values; each grep would list the tree again."""
    refusal: dict[str, Any] | None = None
    """The refused goal's reasons and the other rules (`refusal_of`'s shape, families/
    refusals.py), once it is planned."""
    asked: AskedValue | None = None
    """The refusal's fact and the gold step whose result shows it."""
    rule: str = ""

    @classmethod
    def start(cls, env: Environment, state: InitialState, rng: random.Random) -> _Planner:
        spec = env.spec
        if spec is None or spec.workspace is None:
            raise ValueError(f"environment {env.env_id} is not a workspace environment")
        tree = state.start_state[WORKSPACE_KEY]
        constants = workspace_constants(spec)
        return cls(
            ws=spec.workspace,
            verbs={t.name for t in spec.tools},
            initial=MemoryTree(tree["files"], tree["dirs"], constants),
            world=MemoryTree(tree["files"], tree["dirs"], constants),
            rng=rng,
            rules=list(spec.rules),
            tool_texts=[t.description for t in spec.tools if t.description],
        )

    # -- the tree as the task sees it -------------------------------------------------

    @property
    def noun(self) -> str:
        return str(self.ws["document"])

    def special(self, path: str) -> bool:
        top = path.split("/")[0]
        return top in (self.world.ARCHIVE, self.world.TRASH) or path == self.world.LOG

    def documents(self) -> list[str]:
        """Files with the document header, not yet acted on, outside archive and trash."""
        key = self.ws["name_field"]
        return [
            p
            for p in sorted(self.world.files)
            if not self.special(p)
            and p not in self.used
            and "/" in p
            and self.world._header(self.world.files[p], key)[1] is not None
        ]

    def folders(self) -> list[str]:
        return [d for d in sorted(self.world.dirs) if not self.special(d)]

    def header(self, path: str, key: str) -> str | None:
        return self.world._header(self.world.files[path], key)[1]

    def by(self, key: str, value: str, alone: bool = False) -> str:
        """How the task names a document by one header value ("issued on 3 May 2025")."""
        template = self.ws.get("describe", {}).get(key)
        if template:
            return template.format(v=value)
        return f"whose {key.lower()} is {value}" if alone else f"with {key.lower()} {value}"

    def _by_both(self, a: str, va: str, b: str, vb: str) -> str:
        """A document named by two header values: 'the handout by Ann Lee on Sampling'.

        The topic's own phrases are prepositional and follow one another the way people
        say them; only the generic 'with <key> <value>' needs an 'and' between the two.
        """
        described = self.ws.get("describe", {})
        if a in described and b in described:
            first, second = (a, va), (b, vb)
            # A bare value ('the invoice INV-0042') stays next to the noun it names.
            if described[b] == "{v}" or (described[a] != "{v}" and self.rng.random() < 0.5):
                first, second = second, first
            one, two = self.by(*first), self.by(*second)
            lead = one.split(" ", 1)[0]
            if two.startswith(lead + " ") and described[first[0]] != "{v}":
                # "for STAT101 and week 4", not "for STAT101 for week 4".
                return f"the {self.noun} {one} and {two[len(lead) + 1 :]}"
            return f"the {self.noun} {one} {two}"
        return f"the {self.noun} {self.by(a, va)} and {self.by(b, vb)}"

    # -- lookups ------------------------------------------------------------------------

    def _grep_files(self, tree: MemoryTree, value: str) -> set[str]:
        """The files `tree.grep(value)` has hits in (read from the cached listing)."""
        which = "initial" if tree is self.initial else "world" if tree is self.world else ""
        usable = which and isinstance(value, str) and value.strip()
        listing = self._listing(which, tree) if usable else None
        if listing is None:
            hits = tree.grep(value)["data"]
            return {h.split(":", 1)[0] for h in hits}
        wanted = value.strip().casefold()
        if "\n" in wanted:
            return set()  # grep matches line by line: no line holds a line break
        # Casefolding maps each character on its own, so a match in the whole folded text
        # is a match in one folded line, as grep looks for it.
        return {path.split(":", 1)[0] for path, folded in listing if wanted in folded}

    def _listing(self, which: str, tree: MemoryTree) -> list[tuple[str, str]] | None:
        if which not in self.listings:
            listed = tree.tree(".")
            self.listings[which] = (
                [(path, tree._read(path).casefold()) for path in listed["data"]]
                if listed["success"]
                else None
            )
        return self.listings[which]

    def locate(self, path: str) -> tuple[list[ToolCall], str, list[str]] | None:
        """(lookup steps, the words naming `path`, facts) or None if nothing singles it out.

        A value must single the file out in the tree as it is now and as the agent first
        sees it (the task is read before anything is done).
        """
        keys = [k for k in self.ws["fields"] if self.header(path, k)]
        options: list[tuple[list[ToolCall], str, list[str]]] = []
        unique = []
        for key in keys:
            value = self.header(path, key) or ""
            now, before = self._grep_files(self.world, value), self._grep_files(self.initial, value)
            if now == {path} and before == {path}:
                unique.append(key)
                options.append(
                    (
                        [ToolCall(tool="grep", args={"pattern": value})],
                        f"the {self.noun} {self.by(key, value, alone=True)}",
                        [value],
                    )
                )
        name = posixpath.basename(path)
        found = self.world.find(name)["data"]
        if found == [path] and self.initial.find(name)["data"] == [path]:
            options.append(
                ([ToolCall(tool="find", args={"name": name})], f"the file {name}", [name])
            )
        others = [k for k in keys if k not in unique]
        for i, a in enumerate(others):
            for b in others[i + 1 :]:
                va, vb = self.header(path, a) or "", self.header(path, b) or ""
                both = self._grep_files(self.world, va) & self._grep_files(self.world, vb)
                first = self._grep_files(self.initial, va) & self._grep_files(self.initial, vb)
                if both == {path} and first == {path}:
                    options.append(
                        (
                            [
                                ToolCall(tool="grep", args={"pattern": va}),
                                ToolCall(tool="grep", args={"pattern": vb}),
                            ],
                            self._by_both(a, va, b, vb),
                            [va, vb],
                        )
                    )
        if not options:
            return None
        # Two-value names make the longer, more instructive chains: they keep a fair share.
        return self.rng.choice(options)

    # -- goals --------------------------------------------------------------------------

    def try_first_of(self, verbs: list[str], max_chain_length: int) -> bool:
        """Plan, as a feasible goal, the first of `verbs` that fits here."""
        for verb in verbs:
            if self._try_named(verb, max_chain_length):
                return True
        return False

    def try_goal(self, max_chain_length: int) -> bool:
        available = [
            (name, weight)
            for name, (needs, weight) in GOALS.items()
            if all(v in self.verbs for v in needs)
        ]
        name = self.rng.choices([n for n, _ in available], weights=[w for _, w in available])[0]
        return self._try_named(name, max_chain_length)

    def _try_named(self, name: str, max_chain_length: int) -> bool:
        """Plan goal `name` (a key of GOALS) here; False, and nothing planned, if it does
        not fit."""
        mark = self._mark()
        outcome = getattr(self, f"_goal_{name}")()
        if outcome is None:
            self._rollback(mark)
            return False
        sentence, goal = outcome
        if len(self.steps) > max_chain_length:
            self._rollback(mark)
            return False
        self.sentences.append(sentence)
        self.goals.append(goal)
        return True

    def _mark(self) -> tuple[Any, ...]:
        return (
            len(self.steps),
            dict(self.world.files),
            set(self.world.dirs),
            len(self.facts),
            len(self.hidden),
            set(self.used),
        )

    def _rollback(self, mark: tuple[Any, ...]) -> None:
        n, files, dirs, n_facts, n_hidden, used = mark
        del self.steps[n:]
        del self.roles[n:]
        del self.facts[n_facts:]
        del self.hidden[n_hidden:]
        self.world.files, self.world.dirs, self.used = files, dirs, used
        self.listings.pop("world", None)

    def _do(self, verb: str, args: dict[str, Any], role: str) -> bool:
        self.listings.pop("world", None)
        result = self.world.call(verb, args)
        if not result.get("success"):
            return False
        self.steps.append(ToolCall(tool=verb, args=args))
        self.roles.append(role)
        return True

    def _target(self, want=None) -> tuple[str, str] | None:
        """A fresh document (satisfying `want`), looked up: (its path, the words naming it)."""
        docs = [p for p in self.documents() if want is None or want(p)]
        self.rng.shuffle(docs)
        for path in docs[:6]:
            found = self.locate(path)
            if found is None:
                continue
            steps, words, facts = found
            if not all(self._do(c.tool, c.args, "lookup") for c in steps):
                return None
            self.used.add(path)
            self.hidden.append(path)
            self.facts += facts
            return path, words
        return None

    def _goal(self, verb: str, target: str, sentence: str, **values: str) -> tuple[str, PlanGoal]:
        self.facts += list(values.values())
        goal = PlanGoal(
            kind="action",
            tool=verb,
            verb=verb,
            target=target,
            values=sorted(values.items()),
            description=sentence,
        )
        return sentence, goal

    def _destination(self, path: str) -> str | None:
        name = posixpath.basename(path)
        options = [
            d
            for d in self.folders()
            if d != posixpath.dirname(path)
            and posixpath.join(d, name) not in self.world.files
            and posixpath.join(d, name) not in self.world.dirs
        ]
        return self.rng.choice(options) if options else None

    def _goal_mv(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        dest = self._destination(path)
        if dest is None or not self._do("mv", {"path": path, "folder": dest}, "mutation"):
            return None
        template = self.rng.choice(MV_TEMPLATES)
        return self._goal("mv", words, template.format(t=words, d=dest), folder=dest)

    def _goal_mkdir_mv(self):
        parents = [d for d in self.folders() if "/" not in d]
        if not parents:
            return None
        parent = self.rng.choice(parents)
        new = posixpath.join(parent, self.rng.choice(NEW_FOLDERS))
        if new in self.world.dirs:
            return None
        if not self._do("mkdir", {"path": new}, "mutation"):
            return None
        found = self._target(lambda p: posixpath.dirname(p) != new)
        if found is None:
            return None
        path, words = found
        if not self._do("mv", {"path": path, "folder": new}, "mutation"):
            return None
        sentence = f"create a new folder {new} and move {words} into it"
        return self._goal("mv", words, sentence, folder=new)

    def _goal_cp(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        dest = self._destination(path)
        if dest is None or not self._do("cp", {"path": path, "folder": dest}, "mutation"):
            return None
        template = self.rng.choice(CP_TEMPLATES)
        return self._goal("cp", words, template.format(t=words, d=dest), folder=dest)

    def _goal_rename(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        stem, ext = posixpath.splitext(posixpath.basename(path))
        new_name = f"{stem}-{self.rng.choice(RENAME_SUFFIXES)}{ext}"
        others = self._names_elsewhere(path)
        if others and self.rng.random() < RENAME_AS_OTHER:
            new_name = self.rng.choice(others)
        if not self._do("rename", {"path": path, "new_name": new_name}, "mutation"):
            return None
        sentence = self.rng.choice(RENAME_TEMPLATES).format(t=words, n=new_name)
        return self._goal("rename", words, sentence, name=new_name)

    def _names_elsewhere(self, path: str) -> list[str]:
        """Names of documents in other folders that `path`'s folder holds nothing under."""
        folder = posixpath.dirname(path)
        return sorted(
            {
                posixpath.basename(p)
                for p in self.documents()
                if posixpath.dirname(p) != folder
                and posixpath.join(folder, posixpath.basename(p)) not in self.world.files
                and posixpath.join(folder, posixpath.basename(p)) not in self.world.dirs
            }
        )

    def _goal_rm(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        if not self._do("rm", {"path": path}, "mutation"):
            return None
        sentence = self.rng.choice(("delete {t} for good", "permanently remove {t}"))
        return self._goal("rm", words, sentence.format(t=words))

    def _goal_trash(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        if not self._do("trash", {"path": path}, "mutation"):
            return None
        sentence = self.rng.choice(("move {t} to the trash", "throw {t} away (into the trash)"))
        return self._goal("trash", words, sentence.format(t=words))

    def _goal_restore(self):
        prefix = self.world.TRASH + "/"
        trashed = [
            p for p in sorted(self.world.files) if p.startswith(prefix) and p not in self.used
        ]
        self.rng.shuffle(trashed)
        for path in trashed:
            name = posixpath.basename(path)
            original = path[len(prefix) :]
            if self.world.find(name, self.world.TRASH)["data"] != [path]:
                continue
            if self.initial.find(name, self.world.TRASH)["data"] != [path]:
                continue
            if not self._do("find", {"name": name, "folder": self.world.TRASH}, "lookup"):
                return None
            if not self._do("restore", {"path": original}, "mutation"):
                return None
            self.used.add(path)
            self.hidden.append(original)
            words = f"the file {name}"
            sentence = self.rng.choice(
                ("restore {t} from the trash", "get {t} back out of the trash")
            ).format(t=words)
            return self._goal("restore", words, sentence, name=name)
        return None

    def _goal_archive(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        if not self._do("archive", {"path": path}, "mutation"):
            return None
        sentence = self.rng.choice(("archive {t}", "send {t} to the archive"))
        return self._goal("archive", words, sentence.format(t=words))

    def _goal_tag(self):
        tags = list(self.ws["tags"])

        def untagged(p: str) -> bool:
            return len(self._tags(p)) < len(tags)

        found = self._target(untagged)
        if found is None:
            return None
        path, words = found
        tag = self.rng.choice([t for t in tags if t not in self._tags(path)])
        if not self._do("tag", {"path": path, "tag": tag}, "mutation"):
            return None
        sentence = self.rng.choice(("tag {t} as {g}", "add the tag {g} to {t}"))
        return self._goal("tag", words, sentence.format(t=words, g=tag), tag=tag)

    def _tags(self, path: str) -> list[str]:
        return [t.strip() for t in (self.header(path, "Tags") or "").split(",") if t.strip()]

    def _goal_untag(self):
        found = self._target(lambda p: bool(self._tags(p)))
        if found is None:
            return None
        path, words = found
        tag = self.rng.choice(self._tags(path))
        if not self._do("untag", {"path": path, "tag": tag}, "mutation"):
            return None
        sentence = self.rng.choice(("remove the tag {g} from {t}", "take the {g} tag off {t}"))
        return self._goal("untag", words, sentence.format(t=words, g=tag), tag=tag)

    def _goal_set_status(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        current = self.header(path, "Status")
        status = self.rng.choice([s for s in self.ws["statuses"] if s != current])
        if not self._do("set_status", {"path": path, "status": status}, "mutation"):
            return None
        sentence = self.rng.choice(("mark {t} as {s}", "set the status of {t} to {s}"))
        return self._goal("set_status", words, sentence.format(t=words, s=status), status=status)

    def _goal_conditional(self):
        """Read first, then act on what the file says: the branch depends on its status."""
        found = self._target()
        if found is None:
            return None
        path, words = found
        if not self._do("cat", {"path": path}, "lookup"):
            return None
        current = self.header(path, "Status")
        statuses = list(self.ws["statuses"])
        asked = current if self.rng.random() < 0.5 else self.rng.choice(statuses)
        others = [s for s in statuses if s != asked]
        if current is None or not others:
            return None
        then_status = self.rng.choice(others)
        if "tag" in self.verbs and self._tags(path) != list(self.ws["tags"]):
            tag = self.rng.choice([t for t in self.ws["tags"] if t not in self._tags(path)])
            else_text, else_call = f"tag it as {tag}", ("tag", {"path": path, "tag": tag})
        else:
            else_text = 'leave its status and add the line "checked" at its end'
            else_call = ("append", {"path": path, "line": "checked"})
            if "append" not in self.verbs:
                return None
        if current == asked:
            call = ("set_status", {"path": path, "status": then_status})
        else:
            call = else_call
        if not self._do(call[0], call[1], "mutation"):
            return None
        sentence = (
            f"check {words}: if its status is {asked}, mark it as {then_status}; "
            f"otherwise {else_text}"
        )
        return self._goal(call[0], words, sentence, status=asked)

    def _goal_append(self):
        notes = list(self.ws.get("notes") or ["Checked."])
        found = self._target()
        if found is None:
            return None
        path, words = found
        note = self.rng.choice(notes)
        if not self._do("append", {"path": path, "line": note}, "mutation"):
            return None
        sentence = self.rng.choice(
            ('add the line "{n}" at the end of {t}', 'append the note "{n}" to {t}')
        )
        return self._goal("append", words, sentence.format(t=words, n=note), line=note)

    def _goal_replace(self):
        found = self._target()
        if found is None:
            return None
        path, words = found
        text = self.world.files[path]
        keys = [k for k in self.ws["fields"] if k != self.ws["name_field"]]
        self.rng.shuffle(keys)
        for key in keys:
            old = self.header(path, key)
            if old is None:
                continue
            old_line = f"{key}: {old}"
            new = field_value(self.ws["fields"][key], self.rng, self.rng.randint(100, 9999))
            if new == old or text.count(old_line) != 1:
                continue
            args = {"path": path, "old": old_line, "new": f"{key}: {new}"}
            if not self._do("replace", args, "mutation"):
                return None
            sentence = self.rng.choice(
                ("change the {k} in {t} from {o} to {n}", "correct the {k} of {t}: {o} becomes {n}")
            ).format(k=key.lower(), t=words, o=old, n=new)
            return self._goal("replace", words, sentence, old=old, new=new)
        return None

    def _goal_touch(self):
        folder = self.rng.choice(self.folders())
        name = self.rng.choice(NEW_FILES)
        path = posixpath.join(folder, name)
        if not self._do("touch", {"path": path}, "mutation"):
            return None
        sentence = f"create an empty file {name} in the {folder} folder"
        return self._goal("touch", f"{folder}/{name}", sentence, name=name, folder=folder)

    def _goal_rmdir(self):
        empty = [d for d in self.folders() if not self.world._listdir(d)]
        if not empty:
            return None
        folder = self.rng.choice(empty)
        if not self._do("ls", {"folder": folder}, "lookup"):
            return None
        if not self._do("rmdir", {"path": folder}, "mutation"):
            return None
        sentence = f"remove the folder {folder} if it is empty"
        return self._goal("rmdir", folder, sentence, folder=folder)

    # -- the refused request ----------------------------------------------------------

    def refusable_verbs(self, rng: random.Random) -> list[str]:
        """The verbs of the requests the tree the user sees refuses (none when it refuses
        none), in a random order drawn by their goal weights: the order a refused request
        tries them in, and a feasible candidate's guarded goal too."""
        docs = [p for p in self.documents() if p in self.initial.files]
        verbs = [v for v in self._refusable_verbs() if any(self._blocking(v, p) for p in docs)]
        keys = {v: rng.random() ** (1.0 / GOALS[v][1]) for v in verbs}
        return sorted(verbs, key=lambda v: -keys[v])

    def _refusable_verbs(self) -> list[str]:
        return [v for v in REFUSABLE if all(n in self.verbs for n in GOALS[v][0])]

    def _blocking(self, verb: str, path: str) -> list[tuple[str, str]]:
        """(folder to list, file in the way) of each request of `verb` on document `path` that
        "never overwrites" refuses: a move or copy into another folder holding a file of its
        name, a rename to the name of another file in its folder."""
        name, home = posixpath.basename(path), posixpath.dirname(path)
        if verb == "rename":
            return [
                (home, p)
                for p in sorted(self.world.files)
                if posixpath.dirname(p) == home and p != path and self._in_the_way(p, path)
            ]
        return [
            (d, posixpath.join(d, name))
            for d in self.folders()
            if d != home and self._in_the_way(posixpath.join(d, name), path)
        ]

    def _in_the_way(self, other: str, path: str) -> bool:
        """Whether file `other` blocks a request on `path` now and did in the tree the user
        saw, and holds other text (the same text in place would be the request done)."""
        return (
            other in self.world.files
            and other in self.initial.files
            and other not in self.used
            and not self.special(other)
            and self.world.files[other] != self.world.files.get(path)
        )

    def try_refused(self, verbs: list[str], max_chain_length: int) -> bool:
        """Plan the refused goal here, of the first of `verbs` that has a target (False, and
        nothing planned, when none has)."""
        for verb in verbs:
            mark = self._mark()
            planned = self._refused(verb)
            if planned is None or len(self.steps) > max_chain_length:
                self._rollback(mark)
                self.refusal, self.asked, self.rule = None, None, ""
                continue
            sentence, goal = planned
            self.sentences.append(sentence)
            self.goals.append(goal)
            return True
        return False

    def _refused(self, verb: str) -> tuple[str, PlanGoal] | None:
        def blocked(p: str) -> bool:
            return p in self.initial.files and bool(self._blocking(verb, p))

        found = self._target(blocked)
        if found is None:
            return None
        path, words = found
        folder, other = self.rng.choice(self._blocking(verb, path))
        name = posixpath.basename(other)
        if verb == "rename":
            args = {"path": path, "new_name": name}
        else:
            args = {"path": path, "folder": folder}
        # An agent that looks in the folder first sees the file in the way: the fact the
        # refusal states, read where that listing shows it.
        if not self._do("ls", {"folder": folder}, "lookup"):
            return None
        listed = self.world.ls(folder)["data"]
        if name not in listed:
            return None
        at = AskedValue(
            f"the file of that name already in {folder}",
            name,
            len(self.steps) - 1,
            ("data", listed.index(name)),
        )
        error = self._attempt(verb, args)
        lines = rule_lines_for(error or "", self.rules)
        if error is None or not lines:
            return None
        self.used.add(other)  # no later goal moves the file in the way
        self.hidden.append(other)
        self.refusal = {
            "asked_facts": 1,
            "reasons": [
                {
                    "rule": "no_overwrite:path",
                    "facts": [name],
                    "texts": [error, *lines],
                    # The file in the way is seen in a listing, or in the tool's error.
                    "told": False,
                    "shows": [name],
                }
            ],
            "rules": [line for line in self.rules if line not in lines],
            "tools": list(self.tool_texts),
        }
        self.asked, self.rule = at, "no_overwrite:path"
        if verb == "rename":
            sentence = self.rng.choice(RENAME_TEMPLATES).format(t=words, n=name)
            values = {"name": name}
        else:
            templates = MV_TEMPLATES if verb == "mv" else CP_TEMPLATES
            sentence = self.rng.choice(templates).format(t=words, d=folder)
            values = {"folder": folder}
        _, then = self._goal(verb, words, sentence, **values)
        goal = PlanGoal(
            kind="refuse", tool=verb, verb=verb, target=words, then=then, description=sentence
        )
        return sentence, goal

    def _attempt(self, verb: str, args: dict[str, Any]) -> str | None:
        """Append a call the verb refuses, here and in the tree the user saw, with the same
        error and nothing changed (role `refused`, as `Planner.attempt` does for tools):
        its error, or None if it would go through."""
        before = (dict(self.world.files), set(self.world.dirs))
        result = self.world.call(verb, args)
        changed = (self.world.files, self.world.dirs) != before
        self.world.files, self.world.dirs = before
        self.listings.pop("world", None)
        probe = copy.copy(self.initial)  # the verbs write: never into the initial tree
        probe.files, probe.dirs = dict(self.initial.files), set(self.initial.dirs)
        there = probe.call(verb, args)
        if result.get("success") or changed or there.get("success"):
            return None
        if there.get("error") != result.get("error") or not result.get("error"):
            return None
        self.steps.append(ToolCall(tool=verb, args=args))
        self.roles.append("refused")
        return str(result["error"])


def _refused_plan(env: Environment, plan: TaskPlan, planner: _Planner) -> TaskPlan:
    """`plan` as an infeasible task: its reply contract (the refusal, its fact and where the
    gold run shows it) and its kind, as the tool environments' infeasible tasks carry them."""
    refusal = dict(planner.refusal or {})
    # Refused alone, a reply that claims something was done is false; beside goals that
    # were done, it may say so of them.
    refusal["alone"] = "mutation" not in planner.roles
    asked = planner.asked
    assert asked is not None
    return plan.model_copy(
        update={
            "kind": "infeasible",
            "asked": [asked.to_json()],
            "expected_reply": {
                "include": [str(asked.value)],
                "exclude": [],
                "candidates": [],
                "rule": planner.rule,
                "refusal": refusal,
            },
        }
    )


def _assemble(
    env: Environment,
    state: InitialState,
    plan: TaskPlan,
    sentences: list[str],
    rng: random.Random,
) -> Scenario | None:
    # Files are work items: staff ask (a customer voice needs a customer behind the goals).
    persona = rng.choice(STAFF)
    text, persona = task_text(plan.title, persona, sentences, rng)
    if mentions_an_id(text, plan.hidden_ids):
        return None
    reply = plan.expected_reply
    refusal = (reply or {}).get("refusal")
    if refusal is not None and not error_tells(refusal["reasons"], text):
        return None  # the verb's error is the request's own words: quoting it shows nothing
    extra = dict(plan.extra)
    if reply is not None:
        extra["reply"] = stored_reply(plan, reply)
    # Workspace tasks name every path they act on and have no branches or listings to
    # choose from, so only their steps (and a refusal) count towards the structural tier.
    difficulty = difficulty_record(
        steps=len(plan.gold_chain),
        n_mutations=plan.n_mutations,
        n_lookups=plan.roles.count("lookup"),
        hidden_lookups=0,
        decoys=0,
        conditionals=0,
        infeasible=plan.kind == "infeasible",
    )
    return scenario_of(env, state, plan, text, persona, difficulty, reply, extra)
