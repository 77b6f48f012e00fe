select
    cast(env_id as varchar) as env_id,
    cast(topic_id as varchar) as topic_id,
    cast(archetype as varchar) as archetype,
    cast(kind as varchar) as env_kind,
    cast(source as varchar) as source,
    cast(class_name as varchar) as class_name,
    cast(status as varchar) as status,
    cast(reason as varchar) as reason,
    cast(n_tools as bigint) as n_tools,
    cast(n_query_tools as bigint) as n_query_tools,
    cast(n_mutate_tools as bigint) as n_mutate_tools,
    cast(code_sha256 as varchar) as code_sha256,
    cast(audit_score as double) as audit_score,
    cast(program_shape as varchar) as program_shape,
    cast(tool_graph as varchar) as tool_graph,
    cast(split as varchar) as split
from {{ source('warehouse', 'environments') }}
