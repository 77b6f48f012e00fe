-- Mean mutation kill rate of published scenarios per archetype and answer kind ('state':
-- the checks read only the state; 'reply': they also read the final reply), with 'all'
-- rows for every archetype, every kind and overall. A state task's mutants differ in the
-- state; a reply task's mutants may differ only in the reply, so the two are reported apart.
with answer_kinds as (
    {{ task_answer_kinds(ref('stg_checks')) }}
),

published as (
    select
        coalesce(e.archetype, 'none') as archetype,
        coalesce(k.task_answer_kind, 'state') as task_answer_kind,
        t.mutation_kill_rate,
        t.n_mutants
    from {{ ref('stg_scenarios') }} as s
    left join {{ ref('stg_environments') }} as e using (env_id)
    left join {{ ref('stg_check_selftests') }} as t using (scenario_id)
    left join answer_kinds as k using (scenario_id)
    where s.status = 'published'
)

select
    case when grouping(archetype) = 1 then 'all' else archetype end as archetype,
    case when grouping(task_answer_kind) = 1 then 'all' else task_answer_kind end
        as task_answer_kind,
    count(*) as n_published,
    count(mutation_kill_rate) as n_rated,
    sum(n_mutants) as n_mutants,
    avg(mutation_kill_rate) as mean_mutation_kill_rate,
    min(mutation_kill_rate) as min_mutation_kill_rate
from published
group by grouping sets ((archetype, task_answer_kind), (archetype), (task_answer_kind), ())
order by grouping(archetype), archetype, grouping(task_answer_kind), task_answer_kind
