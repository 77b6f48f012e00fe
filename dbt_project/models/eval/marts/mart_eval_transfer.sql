-- In-distribution against transfer: per model and dataset, success rate and mean reward on
-- the environments the build synthesized and on the foreign ones (classes brought with
-- --envs: another benchmark's backends, a user's own), over the episodes that count.
-- success_rate_gap: this origin's success rate minus the model's on synthesized
-- environments (null on that row, or when the model played none).
with by_origin as (
    select
        manifest_sha256,
        arg_max(dataset_id, finished_at) as dataset_id,
        model,
        origin,
        count(distinct env_id) as n_environments,
        count(distinct scenario_id) as n_tasks,
        count(*) as n_episodes,
        count(*) filter (where success) as n_successes,
        avg(case when success then 1.0 else 0.0 end) as success_rate,
        avg(reward) as mean_reward
    from {{ ref('int_eval_episodes') }}
    group by manifest_sha256, model, origin
)

select
    b.*,
    case
        when b.origin <> 'synthesized' then b.success_rate - s.success_rate
    end as success_rate_gap
from by_origin as b
left join by_origin as s
    on
        s.manifest_sha256 = b.manifest_sha256
        and s.model = b.model
        and s.origin = 'synthesized'
order by b.manifest_sha256, b.model, b.origin desc
