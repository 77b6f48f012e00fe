select
    cast(run_id as varchar) as run_id,
    cast(model as varchar) as model,
    cast(dataset_id as varchar) as dataset_id,
    cast(manifest_sha256 as varchar) as manifest_sha256,
    cast(settings_sha256 as varchar) as settings_sha256,
    cast(split as varchar) as split,
    cast(attempts as integer) as attempts,
    cast(n_tasks as integer) as n_tasks,
    cast(n_episodes as integer) as n_episodes,
    cast(n_played as integer) as n_played,
    cast(n_skipped as integer) as n_skipped,
    cast(n_errors as integer) as n_errors,
    cast(status as varchar) as status,
    cast(stop_reason as varchar) as stop_reason,
    cast(started_at as timestamptz) as started_at,
    cast(finished_at as timestamptz) as finished_at
from {{ source('evals', 'eval_runs') }}
