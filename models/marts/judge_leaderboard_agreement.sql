-- One row per (collection, automatic judge's qrels version, measure name), for the measures the comparison marts
-- compare: does the judge order the runs as people do? The runs' leaderboard of the measure on the pairs both
-- graded, once with the judge's grades and once with people's (int_judge_question_measures: each run's mean
-- over the questions with such a pair), compared as qrels_version_leaderboard_changes compares two versions
-- (macros/leaderboard_correlations.sql): Kendall's tau-b, tau_AP of the judge's leaderboard against people's
-- (a swap near the top costs more), rank-biased overlap, and the pairs of runs the judge puts in the other order.
-- Each with a 95% percentile bootstrap interval over questions: the same resamples as the judge's kappas
-- (int_judge_question_resamples), each resample's leaderboards from the means over the questions it drew. The
-- leaderboards order the runs by their means to 1e-12 per question (runs closer than that tie).

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
),

as_labelled as (
    select * from leaderboards where resample = 0
),

resampled as (
    select * from leaderboards where resample > 0
),

{{ leaderboard_correlations_ctes('correlations', 'as_labelled', ['collection_id', 'qrels_version', 'measure_name']) }},

{{ leaderboard_correlations_ctes('resampled_correlations', 'resampled',
    ['collection_id', 'qrels_version', 'resample', 'measure_name'], with_swaps=false) }},

intervals as (
    select
        collection_id,
        qrels_version,
        measure_name
        {%- for statistic in ['kendall_tau', 'tau_ap', 'rbo'] %},
        {{ percentile_cont(statistic, 0.025) }} as {{ statistic }}_ci_low,
        {{ percentile_cont(statistic, 0.975) }} as {{ statistic }}_ci_high
        {%- endfor %}
    from resampled_correlations
    group by collection_id, qrels_version, measure_name
),

measures as (
    select
        collection_id,
        qrels_version,
        measure,
        k,
        measure_name,
        count(distinct question_id) as n_questions
    from question_values
    group by collection_id, qrels_version, measure, k, measure_name
),

judges as (
    select distinct collection_id, qrels_version, judge from {{ ref('int_judge_agreement_pairs') }}
)

select
    cast(measures.collection_id as string) as collection_id,
    cast(measures.qrels_version as integer) as qrels_version,
    cast(judges.judge as string) as judge,
    cast(measures.measure as string) as measure,
    cast(measures.k as integer) as k,
    cast(measures.measure_name as string) as measure_name,
    cast(correlations.n_runs as integer) as n_runs,
    cast(measures.n_questions as integer) as n_questions,
    {%- for statistic in ['kendall_tau', 'tau_ap', 'rbo'] %}
    cast(correlations.{{ statistic }} as double) as {{ statistic }},
    cast(intervals.{{ statistic }}_ci_low as double) as {{ statistic }}_ci_low,
    cast(intervals.{{ statistic }}_ci_high as double) as {{ statistic }}_ci_high,
    {%- endfor %}
    cast(correlations.n_swapped_pairs as integer) as n_swapped_pairs,
    cast(correlations.swapped_pairs as string) as swapped_pairs
from measures
inner join judges
    on measures.collection_id = judges.collection_id
    and measures.qrels_version = judges.qrels_version
inner join correlations
    on measures.collection_id = correlations.collection_id
    and measures.qrels_version = correlations.qrels_version
    and measures.measure_name = correlations.measure_name
left join intervals
    on measures.collection_id = intervals.collection_id
    and measures.qrels_version = intervals.qrels_version
    and measures.measure_name = intervals.measure_name
