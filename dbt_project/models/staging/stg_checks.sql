select
    cast(check_id as varchar) as check_id,
    cast(scenario_id as varchar) as scenario_id,
    cast(env_id as varchar) as env_id,
    cast(description as varchar) as description,
    cast(spec_json as varchar) as spec_json
from {{ source('warehouse', 'checks') }}
