{#- Policies that measure the task, not an agent: the oracle replays the gold chain (is the
    task solvable?); the baselines noop (does nothing), refuse_always (refuses) and
    wrong_record (acts on a decoy record) must earn 0 (do the checks catch them?); the
    guesser's seeded attempts (synthesis/rollouts/guesser.py) rate each task's difficulty.
    Agent success rates leave them out: they describe agents under test, and a scripted
    probe's rate would make every offline build look as if an agent had played. -#}
{% macro control_policies() -%}
('oracle', 'noop', 'refuse_always', 'wrong_record', 'guesser')
{%- endmacro %}
