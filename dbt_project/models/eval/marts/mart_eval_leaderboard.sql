-- One row per model and dataset: success rate and mean reward over the episodes that count,
-- pass^k and pass@k at the largest k (the most attempts any of its tasks has; k = 1 gives
-- the success rate again), the agent's cost, its success rate on the synthesized and on
-- the foreign environments (mart_eval_transfer; null where it played none), and its rank on
-- the dataset (by success rate, then mean reward).
with overall as (
    select
        manifest_sha256,
        arg_max(dataset_id, finished_at) as dataset_id,
        model,
        string_agg(distinct split, '+' order by split) as splits,
        count(distinct scenario_id) as n_tasks,
        count(*) as n_episodes,
        count(*) filter (where success) as n_successes,
        avg(case when success then 1.0 else 0.0 end) as success_rate,
        avg(reward) as mean_reward,
        count(*) filter (where errored) as n_errors,
        max(finished_at) as last_episode_at
    from {{ ref('int_eval_episodes') }}
    group by manifest_sha256, model
),

largest_k as (
    select manifest_sha256, model, k as max_k, pass_hat_k, pass_at_k
    from {{ ref('mart_eval_reliability') }}
    qualify row_number() over (partition by manifest_sha256, model order by k desc) = 1
),

transfer as (
    select
        manifest_sha256,
        model,
        max(success_rate) filter (where origin = 'synthesized') as synthesized_success_rate,
        max(success_rate) filter (where origin = 'foreign') as foreign_success_rate
    from {{ ref('mart_eval_transfer') }}
    group by manifest_sha256, model
)

select
    o.manifest_sha256,
    o.dataset_id,
    rank() over (
        partition by o.manifest_sha256 order by o.success_rate desc, o.mean_reward desc
    ) as rank,
    o.model,
    o.splits,
    o.n_tasks,
    o.n_episodes,
    o.n_successes,
    o.success_rate,
    o.mean_reward,
    k.max_k,
    k.pass_hat_k as pass_hat_max_k,
    k.pass_at_k as pass_at_max_k,
    t.synthesized_success_rate,
    t.foreign_success_rate,
    o.n_errors,
    s.cost_usd,
    s.cost_per_success_usd,
    s.total_tokens,
    o.last_episode_at
from overall as o
join largest_k as k using (manifest_sha256, model)
join {{ ref('mart_eval_spend') }} as s using (manifest_sha256, model)
join transfer as t using (manifest_sha256, model)
order by o.manifest_sha256, rank, o.model
