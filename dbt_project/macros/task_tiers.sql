{#- A task's final tier: its structural tier (synthesis/tasks/difficulty.py `tier`) moved one
    band easier when every one of the guesser's attempts solved it, one band harder when
    none did, unchanged with mixed results or no attempts. The same rule as
    `synthesis.tasks.difficulty.final_tier`, which the training shards use; a test holds
    the two together. -#}
{% macro final_tier(structural, attempts, solved) -%}
case
    when {{ structural }} is null then null
    when {{ attempts }} > 0 and {{ solved }} = {{ attempts }} then
        case {{ structural }}
            when 'expert' then 'hard'
            when 'hard' then 'medium'
            else 'easy'
        end
    when {{ attempts }} > 0 and {{ solved }} = 0 then
        case {{ structural }}
            when 'easy' then 'medium'
            when 'medium' then 'hard'
            else 'expert'
        end
    else {{ structural }}
end
{%- endmacro %}

{#- One row per scenario: 'reply' when its checks include a reply check (the final reply must
    state a looked-up value, or must not state a decoy's), else 'state' (its checks read only
    the state). `checks` is ref('stg_checks'). -#}
{% macro task_answer_kinds(checks) -%}
select
    scenario_id,
    case
        when bool_or(json_extract_string(spec_json, '$.type') in ('reply_contains', 'reply_excludes'))
            then 'reply'
        else 'state'
    end as task_answer_kind
from {{ checks }}
group by scenario_id
{%- endmacro %}
