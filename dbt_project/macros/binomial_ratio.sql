{#- C(a, k) / C(n, k) for whole numbers 0 <= a <= n and 1 <= k <= n, as the product of the k
    factors (a - i) / (n - i), i = 0 .. k-1 (DuckDB has no binomial): 0 when a < k (the
    factor i = a is 0). pass^k of a task with c successes in n attempts is
    binomial_ratio(c, n, k); pass@k is 1 - binomial_ratio(n - c, n, k). -#}
{% macro binomial_ratio(a, n, k) -%}
list_product(list_transform(range({{ k }}), lambda i: ({{ a }} - i)::double / ({{ n }} - i)))
{%- endmacro %}
