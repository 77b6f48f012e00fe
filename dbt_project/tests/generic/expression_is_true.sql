{#- Rows where a boolean SQL expression over the model's columns is not true (false or null);
    dbt_utils has one, but hub packages need the network. -#}
{% test expression_is_true(model, expression) %}
select *
from {{ model }}
where not coalesce(({{ expression }}), false)
{% endtest %}
