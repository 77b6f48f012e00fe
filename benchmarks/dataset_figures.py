"""A built dataset's figures, read from its warehouse: what the breadth issue must show.

    python benchmarks/dataset_figures.py [--home var]

Prints, for the accepted environments, the distinct program shapes and tool graphs (overall
and per archetype, with the test environments), the workspace environments and what their
checks read, whether every tool schema is a valid function definition; for the tasks, the
self-test yield, the mutation kill rate of state tasks and of reply tasks, chain lengths and
the infeasible share; what the baselines earned (from the trajectories table); task texts
that hold an internal id, an ISO timestamp or a snake_case value; the published tasks per
split, what task screening quarantined, and an independent near-duplicate scan of the
published task texts beside the dedup's own: MinHash LSH over 3-word shingles (the dedup uses
5), pairs confirmed at Jaccard 0.8, as the share of published tasks that have a
near-duplicate.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402

from synthesis.tasks import dedup, task_features  # noqa: E402
from synthesis.tasks.checks import is_collection  # noqa: E402
from synthesis.tasks.text.values import has_iso_timestamp, snake_case_tokens  # noqa: E402
from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES  # noqa: E402

INDEPENDENT_SHINGLE_WORDS = 3
REPLY_CHECK_TYPES = ("reply_contains", "reply_excludes")
# OpenAI's rule for a function name.
FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOKENS = re.compile(r"[\w.@+-]+|[\w-]+")


def near_duplicate_share(texts: list[str], size: int) -> float:
    """Share of texts with another text at Jaccard >= the dedup's bar (size-word shingles)."""
    from datasketch import MinHash, MinHashLSH

    permutations = task_features.MINHASH_PERMUTATIONS
    lsh = MinHashLSH(threshold=dedup.CANDIDATE_JACCARD, num_perm=permutations)
    sets = [dedup.shingles(t, size) for t in texts]
    sketches = []
    for i, own in enumerate(sets):
        sketch = MinHash(num_perm=permutations, seed=task_features.MINHASH_SEED)
        sketch.update_batch([s.encode() for s in sorted(own)])
        lsh.insert(i, sketch)
        sketches.append(sketch)
    flagged = set()
    for i, sketch in enumerate(sketches):
        for j in lsh.query(sketch):
            if j != i and dedup.jaccard(sets[i], sets[j]) >= dedup.NEAR_DUPLICATE_JACCARD:
                flagged |= {i, j}
    return len(flagged) / len(texts) if texts else 0.0


def schema_fault(raw: str) -> str | None:
    """Why a stored tool schema is not a valid OpenAI function definition, else None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = json.loads(raw)
    function = schema.get("function", schema) if schema.get("type") == "function" else schema
    if not FUNCTION_NAME.match(str(function.get("name", ""))):
        return f"bad name {function.get('name')!r}"
    params = function.get("parameters")
    if not isinstance(params, dict) or params.get("type") != "object":
        return "parameters are not an object schema"
    if not set(params.get("required", [])) <= set(params.get("properties", {})):
        return "a required parameter is not declared"
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as exc:
        return f"invalid JSON schema: {exc.message}"
    return None


def text_faults(text: str, ids: set[str]) -> list[str]:
    """What a task text must never hold: an internal id, an ISO timestamp, a snake_case value.

    Ids are matched as whole tokens (lower-cased), as `mentions_an_id` does with a regex per
    id, which would take minutes over a full build's texts and states.
    """
    faults = []
    words = {w.strip(".,;:!?'\"()").lower() for w in _TOKENS.findall(text)}
    if words & ids:
        faults.append("id")
    if has_iso_timestamp(text):
        faults.append("iso")
    if snake_case_tokens(text):
        faults.append("snake_case")
    return faults


def state_ids(state: dict) -> set[str]:
    """Id-shaped keys of the state's collections (bare short numbers read as quantities).

    Only id-keyed collections of records count: a workspace tree's keys ('files', 'dirs')
    are no ids, and "Legal case files" must not read as naming one.
    """
    return {
        str(rid).lower()
        for coll in state.values()
        if is_collection(coll)
        for rid in coll
        if not (str(rid).isdigit() and len(str(rid)) < 4)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("var"))
    args = parser.parse_args()
    con = duckdb.connect(str(args.home / "warehouse.duckdb"), read_only=True)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    accepted = "FROM environments WHERE status = 'accepted'"
    ((n_envs, n_arch, n_shapes, n_graphs),) = q(
        f"SELECT count(*), count(DISTINCT archetype), count(DISTINCT program_shape), "
        f"count(DISTINCT tool_graph) {accepted}"
    )
    print(f"accepted environments   {n_envs} over {n_arch} archetypes")
    print(f"distinct program shapes {n_shapes}")
    print(f"distinct tool graphs    {n_graphs}")
    print(f"\n{'archetype':<20} {'envs':>5} {'shapes':>7} {'graphs':>7} {'test envs':>10}")
    for row in q(
        "SELECT archetype, count(*), count(DISTINCT program_shape), count(DISTINCT tool_graph), "
        f"count(*) FILTER (WHERE split = 'test') {accepted} GROUP BY 1 ORDER BY 1"
    ):
        print(f"{row[0]:<20} {row[1]:>5} {row[2]:>7} {row[3]:>7} {row[4]:>10}")
    workspace_envs = q(
        "SELECT e.env_id, count(s.scenario_id) FILTER (WHERE s.status = 'published') "
        "FROM environments e LEFT JOIN scenarios s USING (env_id) "
        "WHERE e.status = 'accepted' AND e.kind = 'workspace' GROUP BY 1 ORDER BY 1"
    )
    check_types = dict(
        q(
            "SELECT json_extract_string(c.spec_json, '$.type') AS t, count(*) FROM checks c "
            "JOIN scenarios s USING (scenario_id) JOIN environments e ON e.env_id = s.env_id "
            "WHERE e.kind = 'workspace' AND s.status = 'published' GROUP BY 1 ORDER BY 1"
        )
    )
    reading = sum(n for t, n in check_types.items() if t in WORKSPACE_CHECK_TYPES)
    others = [f"{t} {n}" for t, n in check_types.items() if t not in WORKSPACE_CHECK_TYPES]
    print(
        f"\nworkspace environments  {len(workspace_envs)}; published tasks each: "
        f"min {min((n for _, n in workspace_envs), default=0)}, "
        f"median {statistics.median([n for _, n in workspace_envs] or [0])}; "
        f"{reading} of {sum(check_types.values())} of their checks read the final workspace "
        f"(the rest: {', '.join(others) or 'none'})"
    )
    schemas = q(
        "SELECT t.env_id, t.tool_name, t.schema_json FROM tools t "
        "JOIN environments e USING (env_id) WHERE e.status = 'accepted' ORDER BY 1, 2"
    )
    faults = [(env, tool, f) for env, tool, raw in schemas if (f := schema_fault(raw))]
    print(f"tool schemas            {len(schemas)}, invalid function definitions: {len(faults)}")
    for env, tool, fault in faults[:5]:
        print(f"  {env}.{tool}: {fault}")

    ((candidates, published),) = q(
        "SELECT count(*), count(*) FILTER (WHERE status = 'published') FROM scenarios"
    )
    print(
        f"\ntasks                   {candidates} candidates, {published} published, "
        f"self-test yield {published / max(1, candidates):.1%}"
    )
    reply_kind = (
        "CASE WHEN EXISTS (SELECT 1 FROM checks c WHERE c.scenario_id = s.scenario_id AND "
        f"json_extract_string(c.spec_json, '$.type') IN {REPLY_CHECK_TYPES}) "
        "THEN 'reply' ELSE 'state' END"
    )
    for answer, n, kill in q(
        f"SELECT {reply_kind} AS answer, count(*), avg(t.mutation_kill_rate) FROM scenarios s "
        "JOIN check_selftests t USING (scenario_id) WHERE s.status = 'published' "
        "GROUP BY 1 ORDER BY 1"
    ):
        print(f"  {answer} tasks {n:>7}, mean mutation kill rate {kill:.3f}")
    lengths = [r[0] for r in q("SELECT chain_length FROM scenarios WHERE status = 'published'")]
    ((infeasible,),) = q(
        "SELECT count(*) FROM scenarios WHERE status = 'published' AND kind = 'infeasible'"
    )
    if lengths:
        print(
            f"  chain length median {statistics.median(lengths)}, "
            f"{sum(n >= 8 for n in lengths) / len(lengths):.1%} with 8+ steps, "
            f"longest {max(lengths)}; infeasible {infeasible / len(lengths):.1%}"
        )

    print("\nbaselines (published tasks; noop and refuse_always on feasible ones)")
    for policy, n, top, nonzero in q(
        "SELECT t.policy, count(*), max(t.reward), count(*) FILTER (WHERE t.reward > 0) "
        "FROM trajectories t JOIN scenarios s USING (scenario_id) WHERE s.status = 'published' "
        "AND (t.policy = 'wrong_record' OR (t.policy IN ('noop', 'refuse_always') "
        "AND s.kind = 'feasible')) GROUP BY 1 ORDER BY 1"
    ):
        print(f"  {policy:<14} {n:>7} tasks, max reward {top}, reward > 0 on {nonzero}")

    ids_of = {
        state_id: state_ids(json.loads(raw))
        for state_id, raw in q("SELECT state_id, state_json FROM initial_states")
    }
    counts = {"id": 0, "iso": 0, "snake_case": 0}
    examples: list[str] = []
    for state_id, text in q(
        "SELECT state_id, task_text FROM scenarios WHERE status = 'published' ORDER BY 1"
    ):
        found = text_faults(text, ids_of.get(state_id, set()))
        for fault in found:
            counts[fault] += 1
        if found and len(examples) < 3:
            examples.append(f"{found}: {text[:160]}")
    print(
        f"\npublished task texts holding an internal id {counts['id']}, an ISO timestamp "
        f"{counts['iso']}, a snake_case value {counts['snake_case']}"
    )
    for example in examples:
        print(f"  {example}")
    print("\npublished tasks per split")
    for split, n in q(
        "SELECT split, count(*) FROM scenarios WHERE status = 'published' GROUP BY 1 ORDER BY 1"
    ):
        print(f"  {split:<6} {n}")
    print("\nquarantined by task screening")
    for kind, n in q(
        "SELECT reason_kind, count(*) FROM quarantine WHERE stage = 'task_screening' "
        "GROUP BY 1 ORDER BY 1"
    ) or [("none", 0)]:
        print(f"  {kind:<16} {n}")
    texts = [
        r[0]
        for r in q(
            "SELECT task_text FROM scenarios WHERE status = 'published' ORDER BY scenario_id"
        )
    ]
    own = near_duplicate_share(texts, dedup.SHINGLE_WORDS)
    independent = near_duplicate_share(texts, INDEPENDENT_SHINGLE_WORDS)
    print(
        f"\npublished tasks with a near-duplicate (Jaccard >= {dedup.NEAR_DUPLICATE_JACCARD}):"
        f"\n  {dedup.SHINGLE_WORDS}-word shingles (the dedup's)  {own:.2%}"
        f"\n  {INDEPENDENT_SHINGLE_WORDS}-word shingles (independent) {independent:.2%}"
        f"   (goal: at most 1%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
