-- One row per scenario with its structural difficulty (chain length, distinct tools, checks)
-- and its empirical difficulty (how often agents, i.e. non-control policies, solve it). The
-- band mirrors EnvCraft's filter: tasks every agent solves are "easy", none "unsolved";
-- "unrated" until some agent other than oracle/noop has played the task.
with checks as (
    select scenario_id, count(*) as n_checks
    from {{ ref('stg_checks') }}
    group by scenario_id
),

agents as (
    select
        scenario_id,
        count(*) filter (where policy not in {{ control_policies() }}) as n_agent_trajectories,
        avg(case when success then 1.0 else 0.0 end)
            filter (where policy not in {{ control_policies() }}) as agent_success_rate,
        avg(reward) filter (where policy not in {{ control_policies() }}) as agent_mean_reward,
        bool_or(success) filter (where policy = 'oracle') as oracle_solved,
        bool_or(success) filter (where policy = 'noop') as noop_solved
    from {{ ref('stg_trajectories') }}
    group by scenario_id
)

select
    s.scenario_id,
    s.env_id,
    e.archetype,
    s.status,
    s.split,
    s.scenario_kind,
    s.chain_length,
    s.n_distinct_tools,
    coalesce(c.n_checks, 0) as n_checks,
    t.proven,
    t.mutation_kill_rate,
    coalesce(a.n_agent_trajectories, 0) as n_agent_trajectories,
    a.agent_success_rate,
    a.agent_mean_reward,
    a.oracle_solved,
    a.noop_solved,
    case
        when coalesce(a.n_agent_trajectories, 0) = 0 then 'unrated'
        when a.agent_success_rate = 0 then 'unsolved'
        when a.agent_success_rate < 0.5 then 'hard'
        when a.agent_success_rate < 1 then 'medium'
        else 'easy'
    end as difficulty_band
from {{ ref('stg_scenarios') }} as s
left join {{ ref('stg_environments') }} as e using (env_id)
left join {{ ref('stg_check_selftests') }} as t using (scenario_id)
left join checks as c using (scenario_id)
left join agents as a using (scenario_id)
order by s.scenario_id
