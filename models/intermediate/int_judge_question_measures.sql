-- One row per (collection, automatic judge's qrels version, labels, run, question, measure) for every measure of
-- the registry that the comparison marts compare: a run's value for the question when the only judgments are
-- the pairs the judge and people both graded (int_judge_agreement_pairs), graded as the judge graded them
-- (labels 'judge') or as people did ('people'). The same measures' SQL as the runs' own (macros/measures.sql,
-- macros/judged_docs.sql), under the collection's settings; the questions are those with a pair both graded,
-- and every run of the collection is measured on each (nothing retrieved: an empty ranking). What
-- judge_leaderboard_agreement ranks the runs by, twice.

{{ config(materialized="table") }}

with pairs as (
    select * from {{ ref('int_judge_agreement_pairs') }}
),

labelled as (
    select collection_id, qrels_version, 'judge' as labels, question_id, doc_id, judge_grade as relevance
    from pairs
    union all
    select collection_id, qrels_version, 'people' as labels, question_id, doc_id, people_grade as relevance
    from pairs
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

judged_questions as (
    select distinct collection_id, question_id from pairs
),

rankings as (
    select rankings.*
    from {{ ref('stg_raw__rankings') }} as rankings
    inner join judged_questions
        on rankings.collection_id = judged_questions.collection_id
        and rankings.question_id = judged_questions.question_id
),

{{ judged_docs_ctes('judged_docs', 'rankings', 'labelled', 'settings', ['qrels_version', 'labels']) }},

label_counts as (
    select
        labelled.collection_id,
        labelled.qrels_version,
        labelled.labels,
        labelled.question_id,
        count(*) as n_judged,
        sum(case when labelled.relevance >= settings.relevance_level then 1 else 0 end) as n_relevant,
        sum(case when labelled.relevance >= 0 and labelled.relevance < settings.relevance_level then 1 else 0 end)
            as n_judged_nonrelevant
    from labelled
    inner join settings
        on labelled.collection_id = settings.collection_id
    group by labelled.collection_id, labelled.qrels_version, labelled.labels, labelled.question_id
),

retrieved_counts as (
    select rankings.collection_id, rankings.run_id, rankings.question_id, count(*) as n_retrieved
    from rankings
    inner join settings
        on rankings.collection_id = settings.collection_id
    where not (settings.ignore_identical_ids and rankings.doc_id = rankings.question_id)
    group by rankings.collection_id, rankings.run_id, rankings.question_id
),

judged_counts as (
    select collection_id, qrels_version, labels, run_id, question_id, count(*) as n_judged_retrieved
    from judged_docs
    group by collection_id, qrels_version, labels, run_id, question_id
),

-- every run of the collection on every question with a pair both graded, under each labels (as
-- int_run_questions_scaffolded: n_ranked by judged_docs_only, and only the questions its averaging averages)
run_questions as (
    select
        label_counts.collection_id,
        label_counts.qrels_version,
        label_counts.labels,
        runs.run_id,
        label_counts.question_id,
        label_counts.n_relevant,
        label_counts.n_judged_nonrelevant,
        case when settings.judged_docs_only
            then coalesce(judged_counts.n_judged_retrieved, 0)
            else coalesce(retrieved_counts.n_retrieved, 0)
        end as n_ranked,
        settings.iprec_rule
    from label_counts
    inner join {{ ref('stg_raw__runs') }} as runs
        on label_counts.collection_id = runs.collection_id
    inner join settings
        on label_counts.collection_id = settings.collection_id
    left join retrieved_counts
        on runs.collection_id = retrieved_counts.collection_id
        and runs.run_id = retrieved_counts.run_id
        and label_counts.question_id = retrieved_counts.question_id
    left join judged_counts
        on label_counts.collection_id = judged_counts.collection_id
        and label_counts.qrels_version = judged_counts.qrels_version
        and label_counts.labels = judged_counts.labels
        and runs.run_id = judged_counts.run_id
        and label_counts.question_id = judged_counts.question_id
    where settings.averaging <> 'retrieved_only' or retrieved_counts.n_retrieved is not null
),

-- the ideal ranking of each labels' positive grades (int_ideal_rankings' order)
ideal_rankings as (
    select
        collection_id,
        qrels_version,
        labels,
        question_id,
        relevance,
        row_number() over (
            partition by collection_id, qrels_version, labels, question_id order by relevance desc, doc_id
        ) as ideal_rank
    from labelled
    where relevance > 0
),

cutoffs as (
    select collection_id, cast(value as integer) as k
    from {{ ref('int_collection_settings') }}
    where setting = 'k_values'
),

ideal as (
    select collection_id, qrels_version, labels, question_id, {{ ideal_dcg() }} as ideal_dcg
    from ideal_rankings
    group by collection_id, qrels_version, labels, question_id
),

ideal_at_k as (
    select
        ideal_rankings.collection_id,
        ideal_rankings.qrels_version,
        ideal_rankings.labels,
        ideal_rankings.question_id,
        cutoffs.k,
        {{ ideal_dcg('cutoffs.k') }} as ideal_dcg,
        {{ ideal_dcg('cutoffs.k', exponential=true) }} as ideal_exp_dcg
    from ideal_rankings
    inner join cutoffs
        on ideal_rankings.collection_id = cutoffs.collection_id
    group by ideal_rankings.collection_id, ideal_rankings.qrels_version, ideal_rankings.labels,
        ideal_rankings.question_id, cutoffs.k
),

measure_inputs as (
    select
        run_questions.collection_id,
        run_questions.qrels_version,
        run_questions.labels,
        run_questions.run_id,
        run_questions.question_id,
        coalesce(ideal.ideal_dcg, 0.0) as ideal_dcg,
        run_questions.iprec_rule,
        {{ measure_input_columns('run_questions', 'judged_docs') }}
    from run_questions
    left join ideal
        on run_questions.collection_id = ideal.collection_id
        and run_questions.qrels_version = ideal.qrels_version
        and run_questions.labels = ideal.labels
        and run_questions.question_id = ideal.question_id
    left join judged_docs
        on run_questions.collection_id = judged_docs.collection_id
        and run_questions.qrels_version = judged_docs.qrels_version
        and run_questions.labels = judged_docs.labels
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
),

measure_inputs_at_k as (
    select
        run_questions.collection_id,
        run_questions.qrels_version,
        run_questions.labels,
        run_questions.run_id,
        run_questions.question_id,
        cutoffs.k,
        coalesce(ideal_at_k.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(ideal_at_k.ideal_exp_dcg, 0.0) as ideal_exp_dcg,
        {{ measure_input_columns('run_questions', 'judged_docs') }}
    from run_questions
    inner join cutoffs
        on run_questions.collection_id = cutoffs.collection_id
    left join ideal_at_k
        on run_questions.collection_id = ideal_at_k.collection_id
        and run_questions.qrels_version = ideal_at_k.qrels_version
        and run_questions.labels = ideal_at_k.labels
        and run_questions.question_id = ideal_at_k.question_id
        and cutoffs.k = ideal_at_k.k
    left join judged_docs
        on run_questions.collection_id = judged_docs.collection_id
        and run_questions.qrels_version = judged_docs.qrels_version
        and run_questions.labels = judged_docs.labels
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
        and judged_docs.position <= cutoffs.k
),

measured as (
    select
        collection_id, qrels_version, labels, run_id, question_id,
        {%- for measure in measures_at_k(false) if measure.compared %}
        cast({{ measure.sql }} as double) as {{ measure.column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from measure_inputs
    group by collection_id, qrels_version, labels, run_id, question_id, num_rel, num_ret, num_judged_nonrel,
        ideal_dcg, iprec_rule
),

measured_at_k as (
    select
        collection_id, qrels_version, labels, run_id, question_id, k,
        {%- for measure in measures_at_k(true) if measure.compared %}
        cast({{ measure.sql }} as double) as {{ measure.column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from measure_inputs_at_k
    group by collection_id, qrels_version, labels, run_id, question_id, k, num_rel, num_ret, num_judged_nonrel,
        ideal_dcg, ideal_exp_dcg
),

{% for at_k_measures in [false, true] %}
{{ 'at_k_measures' if at_k_measures else 'whole_ranking_measures' }} as (
    {%- for measure in measures_at_k(at_k_measures) if measure.compared %}
    select {{ sql_string(measure.name) }} as measure
    {%- if not loop.last %} union all{% endif %}
    {%- endfor %}
),
{% endfor %}

-- one row per measure (a CASE over the columns: each table read once, as question_measures does)
unpivoted as (
    select
        measured.collection_id,
        measured.qrels_version,
        measured.labels,
        measured.run_id,
        measured.question_id,
        whole_ranking_measures.measure,
        cast(null as integer) as k,
        whole_ranking_measures.measure as measure_name,
        case whole_ranking_measures.measure
            {%- for measure in measures_at_k(false) if measure.compared %}
            when {{ sql_string(measure.name) }} then measured.{{ measure.column }}
            {%- endfor %}
        end as value
    from measured
    cross join whole_ranking_measures

    union all

    select
        measured_at_k.collection_id,
        measured_at_k.qrels_version,
        measured_at_k.labels,
        measured_at_k.run_id,
        measured_at_k.question_id,
        at_k_measures.measure,
        measured_at_k.k,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) if measure.compared %}
            when {{ sql_string(measure.name) }} then {{ measure_name_sql(measure, 'measured_at_k.k') }}
            {%- endfor %}
        end as measure_name,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) if measure.compared %}
            when {{ sql_string(measure.name) }} then measured_at_k.{{ measure.column }}
            {%- endfor %}
        end as value
    from measured_at_k
    cross join at_k_measures
)

select
    cast(collection_id as string) as collection_id,
    cast(qrels_version as integer) as qrels_version,
    cast(labels as string) as labels,
    cast(run_id as string) as run_id,
    cast(question_id as string) as question_id,
    cast(measure as string) as measure,
    cast(k as integer) as k,
    cast(measure_name as string) as measure_name,
    cast(value as double) as value
from unpivoted
