-- One row per (collection, k, run, question, metric) for every run other than the baseline: the run's value,
-- the baseline's, the difference, and whether the question is a win, tie or loss for the run.
-- Only questions both runs average are paired.

with question_metrics as (
    select * from {{ ref('question_metrics') }}
    where is_averaged
),

long_form as (
    {% for metric in compared_metrics() %}
    select collection_id, run_id, k, question_id, '{{ metric }}' as metric, {{ metric }} as metric_value
    from question_metrics
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

paired as (
    select
        candidate.collection_id,
        candidate.k,
        candidate.run_id,
        baseline.run_id as baseline_run_id,
        candidate.question_id,
        candidate.metric,
        candidate.metric_value as run_value,
        baseline.metric_value as baseline_value,
        candidate.metric_value - baseline.metric_value as difference
    from long_form as candidate
    inner join long_form as baseline
        on candidate.collection_id = baseline.collection_id
        and candidate.k = baseline.k
        and candidate.question_id = baseline.question_id
        and candidate.metric = baseline.metric
    where baseline.run_id = '{{ var("baseline_run_id") }}'
        and candidate.run_id <> baseline.run_id
)

select
    collection_id,
    k,
    run_id,
    baseline_run_id,
    question_id,
    metric,
    run_value,
    baseline_value,
    difference,
    cast(
        case
            when difference > {{ tie_tolerance() }} then 'win'
            when difference < -{{ tie_tolerance() }} then 'loss'
            else 'tie'
        end as varchar
    ) as outcome
from paired
