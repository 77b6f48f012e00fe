-- LLM spend per stage and model. Cache hits cost nothing and are counted separately, so
-- cache_hit_rate shows how much of a re-run was free. Empty in offline builds.
select
    stage,
    model,
    count(*) as n_calls,
    count(*) filter (where cache_hit) as n_cache_hits,
    avg(case when cache_hit then 1.0 else 0.0 end) as cache_hit_rate,
    count(distinct artifact_id) as n_artifacts,
    cast(sum(tokens_in) as bigint) as tokens_in,
    cast(sum(tokens_out) as bigint) as tokens_out,
    sum(cost_usd) as cost_usd,
    case
        when count(distinct artifact_id) > 0 then sum(cost_usd) / count(distinct artifact_id)
    end as cost_per_artifact_usd,
    avg(latency_ms) filter (where not cache_hit) as mean_latency_ms,
    quantile_cont(latency_ms, 0.95) filter (where not cache_hit) as p95_latency_ms
from {{ ref('stg_llm_calls') }}
group by stage, model
order by stage, model
