{#- `columns` together are the model's key: never null, and unique together. Fails with one row per key
    value that has a null part or occurs more than once (repeats found through a hash: see repeated_keys). -#}
{% test primary_key(model, columns) %}
with repeated as (
    {{ repeated_keys(model, columns) }}
),

null_keys as (
    select {{ columns | join(', ') }}, count(*) as n_rows
    from {{ model }}
    where {% for column in columns %}{{ column }} is null{% if not loop.last %} or {% endif %}{% endfor %}
    group by {{ columns | join(', ') }}
)

select * from repeated
union all
select * from null_keys
{% endtest %}
