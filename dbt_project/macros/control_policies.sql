{#- Policies that measure the task, not an agent: the oracle replays the gold chain (is the
    task solvable?) and noop does nothing (do the checks catch it?). Difficulty and agent
    success rates leave them out. -#}
{% macro control_policies() -%}
('oracle', 'noop')
{%- endmacro %}
