{#- `columns` together are the model's key: never null, and unique together. Fails with one row per key
    value that has a null part or occurs more than once. Repeats are found in two steps, so that a
    100M-row table is grouped on one 64-bit hash rather than on every key column: keys whose hash occurs
    more than once are candidates (normally none), and only those are grouped on the real columns, so a
    hash collision can never fail the test. -#}
{% test primary_key(model, columns) %}
{%- set key = columns | join(', ') -%}
with repeated_hashes as (
    select {{ row_hash(columns) }} as key_hash
    from {{ model }}
    group by {{ row_hash(columns) }}
    having count(*) > 1
),

repeated_keys as (
    select {{ key }}, count(*) as n_rows
    from {{ model }}
    where {{ row_hash(columns) }} in (select key_hash from repeated_hashes)
    group by {{ key }}
    having count(*) > 1
),

null_keys as (
    select {{ key }}, count(*) as n_rows
    from {{ model }}
    where {% for column in columns %}{{ column }} is null{% if not loop.last %} or {% endif %}{% endfor %}
    group by {{ key }}
)

select * from repeated_keys
union all
select * from null_keys
{% endtest %}
