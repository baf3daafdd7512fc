{#- Golden values as data. `expected` is a long table: the `keys` columns, `metric` (a column of the
    model), `expected_value` and `tolerance`. Fails with every expected row whose model value is missing
    or differs by more than its tolerance; `metrics` lists the model columns that may be checked. With
    `present_runs` (a relation of collection_id, run_id), only the expected rows of the runs it lists are
    checked: the lesson's golden values apply to a warehouse that holds the lesson's run. -#}
{% test matches_expected_values(model, expected, keys, metrics, present_runs=none) %}
with actual as (
    {% for metric in metrics %}
    select
        {% for key in keys %}{{ key }}, {% endfor %}
        '{{ metric }}' as metric,
        cast({{ metric }} as double) as actual_value
    from {{ model }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select
    {% for key in keys %}expected.{{ key }}, {% endfor %}
    expected.metric,
    expected.expected_value,
    expected.tolerance,
    actual.actual_value
from {{ expected }} as expected
{%- if present_runs %}
inner join (select distinct collection_id, run_id from {{ present_runs }}) as present
    on expected.collection_id = present.collection_id and expected.run_id = present.run_id
{%- endif %}
left join actual
    on {% for key in keys %}expected.{{ key }} = actual.{{ key }} and {% endfor %}expected.metric = actual.metric
where actual.actual_value is null
    or abs(actual.actual_value - expected.expected_value) > expected.tolerance
{% endtest %}
