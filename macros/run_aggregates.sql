{#- What a run's value over a set of questions is, for run_measures (its averaged questions) and run_tag_measures
    (those of one tag): defined here once. -#}

{#- The run's value from the sum of its questions' values (in question_id order) and their count, by the
    measure's aggregation (measure_catalog): trec_eval's `all` line. -#}
{% macro aggregated_value(aggregation, value_sum, n_questions) -%}
    case {{ aggregation }}
        when 'sum' then {{ value_sum }}
        when 'geometric_mean' then exp({{ value_sum }} / {{ n_questions }})
        else {{ value_sum }} / {{ n_questions }}
    end
{%- endmacro %}

{#- The measure's name as a reader sees it: at a relevance level other than 1, a measure that depends on it says
    so, as ir_measures writes it (map(rel=2)). -#}
{% macro measure_label(measure_name, uses_relevance_level, relevance_level) -%}
    case when {{ uses_relevance_level }} and {{ relevance_level }} <> 1
        then concat({{ measure_name }}, '(rel=', cast({{ relevance_level }} as string), ')')
        else {{ measure_name }}
    end
{%- endmacro %}

{#- Holm-Bonferroni within each family (`family`: the columns that make one): of the family's m p-values of
    `test` (<test>_p_value), sorted ascending, the i-th (from 0) becomes min(1, max over j <= i of
    (m - j) * p_j); rows whose p-value is missing get none. One row per row of `tests` with a p-value: its
    `keys` and <test>_p_value_holm. -#}
{% macro holm_adjusted(tests, test, family, keys) -%}
    {%- set partition = family | join(', ') -%}
    select
        {{ keys | join(', ') }},
        least(1.0, max(cast(family_size - family_position as double) * {{ test }}_p_value) over (
            partition by {{ partition }}
            order by family_position
            rows between unbounded preceding and current row
        )) as {{ test }}_p_value_holm
    from (
        select
            *,
            count(*) over (partition by {{ partition }}) as family_size,
            row_number() over (partition by {{ partition }} order by {{ test }}_p_value, run_id) - 1 as family_position
        from {{ tests }}
        where {{ test }}_p_value is not null
    ) as ranked
{%- endmacro %}

{#- A comparison mart: `tests` (the per-run paired tests of run_comparison_tests, over every question or by tag), with
    each test's p-values Holm-adjusted within `family`; `keys` are a row's key. -#}
{% macro comparisons_with_holm(tests, family, keys) -%}
with tests as (
    select * from {{ tests }}
),

{% for test in ['t', 'randomization'] %}
{{ test }}_adjusted as (
    {{ holm_adjusted('tests', test, family, keys) }}
),
{% endfor %}

joined as (
    select
        tests.*,
        t_adjusted.t_p_value_holm,
        randomization_adjusted.randomization_p_value_holm
    from tests
    {%- for test in ['t', 'randomization'] %}
    left join {{ test }}_adjusted
        on {% for key in keys %}tests.{{ key }} = {{ test }}_adjusted.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    {%- endfor %}
)

select
    {%- for key in keys if key != 'measure_name' %}
    {{ key }},
    {%- endfor %}
    measure_name,
    measure,
    k,
    n_questions,
    wins,
    ties,
    losses,
    run_mean,
    baseline_mean,
    mean_difference,
    difference_ci_low,
    difference_ci_high,
    effect_size,
    t_statistic,
    t_p_value,
    randomization_p_value,
    n_permutations,
    is_exact_randomization,
    cast(t_p_value_holm as double) as t_p_value_holm,
    cast(randomization_p_value_holm as double) as randomization_p_value_holm
from joined
{%- endmacro %}
