-- pass^k and pass@k per model and dataset for k = 1 .. the most attempts any task has
-- (metrics.py says what they are): per task with n >= k attempts, c of them successful,
-- pass^k = C(c, k) / C(n, k) (all k of k attempts drawn from the n succeed) and
-- pass@k = 1 - C(n - c, k) / C(n, k) (at least one does); each the mean over those tasks.
with tasks as (
    select
        manifest_sha256,
        model,
        scenario_id,
        count(*) as n_attempts,
        count(*) filter (where success) as n_successes,
        max(finished_at) as finished_at,
        arg_max(dataset_id, finished_at) as dataset_id
    from {{ ref('int_eval_episodes') }}
    group by manifest_sha256, model, scenario_id
),

ks as (
    select
        manifest_sha256,
        model,
        arg_max(dataset_id, finished_at) as dataset_id,
        max(n_attempts) as max_attempts,
        unnest(range(1, max(n_attempts) + 1)) as k
    from tasks
    group by manifest_sha256, model
)

select
    ks.manifest_sha256,
    ks.dataset_id,
    ks.model,
    ks.k,
    count(*) as n_tasks,
    cast(sum(t.n_attempts) as bigint) as n_episodes,
    avg({{ binomial_ratio('t.n_successes', 't.n_attempts', 'ks.k') }}) as pass_hat_k,
    avg(1 - {{ binomial_ratio('t.n_attempts - t.n_successes', 't.n_attempts', 'ks.k') }})
        as pass_at_k
from ks
join tasks as t
    on t.manifest_sha256 = ks.manifest_sha256
    and t.model = ks.model
    and t.n_attempts >= ks.k
group by ks.manifest_sha256, ks.dataset_id, ks.model, ks.k
order by ks.manifest_sha256, ks.model, ks.k
