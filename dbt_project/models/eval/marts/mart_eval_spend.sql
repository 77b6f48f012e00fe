-- What evaluating each model on a dataset cost. From the episodes that count: the agent's
-- tokens and cost and the cost per success. From the client's ledger (eval_llm_calls, joined
-- to its run's model and dataset): every attempt at a request the model's evals of the
-- dataset made, retries, a model-worded user and episodes later replaced included, what was
-- actually spent.
with episodes as (
    select
        manifest_sha256,
        arg_max(dataset_id, finished_at) as dataset_id,
        model,
        count(*) as n_episodes,
        count(*) filter (where success) as n_successes,
        cast(sum(prompt_tokens) as bigint) as prompt_tokens,
        cast(sum(completion_tokens) as bigint) as completion_tokens,
        sum(cost_usd) as cost_usd,
        avg(seconds) as mean_seconds
    from {{ ref('int_eval_episodes') }}
    group by manifest_sha256, model
),

ledger as (
    select
        r.manifest_sha256,
        r.model,
        count(*) as n_requests,
        cast(coalesce(sum(c.tokens_in), 0) as bigint) as tokens_in,
        cast(coalesce(sum(c.tokens_out), 0) as bigint) as tokens_out,
        coalesce(sum(c.cost_usd), 0.0) as cost_usd
    from {{ ref('stg_eval_llm_calls') }} as c
    join {{ ref('stg_eval_runs') }} as r using (run_id)
    group by r.manifest_sha256, r.model
)

select
    e.manifest_sha256,
    e.dataset_id,
    e.model,
    e.n_episodes,
    e.n_successes,
    e.prompt_tokens,
    e.completion_tokens,
    e.prompt_tokens + e.completion_tokens as total_tokens,
    e.cost_usd,
    case when e.n_successes > 0 then e.cost_usd / e.n_successes end as cost_per_success_usd,
    case
        when e.n_successes > 0 then (e.prompt_tokens + e.completion_tokens) / e.n_successes
    end as tokens_per_success,
    e.mean_seconds,
    coalesce(l.n_requests, 0) as ledger_requests,
    coalesce(l.tokens_in, 0) as ledger_tokens_in,
    coalesce(l.tokens_out, 0) as ledger_tokens_out,
    coalesce(l.cost_usd, 0.0) as ledger_cost_usd
from episodes as e
left join ledger as l using (manifest_sha256, model)
order by e.manifest_sha256, e.model
