{#- A query for the values of `columns` that occur more than once in `model`, with n_rows: the shared core
    of the primary_key and ranks_contiguous tests. Found in two steps, so that a 100M-row table is grouped
    on one 64-bit hash rather than on every key column: keys whose hash occurs more than once are
    candidates (normally none), and only those are grouped on the real columns, so a hash collision can
    never decide. -#}
{% macro repeated_keys(model, columns) -%}
{%- set key = columns | join(', ') -%}
select {{ key }}, count(*) as n_rows
from {{ model }}
where {{ row_hash(columns) }} in (
    select {{ row_hash(columns) }}
    from {{ model }}
    group by {{ row_hash(columns) }}
    having count(*) > 1
)
group by {{ key }}
having count(*) > 1
{%- endmacro %}
