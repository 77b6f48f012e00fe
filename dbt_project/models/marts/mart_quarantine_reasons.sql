-- Why artifacts are rejected, grouped by the stable head of the reason (reason_kind), so the
-- report can show the top causes rather than thousands of distinct messages.
select
    artifact_type,
    stage,
    reason_kind,
    count(*) as n_artifacts,
    count(*) / sum(count(*)) over (partition by artifact_type) as share_of_type,
    min(reason) as example_reason
from {{ ref('stg_quarantine') }}
group by artifact_type, stage, reason_kind
order by n_artifacts desc, artifact_type, stage, reason_kind
