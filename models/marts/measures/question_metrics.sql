-- One row per (collection, run, question, k): the measures that have a column of their own here
-- (question_metrics_column in macros/measures.sql), wide, with the counts behind them. Every measure, long:
-- question_measures. Measures of the whole ranking repeat at every k.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('int_run_questions_scaffolded')) }}
),

run_questions as (
    {{ rows_of_runs(ref('int_run_questions_scaffolded')) }}
),

measured as (
    {{ rows_of_runs(ref('int_run_questions_measured')) }}
),

whole_ranking as (
    select * from measured where k is null
),

at_k as (
    select * from measured where k is not null
),

computed_rows as (
    select
        at_k.collection_id,
        at_k.run_id,
        at_k.question_id,
        at_k.k,
        run_questions.n_judged,
        run_questions.n_relevant,
        run_questions.n_retrieved,
        at_k.relevant_retrieved_at_k,
        whole_ranking.first_relevant_rank,
        at_k.dcg,
        at_k.ideal_dcg,
        {%- for measure in measure_registry() if measure.question_metrics_column %}
        {{ 'at_k' if measure.at_k else 'whole_ranking' }}.{{ measure.column }} as {{ measure.question_metrics_column }},
        {%- endfor %}
        run_questions.is_averaged
    from at_k
    inner join whole_ranking
        on at_k.collection_id = whole_ranking.collection_id
        and at_k.run_id = whole_ranking.run_id
        and at_k.question_id = whole_ranking.question_id
    inner join run_questions
        on at_k.collection_id = run_questions.collection_id
        and at_k.run_id = run_questions.run_id
        and at_k.question_id = run_questions.question_id
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
