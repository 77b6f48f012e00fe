select
    cast(state_id as varchar) as state_id,
    cast(env_id as varchar) as env_id,
    cast(seed as bigint) as seed,
    cast(state_json as varchar) as state_json
from {{ source('warehouse', 'initial_states') }}
