-- LLM spend per published task, over every build the ledger holds: the calls about the
-- scenario (its text, plan and simulated user; the agent's calls name the scenario too)
-- plus those naming one of its trajectories. `agent_cost_usd` is the agent's share.
with
{{ llm_spend_by_owner("
    select scenario_id as owner_id, scenario_id as key from " ~ ref('stg_scenarios') ~ "
    union all select scenario_id, traj_id from " ~ ref('stg_trajectories')
) }}
select
    s.scenario_id,
    s.env_id,
    s.split,
    {{ llm_spend_columns() }}
from {{ ref('stg_scenarios') }} as s
left join spend on spend.owner_id = s.scenario_id
where s.status = 'published'
order by s.scenario_id
