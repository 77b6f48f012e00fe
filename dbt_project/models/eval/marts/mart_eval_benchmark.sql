-- How each model does on each slice of a dataset's published tasks: success rate and mean
-- reward per model x archetype x task kind x difficulty tier x split, over the episodes that
-- count (int_eval_episodes: every attempt, the latest of each). origin (synthesized or
-- foreign) follows from the archetype: every foreign class's archetype is 'foreign'.
select
    manifest_sha256,
    arg_max(dataset_id, finished_at) as dataset_id,
    model,
    origin,
    archetype,
    kind,
    tier,
    split,
    count(distinct scenario_id) as n_tasks,
    count(*) as n_episodes,
    count(*) filter (where success) as n_successes,
    avg(case when success then 1.0 else 0.0 end) as success_rate,
    avg(reward) as mean_reward,
    count(*) filter (where errored) as n_errors
from {{ ref('int_eval_episodes') }}
group by manifest_sha256, model, origin, archetype, kind, tier, split
order by manifest_sha256, model, origin, archetype, kind, tier, split
