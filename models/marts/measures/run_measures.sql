-- One row per (collection, run, measure[, k]): the run's value of every measure of the registry over its
-- averaged questions (the collection's averaging), with a 95% bootstrap interval, and the settings it was computed with.
-- Aggregations as trec_eval's `all` line: the mean, the sum (num_ret, num_rel, num_rel_ret), or the geometric
-- mean (gm_map: exp of the mean of the per-question ln(max(AP, 0.00001))). Sums run in question_id order.
-- A collection's measure instances (int_measure_instances) are rows like any measure, labelled by their name.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('question_measures')) }}
),

question_measures as (
    select * from ({{ rows_of_runs(ref('question_measures')) }}) as planned_rows
    where is_averaged
),

catalog as (
    select * from {{ ref('measure_catalog') }}
),

intervals as (
    select * from ({{ rows_of_runs(ref('run_measure_intervals')) }}) as interval_rows where tag is null
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

instances as (
    select distinct collection_id, measure_name, trec_eval_name
    from {{ ref('int_measure_instances') }}
),

totals as (
    select
        collection_id,
        run_id,
        measure,
        k,
        measure_name,
        count(*) as n_questions,
        {{ ordered_sum('value', 'question_id') }} as value_sum
    from question_measures
    group by collection_id, run_id, measure, k, measure_name
),

aggregated as (
    select
        totals.collection_id,
        totals.run_id,
        totals.measure,
        totals.k,
        totals.measure_name,
        catalog.aggregation,
        catalog.reference,
        catalog.uses_relevance_level,
        totals.n_questions,
        {{ aggregated_value('catalog.aggregation', 'totals.value_sum', 'totals.n_questions') }} as value
    from totals
    inner join catalog
        on totals.measure = catalog.measure
),

computed_rows as (
    select
        aggregated.collection_id,
        aggregated.run_id,
        cast(aggregated.measure as string) as measure,
        cast(aggregated.k as integer) as k,
        cast(aggregated.measure_name as string) as measure_name,
        cast(case when instances.measure_name is not null then aggregated.measure_name else
            {{ measure_label('aggregated.measure_name', 'aggregated.uses_relevance_level', 'settings.relevance_level') }}
            end as string) as measure_label,
        -- an instance's from int_measure_instances; a default measure's is its name if trec_eval's
        cast(case
            when instances.measure_name is not null then instances.trec_eval_name
            when aggregated.reference = 'trec_eval' then aggregated.measure_name
        end as string) as trec_eval_name,
        cast(aggregated.aggregation as string) as aggregation,
        cast(aggregated.n_questions as integer) as n_questions,
        cast(aggregated.value as double) as value,
        cast(intervals.ci_low as double) as ci_low,
        cast(intervals.ci_high as double) as ci_high,
        cast(settings.evaluation_settings as string) as evaluation_settings
    from aggregated
    inner join settings
        on aggregated.collection_id = settings.collection_id
    left join instances
        on aggregated.collection_id = instances.collection_id
        and aggregated.measure_name = instances.measure_name
    left join intervals
        on aggregated.collection_id = intervals.collection_id
        and aggregated.run_id = intervals.run_id
        and aggregated.measure_name = intervals.measure_name
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
