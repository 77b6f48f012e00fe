select
    cast(env_id as varchar) as env_id,
    cast(tool_name as varchar) as tool_name,
    cast(kind as varchar) as tool_kind,
    cast(description as varchar) as description,
    cast(n_params as bigint) as n_params,
    cast(n_required_params as bigint) as n_required_params,
    cast(reads as varchar[]) as reads,
    cast(writes as varchar[]) as writes,
    cast(schema_json as varchar) as schema_json
from {{ source('warehouse', 'tools') }}
