{#- Policies that measure the task, not an agent: the oracle replays the gold chain (is the
    task solvable?); the baselines noop (does nothing), refuse_always (refuses) and
    wrong_record (acts on a decoy record) must earn 0 (do the checks catch them?).
    Difficulty and agent success rates leave them out. -#}
{% macro control_policies() -%}
('oracle', 'noop', 'refuse_always', 'wrong_record')
{%- endmacro %}
