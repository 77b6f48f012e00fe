select
    cast(scenario_id as varchar) as scenario_id,
    cast(env_id as varchar) as env_id,
    cast(state_id as varchar) as state_id,
    cast(status as varchar) as status,
    cast(reason as varchar) as reason,
    cast(split as varchar) as split,
    cast(kind as varchar) as scenario_kind,
    cast(chain_length as bigint) as chain_length,
    cast(n_distinct_tools as bigint) as n_distinct_tools,
    cast(task_text as varchar) as task_text,
    cast(initial_state_json as varchar) as initial_state_json,
    cast(gold_chain_json as varchar) as gold_chain_json,
    cast(gold_results_json as varchar) as gold_results_json,
    cast(final_state_json as varchar) as final_state_json,
    cast(difficulty_json as varchar) as difficulty_json,
    cast(provenance_json as varchar) as provenance_json,
    -- A multi-turn task's simulated user (null: single-turn).
    cast(user_json as varchar) as user_json
from {{ source('warehouse', 'scenarios') }}
