-- How each policy does on the published tasks of each split: the benchmark table a dataset
-- card quotes. Trajectories on quarantined scenarios are excluded because those tasks never
-- ship.
select
    t.policy,
    s.split,
    count(*) as n_trajectories,
    count(distinct t.scenario_id) as n_scenarios,
    avg(case when t.success then 1.0 else 0.0 end) as success_rate,
    avg(t.reward) as mean_reward,
    avg(t.n_steps) as mean_steps,
    cast(sum(t.tokens_in) as bigint) as tokens_in,
    cast(sum(t.tokens_out) as bigint) as tokens_out,
    sum(t.cost_usd) as cost_usd,
    case
        when count(*) filter (where t.success) > 0
            then sum(t.cost_usd) / count(*) filter (where t.success)
    end as cost_per_success_usd
from {{ ref('stg_trajectories') }} as t
join {{ ref('stg_scenarios') }} as s using (scenario_id)
where s.status = 'published'
group by t.policy, s.split
order by t.policy, s.split
