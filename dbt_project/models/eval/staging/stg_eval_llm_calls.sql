select
    cast(call_id as varchar) as call_id,
    cast(run_id as varchar) as run_id,
    cast(stage as varchar) as stage,
    cast(artifact_id as varchar) as artifact_id,
    cast(model as varchar) as model,
    cast(attempt as integer) as attempt,
    cast(status as varchar) as status,
    cast(reason as varchar) as reason,
    cast(tokens_in as bigint) as tokens_in,
    cast(tokens_out as bigint) as tokens_out,
    cast(cost_usd as double) as cost_usd,
    cast(latency_ms as double) as latency_ms,
    cast(cache_hit as boolean) as cache_hit,
    cast(request_sha256 as varchar) as request_sha256,
    cast(created_at as timestamptz) as created_at
from {{ source('evals', 'eval_llm_calls') }}
