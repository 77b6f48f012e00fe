select
    cast(path as varchar) as shard_path,
    cast(sha256 as varchar) as sha256,
    cast(rows as bigint) as n_rows,
    cast(split as varchar) as split,
    cast(format as varchar) as shard_format,
    cast(kind as varchar) as shard_kind
from {{ source('warehouse', 'shards') }}
