-- The failure taxonomy (synthesis/evaluation/taxonomy.py) per model x archetype: how many of
-- the episodes that count ended in each class ('none': succeeded), their share of the
-- model's episodes in the archetype, and of its failed ones (null for 'none').
with counted as (
    select
        manifest_sha256,
        arg_max(dataset_id, finished_at) as dataset_id,
        model,
        archetype,
        failure,
        count(*) as n_episodes
    from {{ ref('int_eval_episodes') }}
    group by manifest_sha256, model, archetype, failure
)

select
    manifest_sha256,
    dataset_id,
    model,
    archetype,
    failure,
    n_episodes,
    n_episodes / sum(n_episodes) over (partition by manifest_sha256, model, archetype)
        as share_of_episodes,
    case
        when failure != 'none'
            then n_episodes / sum(n_episodes) filter (where failure != 'none') over (
                partition by manifest_sha256, model, archetype
            )
    end as share_of_failures
from counted
order by manifest_sha256, model, archetype, n_episodes desc, failure
