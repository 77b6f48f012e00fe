-- One row per scenario with its difficulty three ways:
-- * structural: the tier and score the planner read off the task's structure
--   (synthesis/tasks/difficulty.py: steps, hidden lookups, decoys, conditionals, infeasible);
-- * baseline: the guesser's k seeded attempts (synthesis/rollouts/guesser.py), and the
--   `final_tier` that moves the structural tier by them (macros/task_tiers.sql), which every
--   published task has offline;
-- * agents: how often agents under test (non-control policies) solve it. That band mirrors
--   EnvCraft's filter: tasks every agent solves are "easy", none "unsolved"; "unrated" until
--   some agent has played the task.
with answer_kinds as (
    {{ task_answer_kinds(ref('stg_checks')) }}
),

baseline as (
    select
        scenario_id,
        count(*) as baseline_attempts,
        count(*) filter (where success) as baseline_solves
    from {{ ref('stg_trajectories') }}
    where policy = 'guesser'
    group by scenario_id
),

checks as (
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
    coalesce(k.task_answer_kind, 'state') as task_answer_kind,
    s.chain_length,
    s.n_distinct_tools,
    json_extract_string(s.difficulty_json, '$.tier') as structural_tier,
    cast(json_extract(s.difficulty_json, '$.score') as double) as structure_score,
    coalesce(b.baseline_attempts, 0) as baseline_attempts,
    coalesce(b.baseline_solves, 0) as baseline_solves,
    case
        when b.baseline_attempts > 0 then b.baseline_solves / b.baseline_attempts
    end as baseline_solve_rate,
    {{ final_tier(
        "json_extract_string(s.difficulty_json, '$.tier')",
        'coalesce(b.baseline_attempts, 0)',
        'coalesce(b.baseline_solves, 0)'
    ) }} as final_tier,
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
left join baseline as b using (scenario_id)
left join answer_kinds as k using (scenario_id)
order by s.scenario_id
