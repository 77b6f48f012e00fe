select
    cast(env_id as varchar) as env_id,
    cast(topic_id as varchar) as topic_id,
    cast(archetype as varchar) as archetype,
    cast(kind as varchar) as env_kind,
    cast(schema_version as bigint) as schema_version,
    cast(n_entities as bigint) as n_entities,
    cast(n_tools as bigint) as n_tools,
    cast(spec_json as varchar) as spec_json,
    cast(status as varchar) as status,
    cast(reason as varchar) as reason
from {{ source('warehouse', 'env_specs') }}
