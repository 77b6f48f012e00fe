select
    cast(artifact_type as varchar) as artifact_type,
    cast(artifact_id as varchar) as artifact_id,
    cast(stage as varchar) as stage,
    cast(reason as varchar) as reason,
    cast(reason_kind as varchar) as reason_kind
from {{ source('warehouse', 'quarantine') }}
