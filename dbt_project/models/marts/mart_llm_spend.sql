-- LLM spend per build and stage, from the append-only ledger (every attempt, failed ones
-- too): what each build cost, how many requests reached the endpoint, and how each ended.
-- `stop_reason` is the first reason a stage stopped (budget, deadline, open breaker).
select
    build_id,
    stage,
    min(created_at) as first_call_at,
    max(created_at) as last_call_at,
    count(*) as n_attempts,
    count(*) filter (where status not in ('cached', 'skipped')) as n_requests,
    count(*) filter (where status = 'accepted') as n_accepted,
    count(*) filter (where status = 'cached') as n_cached,
    count(*) filter (where status = 'rejected') as n_rejected,
    count(*) filter (where status in ('retried', 'failed')) as n_failed,
    count(*) filter (where status = 'skipped') as n_skipped,
    cast(sum(tokens_in) as bigint) as tokens_in,
    cast(sum(tokens_out) as bigint) as tokens_out,
    sum(cost_usd) as cost_usd,
    min(reason) filter (where status = 'skipped') as stop_reason
from {{ ref('stg_llm_calls') }}
group by build_id, stage
order by first_call_at, build_id, stage
