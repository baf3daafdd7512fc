-- One row per (collection, automatic judge's qrels version, measure name), for the measures the comparison marts
-- compare: does the judge order the runs as people do? The runs' leaderboard of the measure on the pairs both
-- graded, once with the judge's grades and once with people's (int_judge_question_measures: each run's mean
-- over the questions with such a pair), compared as qrels_version_leaderboard_changes compares two versions
-- (macros/leaderboard_correlations.sql): Kendall's tau-b, tau_AP of the judge's leaderboard against people's
-- (a swap near the top costs more), rank-biased overlap, and the pairs of runs the judge puts in the other order.
-- Each with a 95% percentile bootstrap interval over questions: the same resamples as the judge's kappas
-- (int_judge_question_resamples), each resample's leaderboards from the means over the questions it drew. The
-- leaderboards order the runs by their means to 1e-12 per question (runs closer than that tie).

with leaderboards as (
    select * from {{ ref('int_judge_leaderboards') }}
),

question_values as (
    select * from {{ ref('int_judge_question_measures') }}
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
