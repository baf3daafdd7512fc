{#- Golden values as data. `expected` is a long table: the `keys` columns, `metric` (a column of the
    model), `expected_value` and `tolerance`. Fails with every expected row whose model value is missing
    or differs by more than its tolerance; `metrics` lists the model columns that may be checked. -#}
{% test matches_expected_values(model, expected, keys, metrics) %}
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
left join actual
    on {% for key in keys %}expected.{{ key }} = actual.{{ key }} and {% endfor %}expected.metric = actual.metric
where actual.actual_value is null
    or abs(actual.actual_value - expected.expected_value) > expected.tolerance
{% endtest %}
