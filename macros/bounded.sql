{#- `expression` held within [low, high]: for a bounded statistic whose formula can round past its bound (a mean
    recovered from another mean, a difference of rounded sums), where no exact construction is cheap. Null stays
    null (least and greatest skip nulls on DuckDB and Spark). The columns that use it say so in their
    description; tests/python/test_bounds.py checks every declared range. -#}
{% macro clamped(expression, low, high) -%}
    case when ({{ expression }}) is null then null else least(greatest({{ expression }}, {{ low }}), {{ high }}) end
{%- endmacro %}
