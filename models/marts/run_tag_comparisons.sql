-- One row per (collection, run, baseline, tag, measure name): run_comparisons over the questions of one tag
-- (int_run_tag_comparison_tests), with each test's p-values adjusted by Holm-Bonferroni within one family: the
-- runs compared with the same baseline on the same measure name over the same tag. Tags are not pooled: each
-- slice is its own question. Rebuilt whole from the per-run tests, as run_comparisons.

with tests as (
    select * from {{ ref('int_run_tag_comparison_tests') }}
),

{% for test in ['t', 'randomization'] %}
{{ test }}_adjusted as (
    {{ holm_adjusted('tests', test, ['collection_id', 'baseline_run_id', 'tag', 'measure_name'],
                     ['collection_id', 'run_id', 'baseline_run_id', 'tag', 'measure_name']) }}
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
        and tests.tag = {{ test }}_adjusted.tag
        and tests.measure_name = {{ test }}_adjusted.measure_name
    {%- endfor %}
)

select
    collection_id,
    run_id,
    baseline_run_id,
    tag,
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
