-- One row per environment: audit outcome, tool mix, how many of its tasks survive the gates,
-- and how agents fare on them. "Agent" means every policy except the control policies
-- (macros/control_policies.sql): the oracle shows a task is solvable, noop that its checks
-- catch a do-nothing agent (its success rate should be 0).
with states as (
    select env_id, count(*) as n_initial_states
    from {{ ref('stg_initial_states') }}
    group by env_id
),

scenarios as (
    select
        s.env_id,
        count(*) as n_scenarios,
        count(*) filter (where s.status = 'published') as n_published,
        count(*) filter (where s.status = 'quarantined') as n_quarantined_scenarios,
        count(*) filter (where t.proven) as n_proven,
        avg(t.mutation_kill_rate) as mean_mutation_kill_rate,
        avg(s.chain_length) filter (where s.status = 'published') as mean_chain_length
    from {{ ref('stg_scenarios') }} as s
    left join {{ ref('stg_check_selftests') }} as t using (scenario_id)
    group by s.env_id
),

checks as (
    select s.env_id, count(*) as n_checks
    from {{ ref('stg_checks') }} as c
    join {{ ref('stg_scenarios') }} as s using (scenario_id)
    group by s.env_id
),

trajectories as (
    select
        env_id,
        count(*) as n_trajectories,
        avg(case when success then 1.0 else 0.0 end)
            filter (where policy = 'oracle') as oracle_success_rate,
        avg(case when success then 1.0 else 0.0 end)
            filter (where policy = 'noop') as noop_success_rate,
        avg(case when success then 1.0 else 0.0 end)
            filter (where policy not in {{ control_policies() }}) as agent_success_rate,
        avg(reward) filter (where policy not in {{ control_policies() }}) as agent_mean_reward
    from {{ ref('stg_trajectories') }}
    group by env_id
)

select
    e.env_id,
    e.topic_id,
    e.archetype,
    e.env_kind,
    e.source,
    e.status,
    e.audit_score,
    e.n_tools,
    e.n_query_tools,
    e.n_mutate_tools,
    coalesce(st.n_initial_states, 0) as n_initial_states,
    coalesce(sc.n_scenarios, 0) as n_scenarios,
    coalesce(sc.n_published, 0) as n_published,
    coalesce(sc.n_quarantined_scenarios, 0) as n_quarantined_scenarios,
    coalesce(sc.n_proven, 0) as n_proven,
    case when sc.n_scenarios > 0 then sc.n_published / sc.n_scenarios end as publish_rate,
    coalesce(ck.n_checks, 0) as n_checks,
    sc.mean_mutation_kill_rate,
    sc.mean_chain_length,
    coalesce(tr.n_trajectories, 0) as n_trajectories,
    tr.oracle_success_rate,
    tr.noop_success_rate,
    tr.agent_success_rate,
    tr.agent_mean_reward
from {{ ref('stg_environments') }} as e
left join states as st using (env_id)
left join scenarios as sc using (env_id)
left join checks as ck using (env_id)
left join trajectories as tr using (env_id)
order by e.env_id
