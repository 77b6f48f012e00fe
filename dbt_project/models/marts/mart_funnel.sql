-- The manufacturing funnel in pipeline order. `conversion` is n_items over the previous
-- stage's n_items; where the unit changes (environment → scenario → check → trajectory) it
-- is a fan-out ratio, e.g. checks per generated scenario, and can exceed 1.
with stages as (
    select 1 as stage_order, 'topics' as stage, 'topic' as unit,
        (select count(*) from {{ ref('stg_topics') }}) as n_items,
        cast(null as bigint) as n_quarantined
    union all
    -- A topic whose spec fails validation never becomes an env_specs row; its reason is in
    -- quarantine, which is where its count comes from.
    select 2, 'env_specs', 'env_spec',
        (select count(*) from {{ ref('stg_env_specs') }}),
        (select count(*) from {{ ref('stg_quarantine') }} where artifact_type = 'env_spec')
    union all
    select 3, 'environments_generated', 'environment',
        (select count(*) from {{ ref('stg_environments') }}),
        (select count(*) from {{ ref('stg_environments') }} where status = 'quarantined')
    union all
    select 4, 'environments_accepted', 'environment',
        (select count(*) from {{ ref('stg_environments') }} where status = 'accepted'),
        null
    union all
    select 5, 'scenarios_generated', 'scenario',
        (select count(*) from {{ ref('stg_scenarios') }}),
        (select count(*) from {{ ref('stg_scenarios') }} where status = 'quarantined')
    union all
    select 6, 'checks', 'check',
        (select count(*) from {{ ref('stg_checks') }}),
        null
    union all
    -- Proven precedes published: the self-test gate is what lets a scenario ship.
    select 7, 'scenarios_proven', 'scenario',
        (select count(*) from {{ ref('stg_check_selftests') }} where proven),
        (select count(*) from {{ ref('stg_check_selftests') }} where not proven)
    union all
    select 8, 'scenarios_published', 'scenario',
        (select count(*) from {{ ref('stg_scenarios') }} where status = 'published'),
        null
    union all
    select 9, 'trajectories', 'trajectory',
        (select count(*) from {{ ref('stg_trajectories') }}),
        null
    union all
    select 10, 'trajectories_successful', 'trajectory',
        (select count(*) from {{ ref('stg_trajectories') }} where success),
        null
)

select
    stage_order,
    stage,
    unit,
    n_items,
    n_quarantined,
    lag(n_items) over (order by stage_order) as n_previous,
    case
        when lag(n_items) over (order by stage_order) > 0
            then n_items / lag(n_items) over (order by stage_order)
    end as conversion
from stages
order by stage_order
