-- One row per (collection, automatic judge's qrels version) with pairs people graded too: the judge's agreement
-- with people. Cohen's kappa on relevant or not (grade >= the collection's relevance_level), and the linear and
-- quadratic weighted kappas on the grades (weights |judge grade - people's grade| and its square), each
-- 1 - (sum of weight x count over the confusion matrix) / (sum of weight x expected count), the expected counts the
-- outer product of the two raters' margins / n, as scikit-learn's cohen_kappa_score; null when the expected
-- disagreement is 0. Each with a 95% percentile bootstrap interval over questions (int_judge_question_resamples:
-- a resample's kappa over the pairs of the questions it drew, a question drawn twice counting twice), resamples
-- where a kappa is undefined left out. Counts and weights are integers, so every kappa is one division of exact
-- sums: the same bits on every run.

with pairs as (
    select * from {{ ref('int_judge_agreement_pairs') }}
),

settings as (
    select collection_id, relevance_level from {{ ref('int_collection_evaluation_settings') }}
),

-- each question's confusion counts
question_cells as (
    select collection_id, qrels_version, question_id, judge_grade, people_grade, count(*) as n_pairs
    from pairs
    group by collection_id, qrels_version, question_id, judge_grade, people_grade
),

-- resample 0 is the pairs as they are; 1, 2, ... the bootstrap's
samples as (
    select * from {{ ref('int_judge_question_resamples') }}
),

-- the confusion matrix of each resample, on the grades and on relevant or not
cells as (
    select
        samples.collection_id,
        samples.qrels_version,
        samples.resample,
        'grades' as scale,
        question_cells.judge_grade as judge_value,
        question_cells.people_grade as people_value,
        sum(samples.n_draws * question_cells.n_pairs) as n_pairs
    from samples
    inner join question_cells
        on samples.collection_id = question_cells.collection_id
        and samples.qrels_version = question_cells.qrels_version
        and samples.question_id = question_cells.question_id
    group by samples.collection_id, samples.qrels_version, samples.resample, question_cells.judge_grade,
        question_cells.people_grade
),

binary_cells as (
    select
        cells.collection_id,
        cells.qrels_version,
        cells.resample,
        'relevant' as scale,
        case when cells.judge_value >= settings.relevance_level then 1 else 0 end as judge_value,
        case when cells.people_value >= settings.relevance_level then 1 else 0 end as people_value,
        sum(cells.n_pairs) as n_pairs
    from cells
    inner join settings
        on cells.collection_id = settings.collection_id
    group by cells.collection_id, cells.qrels_version, cells.resample,
        case when cells.judge_value >= settings.relevance_level then 1 else 0 end,
        case when cells.people_value >= settings.relevance_level then 1 else 0 end
),

all_cells as (
    select * from cells
    union all
    select * from binary_cells
),

judge_margins as (
    select collection_id, qrels_version, resample, scale, judge_value as value, sum(n_pairs) as n_pairs
    from all_cells
    group by collection_id, qrels_version, resample, scale, judge_value
),

people_margins as (
    select collection_id, qrels_version, resample, scale, people_value as value, sum(n_pairs) as n_pairs
    from all_cells
    group by collection_id, qrels_version, resample, scale, people_value
),

-- the three kappas' weights: 1 where the two differ on relevant or not, |distance| and distance^2 on the grades
weights as (
    select 'relevant' as scale, 'kappa' as kappa, 0 as power_of_distance
    union all
    select 'grades', 'weighted_kappa_linear', 1
    union all
    select 'grades', 'weighted_kappa_quadratic', 2
),

observed as (
    select
        all_cells.collection_id,
        all_cells.qrels_version,
        all_cells.resample,
        weights.kappa,
        sum(all_cells.n_pairs) as n_pairs,
        sum(case when all_cells.judge_value = all_cells.people_value then 0
            else all_cells.n_pairs * power(abs(all_cells.judge_value - all_cells.people_value),
                weights.power_of_distance) end) as disagreement
    from all_cells
    inner join weights
        on all_cells.scale = weights.scale
    group by all_cells.collection_id, all_cells.qrels_version, all_cells.resample, weights.kappa
),

-- n times the expected disagreement: the weights over the outer product of the margins
expected as (
    select
        judge_margins.collection_id,
        judge_margins.qrels_version,
        judge_margins.resample,
        weights.kappa,
        sum(case when judge_margins.value = people_margins.value then 0
            else judge_margins.n_pairs * people_margins.n_pairs
                * power(abs(judge_margins.value - people_margins.value), weights.power_of_distance) end)
            as disagreement_times_n
    from judge_margins
    inner join people_margins
        on judge_margins.collection_id = people_margins.collection_id
        and judge_margins.qrels_version = people_margins.qrels_version
        and judge_margins.resample = people_margins.resample
        and judge_margins.scale = people_margins.scale
    inner join weights
        on judge_margins.scale = weights.scale
    group by judge_margins.collection_id, judge_margins.qrels_version, judge_margins.resample, weights.kappa
),

kappas as (
    select
        observed.collection_id,
        observed.qrels_version,
        observed.resample,
        observed.kappa,
        case when expected.disagreement_times_n > 0
            then 1.0 - cast(observed.disagreement * observed.n_pairs as double) / expected.disagreement_times_n
        end as value
    from observed
    inner join expected
        on observed.collection_id = expected.collection_id
        and observed.qrels_version = expected.qrels_version
        and observed.resample = expected.resample
        and observed.kappa = expected.kappa
),

intervals as (
    select
        collection_id,
        qrels_version,
        kappa,
        {{ percentile_cont('value', 0.025) }} as ci_low,
        {{ percentile_cont('value', 0.975) }} as ci_high
    from kappas
    where resample > 0 and value is not null
    group by collection_id, qrels_version, kappa
),

sizes as (
    select collection_id, qrels_version, count(*) as n_pairs, count(distinct question_id) as n_questions
    from pairs
    group by collection_id, qrels_version
)

select
    cast(sizes.collection_id as string) as collection_id,
    cast(sizes.qrels_version as integer) as qrels_version,
    cast(sizes.n_pairs as integer) as n_pairs,
    cast(sizes.n_questions as integer) as n_questions
    {%- for kappa in ['kappa', 'weighted_kappa_linear', 'weighted_kappa_quadratic'] %},
    cast(max(case when kappas.kappa = '{{ kappa }}' and kappas.resample = 0 then kappas.value end) as double)
        as {{ kappa }},
    cast(max(case when intervals.kappa = '{{ kappa }}' then intervals.ci_low end) as double) as {{ kappa }}_ci_low,
    cast(max(case when intervals.kappa = '{{ kappa }}' then intervals.ci_high end) as double) as {{ kappa }}_ci_high
    {%- endfor %}
from sizes
left join kappas
    on sizes.collection_id = kappas.collection_id
    and sizes.qrels_version = kappas.qrels_version
    and kappas.resample = 0
left join intervals
    on sizes.collection_id = intervals.collection_id
    and sizes.qrels_version = intervals.qrels_version
group by sizes.collection_id, sizes.qrels_version, sizes.n_pairs, sizes.n_questions
