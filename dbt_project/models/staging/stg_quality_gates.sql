select
    cast(suite as varchar) as suite,
    cast(success as boolean) as success,
    cast(evaluated as bigint) as evaluated,
    cast(n_failed as bigint) as n_failed,
    cast(rows as bigint) as n_rows,
    cast(seconds as double) as seconds,
    cast(failures_json as varchar) as failures_json
from {{ source('warehouse', 'quality_gates') }}
