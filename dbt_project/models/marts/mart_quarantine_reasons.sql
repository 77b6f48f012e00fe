-- Why artifacts are rejected, grouped by the stable head of the reason (reason_kind), so the
-- report can show the top causes rather than thousands of distinct messages. Each group names
-- two examples with their full reason: the smallest artifact ids, so the choice is the same
-- in every build of the same inputs.
with ranked as (
    select
        *,
        row_number() over (
            partition by artifact_type, stage, reason_kind order by artifact_id, reason
        ) as example_rank
    from {{ ref('stg_quarantine') }}
)

select
    artifact_type,
    stage,
    reason_kind,
    count(*) as n_artifacts,
    count(*) / sum(count(*)) over (partition by artifact_type) as share_of_type,
    max(artifact_id) filter (where example_rank = 1) as example_artifact_id,
    max(reason) filter (where example_rank = 1) as example_reason,
    max(artifact_id) filter (where example_rank = 2) as example_2_artifact_id,
    max(reason) filter (where example_rank = 2) as example_2_reason
from ranked
group by artifact_type, stage, reason_kind
order by n_artifacts desc, artifact_type, stage, reason_kind
