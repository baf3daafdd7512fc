-- One row per (collection, run, baseline, measure name): paired significance of the run against the baseline
-- (int_run_comparison_tests: t-test, randomization test, effect size), with each test's p-values adjusted by
-- Holm-Bonferroni within one family: the runs compared with the same baseline on the same measure name (one
-- collection, one measure, one k); measures and cutoffs are not pooled. Holm: in the family's m p-values,
-- sorted ascending, the i-th (from 0) becomes min(1, max over j <= i of (m - j) * p_j); missing ones stay
-- missing. A run added to a family changes its neighbours' adjusted values, so this mart is rebuilt whole
-- (a few rows per run) from the per-run tests.

with tests as (
    select * from {{ ref('int_run_comparison_tests') }}
),

{% for test in ['t', 'randomization'] %}
{{ test }}_adjusted as (
    select
        collection_id,
        run_id,
        baseline_run_id,
        measure_name,
        least(1.0, max(cast(family_size - family_position as double) * {{ test }}_p_value) over (
            partition by collection_id, baseline_run_id, measure_name
            order by family_position
            rows between unbounded preceding and current row
        )) as {{ test }}_p_value_holm
    from (
        select
            *,
            count(*) over (partition by collection_id, baseline_run_id, measure_name) as family_size,
            row_number() over (
                partition by collection_id, baseline_run_id, measure_name order by {{ test }}_p_value, run_id
            ) - 1 as family_position
        from tests
        where {{ test }}_p_value is not null
    ) as ranked
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
        on tests.collection_id = {{ test }}_adjusted.collection_id
        and tests.run_id = {{ test }}_adjusted.run_id
        and tests.baseline_run_id = {{ test }}_adjusted.baseline_run_id
        and tests.measure_name = {{ test }}_adjusted.measure_name
    {%- endfor %}
)

select
    collection_id,
    run_id,
    baseline_run_id,
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
    effect_size,
    t_statistic,
    t_p_value,
    randomization_p_value,
    n_permutations,
    is_exact_randomization,
    cast(t_p_value_holm as double) as t_p_value_holm,
    cast(randomization_p_value_holm as double) as randomization_p_value_holm
from joined
