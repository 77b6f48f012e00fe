select
    cast(scenario_id as varchar) as scenario_id,
    cast(env_id as varchar) as env_id,
    cast(gold_pass as boolean) as gold_pass,
    cast(noop_fail as boolean) as noop_fail,
    cast(deterministic as boolean) as deterministic,
    cast(mutation_kill_rate as double) as mutation_kill_rate,
    cast(n_mutants as bigint) as n_mutants,
    cast(proven as boolean) as proven,
    cast(reason as varchar) as reason,
    cast(shortcuts_fail as boolean) as shortcuts_fail,
    cast(shortcut_rewards_json as varchar) as shortcut_rewards_json,
    cast(alternatives_pass as boolean) as alternatives_pass,
    cast(alternative_rewards_json as varchar) as alternative_rewards_json
from {{ source('warehouse', 'check_selftests') }}
