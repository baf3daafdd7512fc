{#- (rows in the largest group, number of groups) of `model` grouped by `columns`, queried when the test or
    model that calls it runs; (1, 1) while dbt only parses, and for an empty model. -#}
{% macro group_sizes(model, columns) -%}
{%- if not execute -%}
    {{ return((1, 1)) }}
{%- endif -%}
{%- set query -%}
    select coalesce(max(n_rows), 1) as largest_group, greatest(count(*), 1) as n_groups
    from (select count(*) as n_rows from {{ model }} group by {{ columns | join(', ') }}) as group_counts
{%- endset -%}
{%- set row = run_query(query).rows[0] -%}
{{ return((row[0] | int, row[1] | int)) }}
{%- endmacro %}
