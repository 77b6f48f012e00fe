-- The agent's LLM spend per successful trajectory of an LLM policy (`llm:<model>`). The
-- agent's calls name the trajectory, or (asked before the trajectory had an id) its
-- scenario: those are split evenly among the scenario's LLM trajectories, successful or
-- not, so a scenario's attempts share what they were asked together.
with
{{ llm_spend_by_owner("
    select traj_id as owner_id, traj_id as key from " ~ ref('stg_trajectories') ~ "
    union all select traj_id, scenario_id from " ~ ref('stg_trajectories') ~ "
        where policy like 'llm:%'",
    calls_where="c.stage = 'agent'"
) }}
select
    t.traj_id,
    t.scenario_id,
    t.env_id,
    t.policy,
    t.split,
    t.reward,
    {{ llm_spend_columns() }}
from {{ ref('stg_trajectories') }} as t
left join spend on spend.owner_id = t.traj_id
where t.success and t.policy like 'llm:%'
order by t.traj_id
