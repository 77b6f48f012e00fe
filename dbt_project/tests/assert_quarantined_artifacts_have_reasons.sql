-- The warehouse contract: every quarantined artifact has its reason in `quarantine`.
-- Matched on artifact_id alone so that a stage naming its artifact_type differently is still
-- found; a warning, because a missing reason is a bookkeeping gap, not a shipped defect.
-- Dagster shows it as a check of stg_quarantine, where the missing reason belongs.
{{ config(severity='warn', meta={'dagster': {'ref': {'name': 'stg_quarantine'}}}) }}

with quarantined as (
    select 'env_spec' as artifact_type, env_id as artifact_id
    from {{ ref('stg_env_specs') }} where status = 'quarantined'
    union all
    select 'environment', env_id from {{ ref('stg_environments') }} where status = 'quarantined'
    union all
    select 'scenario', scenario_id from {{ ref('stg_scenarios') }} where status = 'quarantined'
)
select q.artifact_type, q.artifact_id
from quarantined as q
where not exists (
    select 1 from {{ ref('stg_quarantine') }} as r where r.artifact_id = q.artifact_id
)
