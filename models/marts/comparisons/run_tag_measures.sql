-- One row per (collection, run, tag, measure name): the run's value of every measure over the questions of one
-- tag that it averages (a slice: "how do we do on pricing questions?"), aggregated as run_measures aggregates all
-- of them, with the 95% bootstrap interval over the tag's questions. Only collections with tags have rows.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('question_measures')) }}
),

question_measures as (
    select * from ({{ rows_of_runs(ref('question_measures')) }}) as planned_rows
    where is_averaged
),

tags as (
    select * from {{ ref('int_question_tags_unioned') }}
),

catalog as (
    select * from {{ ref('measure_catalog') }}
),

intervals as (
    select * from ({{ rows_of_runs(ref('run_measure_intervals')) }}) as interval_rows where tag is not null
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

totals as (
    select
        question_measures.collection_id,
        question_measures.run_id,
        tags.tag,
        question_measures.measure,
        question_measures.k,
        question_measures.measure_name,
        count(*) as n_questions,
        {{ ordered_sum('question_measures.value', 'question_measures.question_id') }} as value_sum
    from question_measures
    inner join tags
        on question_measures.collection_id = tags.collection_id
        and question_measures.question_id = tags.question_id
    group by
        question_measures.collection_id, question_measures.run_id, tags.tag, question_measures.measure,
        question_measures.k, question_measures.measure_name
),

computed_rows as (
    select
        totals.collection_id,
        totals.run_id,
        cast(totals.tag as string) as tag,
        cast(totals.measure as string) as measure,
        cast(totals.k as integer) as k,
        cast(totals.measure_name as string) as measure_name,
        cast({{ measure_label('totals.measure_name', 'catalog.uses_relevance_level', 'settings.relevance_level') }}
            as string) as measure_label,
        cast(catalog.aggregation as string) as aggregation,
        cast(totals.n_questions as integer) as n_questions,
        cast({{ aggregated_value('catalog.aggregation', 'totals.value_sum', 'totals.n_questions') }} as double) as value,
        cast(intervals.ci_low as double) as ci_low,
        cast(intervals.ci_high as double) as ci_high,
        cast(settings.evaluation_settings as string) as evaluation_settings
    from totals
    inner join catalog
        on totals.measure = catalog.measure
    inner join settings
        on totals.collection_id = settings.collection_id
    left join intervals
        on totals.collection_id = intervals.collection_id
        and totals.run_id = intervals.run_id
        and totals.tag = intervals.tag
        and totals.measure_name = intervals.measure_name
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
