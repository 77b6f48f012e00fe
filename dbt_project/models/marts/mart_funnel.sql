-- The manufacturing funnel, one row per stage in pipeline order, each stage counting one unit:
--
--   topic        topics → env_specs
--   environment  environments_generated → environments_accepted
--   scenario     scenarios_generated → scenarios_proven → scenarios_published
--   check        checks
--   trajectory   trajectories → trajectories_successful
--
-- `conversion` is n_items over n_base, the count of the same unit at the stage before, so it
-- never exceeds 1 (a dbt test holds it there); `cumulative_conversion` is n_items over the base
-- of the unit's first conversion. Where the unit changes there is no conversion: `fan_out` is
-- n_items per item of the stage named in `fan_out_of` (scenarios per accepted environment,
-- checks per generated scenario, trajectories per published scenario), and may exceed 1.
--
-- `n_quarantined` counts the items lost on the way into a stage, each once, with a reason in
-- quarantine: so n_base - n_items = n_quarantined wherever nothing is lost without a reason.
--
-- Two places where a stage may legitimately outnumber the stage before, designed around:
-- * environments_generated starts its own unit. Foreign classes (`--envs`, a folder holding
--   many classes, catalogue topics naming a `source`) become environments without a spec, so
--   environments can outnumber specs and topics; a rate against either would exceed 1.
-- * env_specs divides by the topics that ask for a spec (those naming an archetype): a topic
--   naming a `source` gets none by design, and counting it would read as a loss.
with

topics as (select * from {{ ref('stg_topics') }}),
specs as (select * from {{ ref('stg_env_specs') }}),
environments as (select * from {{ ref('stg_environments') }}),
-- stg_check_selftests holds one row per self-tested scenario (unique scenario_id, tested in
-- the staging yml); distinct keeps the count in scenarios even if that ever broke.
selftests as (select * from {{ ref('stg_check_selftests') }}),
scenarios as (
    select s.scenario_id, s.status, coalesce(t.proven, false) as proven
    from {{ ref('stg_scenarios') }} as s
    left join selftests as t using (scenario_id)
),
trajectories as (select * from {{ ref('stg_trajectories') }}),
quarantine as (select * from {{ ref('stg_quarantine') }}),

counts as (
    select
        (select count(*) from topics) as topics,
        (select count(*) from topics where coalesce(archetype, '') <> '') as topics_for_spec,
        (select count(*) from specs) as specs,
        (select count(*) from quarantine where artifact_type = 'env_spec') as specs_rejected,
        (select count(*) from environments) as envs,
        -- Requested but never built: an unresolved source, a run that failed in this build.
        (select count(*) from quarantine as q where artifact_type = 'environment'
            and not exists (select 1 from environments as e where e.env_id = q.artifact_id))
            as envs_lost,
        (select count(*) from environments where status = 'accepted') as envs_accepted,
        (select count(*) from environments where status = 'quarantined') as envs_rejected,
        (select count(*) from scenarios) as scenarios,
        (select count(*) from quarantine as q where artifact_type = 'scenario'
            and not exists (select 1 from scenarios as s where s.scenario_id = q.artifact_id))
            as scenarios_lost,
        (select count(distinct scenario_id) from selftests where proven) as proven,
        (select count(*) from scenarios where status = 'quarantined' and not proven)
            as unproven_rejected,
        (select count(*) from scenarios where status = 'published') as published,
        (select count(*) from scenarios where status = 'quarantined' and proven)
            as proven_rejected,
        (select count(*) from {{ ref('stg_checks') }}) as checks,
        (select count(*) from trajectories) as trajectories,
        -- A rollout that could not be played (an LLM endpoint that did not answer) has no row.
        (select count(*) from quarantine as q where artifact_type = 'trajectory'
            and not exists (select 1 from trajectories as t where t.traj_id = q.artifact_id))
            as trajectories_lost,
        (select count(*) from trajectories where success) as successful
),

stages as (
    select 1 as stage_order, 'topics' as stage, 'topic' as unit, topics as n_items,
        cast(null as bigint) as n_quarantined, cast(null as bigint) as n_base,
        cast(null as bigint) as n_unit_base, cast(null as varchar) as fan_out_of
    from counts
    union all
    select 2, 'env_specs', 'topic', specs, specs_rejected, topics_for_spec, topics_for_spec,
        null
    from counts
    union all
    select 3, 'environments_generated', 'environment', envs, envs_lost, null, null, null
    from counts
    union all
    select 4, 'environments_accepted', 'environment', envs_accepted, envs_rejected, envs, envs,
        null
    from counts
    union all
    select 5, 'scenarios_generated', 'scenario', scenarios, scenarios_lost, null, null,
        'environments_accepted'
    from counts
    union all
    -- Proven precedes published: the self-test gate is what lets a scenario ship. A scenario
    -- its gold run rejected is never self-tested; it is lost here too.
    select 6, 'scenarios_proven', 'scenario', proven, unproven_rejected, scenarios, scenarios,
        null
    from counts
    union all
    select 7, 'scenarios_published', 'scenario', published, proven_rejected, proven, scenarios,
        null
    from counts
    union all
    -- Checks are a fan-out of scenarios (every check grades one), not a stage they pass.
    select 8, 'checks', 'check', checks, null, null, null, 'scenarios_generated'
    from counts
    union all
    -- Trajectories are played on published scenarios only (oracle, do-nothing, an LLM).
    select 9, 'trajectories', 'trajectory', trajectories, trajectories_lost, null, null,
        'scenarios_published'
    from counts
    union all
    -- A failed episode is not quarantined: it is a trajectory that did not succeed.
    select 10, 'trajectories_successful', 'trajectory', successful, null, trajectories,
        trajectories, null
    from counts
)

select
    s.stage_order,
    s.stage,
    s.unit,
    s.n_items,
    s.n_quarantined,
    s.n_base,
    case when s.n_base > 0 then s.n_items / s.n_base end as conversion,
    case when s.n_unit_base > 0 then s.n_items / s.n_unit_base end as cumulative_conversion,
    s.fan_out_of,
    case when f.n_items > 0 then s.n_items / f.n_items end as fan_out
from stages as s
left join stages as f on f.stage = s.fan_out_of
order by s.stage_order
