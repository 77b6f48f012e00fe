-- LLM spend per accepted environment, over every build the append-only ledger holds: the
-- calls about it (its env id, and its topic's id for the stages that run before it has
-- one: topic mining, spec, code) plus those about its scenarios and its trajectories (the
-- agent's calls name a scenario or a trajectory). Zero offline.
with
{{ llm_spend_by_owner("
    select env_id as owner_id, env_id as key from " ~ ref('stg_environments') ~ "
    union all select env_id, topic_id from " ~ ref('stg_environments') ~ "
    union all select env_id, scenario_id from " ~ ref('stg_scenarios') ~ "
    union all select env_id, traj_id from " ~ ref('stg_trajectories')
) }}
select
    e.env_id,
    e.topic_id,
    e.archetype,
    {{ llm_spend_columns() }}
from {{ ref('stg_environments') }} as e
left join spend on spend.owner_id = e.env_id
where e.status = 'accepted'
order by e.env_id
