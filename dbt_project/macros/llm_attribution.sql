{#- LLM spend attributed to artifacts. `keys` is a query of (owner, key) rows: each ledger
    row whose artifact_id equals a key belongs to that owner. A call several owners claim
    (one topic behind two environments, one scenario's agent calls behind its LLM
    trajectories) is split evenly among them, so the owners' rows add up to the ledger's
    attributable spend instead of counting a call twice. Counts are of calls (not split).
    `calls_where` narrows the ledger rows first (e.g. the agent's stage only). -#}
{% macro llm_spend_by_owner(keys, calls_where='true') -%}
distinct_keys as (
    select distinct owner_id, key from ({{ keys }}) as k where key is not null
),
shared as (
    select owner_id, key, 1.0 / count(*) over (partition by key) as share
    from distinct_keys
),
owned_calls as (
    select s.owner_id, s.share, c.*
    from shared as s
    join {{ ref('stg_llm_calls') }} as c on c.artifact_id = s.key
    where {{ calls_where }}
),
spend as (
    select
        owner_id,
        count(*) as n_calls,
        count(*) filter (where status = 'accepted') as n_accepted,
        count(*) filter (where status = 'cached') as n_cached,
        count(*) filter (where status = 'rejected') as n_rejected,
        count(*) filter (where status in ('retried', 'failed')) as n_failed,
        count(*) filter (where status = 'skipped') as n_skipped,
        count(distinct nullif(build_id, '')) as n_builds,
        cast(round(sum(share * tokens_in)) as bigint) as tokens_in,
        cast(round(sum(share * tokens_out)) as bigint) as tokens_out,
        sum(share * cost_usd) as cost_usd,
        coalesce(sum(share * cost_usd) filter (where stage = 'agent'), 0) as agent_cost_usd
    from owned_calls
    group by owner_id
)
{%- endmacro %}

{#- The spend columns of an owner, zero for an owner no call names (every row offline). -#}
{% macro llm_spend_columns() -%}
    coalesce(spend.n_calls, 0) as n_calls,
    coalesce(spend.n_accepted, 0) as n_accepted,
    coalesce(spend.n_cached, 0) as n_cached,
    coalesce(spend.n_rejected, 0) as n_rejected,
    coalesce(spend.n_failed, 0) as n_failed,
    coalesce(spend.n_skipped, 0) as n_skipped,
    coalesce(spend.n_builds, 0) as n_builds,
    coalesce(spend.tokens_in, 0) as tokens_in,
    coalesce(spend.tokens_out, 0) as tokens_out,
    coalesce(spend.cost_usd, 0.0) as cost_usd,
    coalesce(spend.agent_cost_usd, 0.0) as agent_cost_usd
{%- endmacro %}
