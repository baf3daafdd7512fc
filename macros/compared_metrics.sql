{#- The per-question measures that comparisons and significance tests look at (question_metrics columns). -#}
{% macro compared_metrics() -%}
    {{ return(['recall', 'precision', 'ndcg', 'hit', 'reciprocal_rank', 'average_precision', 'r_precision']) }}
{%- endmacro %}

{#- Differences this small are float noise, not a win or a loss. -#}
{% macro tie_tolerance() -%}
    1e-12
{%- endmacro %}
