select
    cast(topic_id as varchar) as topic_id,
    cast(title as varchar) as topic_title,
    cast(archetype as varchar) as archetype,
    cast(description as varchar) as description
from {{ source('warehouse', 'topics') }}
