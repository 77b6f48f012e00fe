{{ config(materialized='view') }}
-- The episodes every eval mart counts, one row per (model, dataset, task, attempt):
-- * the latest row per episode_key (the table's key, so one already: an errored episode played
--   again replaces its row);
-- * of a model's rows for one attempt at one task of one dataset recorded under different
--   episode settings (a new eval protocol, another max_tokens: another episode_key), the
--   latest, so a model is measured as it plays now and no attempt is counted twice.
-- A dataset is its manifest's sha256: a byte-identical rebuild publishes a new folder
-- (dataset_id) with the same manifest, and its evaluations carry over (runner.py's key).
-- tier: the tier the dataset ships, else the tier as planned, else 'unknown'.
-- origin: synthesized or foreign (a class brought with --envs); rows written before the column
--   existed (schema version 1) take it from the archetype, 'foreign' for every foreign class.
-- Episodes an LLM error ended count, as failures (reward 0), as the eval's summary counts them.
with by_key as (
    select
        *,
        row_number() over (
            partition by episode_key
            order by finished_at desc nulls last, started_at desc nulls last, run_id desc
        ) as key_rank
    from {{ ref('stg_eval_episodes') }}
),

by_attempt as (
    select
        *,
        row_number() over (
            partition by model, manifest_sha256, scenario_id, attempt
            order by finished_at desc nulls last, started_at desc nulls last, episode_key desc
        ) as attempt_rank
    from by_key
    where key_rank = 1
)

select
    episode_key,
    run_id,
    model,
    dataset_id,
    manifest_sha256,
    settings_sha256,
    scenario_id,
    env_id,
    archetype,
    coalesce(origin, case when archetype = 'foreign' then 'foreign' else 'synthesized' end)
        as origin,
    kind,
    family,
    coalesce(final_tier, structural_tier, 'unknown') as tier,
    split,
    multi_turn,
    attempt,
    coalesce(reward, 0.0) as reward,
    coalesce(success, false) as success,
    failure,
    error is not null as errored,
    tool_calls,
    hit_step_limit,
    coalesce(prompt_tokens, 0) as prompt_tokens,
    coalesce(completion_tokens, 0) as completion_tokens,
    coalesce(cost_usd, 0.0) as cost_usd,
    seconds,
    finished_at
from by_attempt
where attempt_rank = 1
