-- One row per (collection, automatic judge's qrels version, bootstrap resample, measure name, run) for the measures
-- the comparison marts compare: the run's place on the pairs both graded, with the judge's grades and with
-- people's (int_judge_question_measures). Resample 0 is the questions as they are; 1, 2, ... the bootstrap's
-- (int_judge_question_resamples), each ranking the runs by their totals over the questions it drew. What
-- judge_leaderboard_agreement compares, kept as a table: on Spark, a CTE read by each of its comparisons was
-- planned again for each one (the optimizer ran out of memory).

with question_values as (
    select * from {{ ref('int_judge_question_measures') }}
),

-- resample 0 is the questions as they are; 1, 2, ... the bootstrap's
samples as (
    select distinct collection_id, qrels_version, 0 as resample, question_id, 1 as n_draws
    from question_values
    union all
    select collection_id, qrels_version, resample, question_id, n_draws
    from {{ ref('int_judge_question_resamples') }}
),

-- each run's total over the questions drawn (its mean times the number of questions: the same order), each value
-- in units of 1e-12 (the values are in [0, 1]): integer sums are exact in any order, so the leaderboards and
-- their ties are the same on every run and engine, and the bootstrap's millions of terms need no ordered sum
totals as (
    select
        samples.collection_id,
        samples.qrels_version,
        samples.resample,
        question_values.measure_name,
        question_values.run_id,
        question_values.labels,
        sum(samples.n_draws * cast(round(question_values.value * 1e12) as bigint)) as total
    from samples
    inner join question_values
        on samples.collection_id = question_values.collection_id
        and samples.qrels_version = question_values.qrels_version
        and samples.question_id = question_values.question_id
    group by samples.collection_id, samples.qrels_version, samples.resample, question_values.measure_name,
        question_values.run_id, question_values.labels
),

paired as (
    select
        collection_id,
        qrels_version,
        resample,
        measure_name,
        run_id,
        max(case when labels = 'judge' then total end) as value_from,
        max(case when labels = 'people' then total end) as value_to
    from totals
    group by collection_id, qrels_version, resample, measure_name, run_id
),

leaderboards as (
    select
        *,
        row_number() over (
            partition by collection_id, qrels_version, resample, measure_name order by value_from desc, run_id
        ) as rank_from,
        row_number() over (
            partition by collection_id, qrels_version, resample, measure_name order by value_to desc, run_id
        ) as rank_to
    from paired
)

select
    cast(collection_id as string) as collection_id,
    cast(qrels_version as integer) as qrels_version,
    cast(resample as integer) as resample,
    cast(measure_name as string) as measure_name,
    cast(run_id as string) as run_id,
    value_from,
    value_to,
    cast(rank_from as integer) as rank_from,
    cast(rank_to as integer) as rank_to
from leaderboards
