select
    cast(traj_id as varchar) as traj_id,
    cast(scenario_id as varchar) as scenario_id,
    cast(env_id as varchar) as env_id,
    cast(policy as varchar) as policy,
    cast(split as varchar) as split,
    cast(reward as double) as reward,
    cast(success as boolean) as success,
    cast(n_steps as bigint) as n_steps,
    cast(tokens_in as bigint) as tokens_in,
    cast(tokens_out as bigint) as tokens_out,
    cast(cost_usd as double) as cost_usd,
    cast(messages_json as varchar) as messages_json,
    cast(tools_json as varchar) as tools_json,
    cast(attempt_seed as bigint) as attempt_seed
from {{ source('warehouse', 'trajectories') }}
