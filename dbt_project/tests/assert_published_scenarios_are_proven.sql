-- A task ships only when its checks are proven (gold passes, the do-nothing agent
-- fails, answers are deterministic, every shortcut earns 0, every correct alternative
-- earns 1). Any row here is a published scenario that is not.
-- Dagster shows it as a check of stg_scenarios (it reads two models, so it must be told which).
{{ config(meta={'dagster': {'ref': {'name': 'stg_scenarios'}}}) }}
select
    s.scenario_id,
    t.gold_pass,
    t.noop_fail,
    t.deterministic,
    t.shortcuts_fail,
    t.alternatives_pass
from {{ ref('stg_scenarios') }} as s
left join {{ ref('stg_check_selftests') }} as t using (scenario_id)
where s.status = 'published'
  and not coalesce(
    t.gold_pass and t.noop_fail and t.deterministic and t.shortcuts_fail and t.alternatives_pass,
    false
  )
