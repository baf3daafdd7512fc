-- One row per (collection, run, baseline, measure name): paired significance of the run against the baseline
-- (int_run_comparison_tests: t-test, randomization test, effect size), with each test's p-values adjusted by
-- Holm-Bonferroni within one family: the runs compared with the same baseline on the same measure name (one
-- collection, one measure, one k); measures and cutoffs are not pooled (macros/run_aggregates.sql has Holm's
-- rule). A run added to a family changes its neighbours' adjusted values, so this mart is rebuilt whole
-- (a few rows per run) from the per-run tests.

with tests as (
    select * from {{ ref('int_run_comparison_tests') }}
),

{% for test in ['t', 'randomization'] %}
{{ test }}_adjusted as (
    {{ holm_adjusted('tests', test, ['collection_id', 'baseline_run_id', 'measure_name'],
                     ['collection_id', 'run_id', 'baseline_run_id', 'measure_name']) }}
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
