-- One row per (run, question of the run's collection), whether or not the run returned anything for the
-- question: a question the run missed entirely must still count (as an empty ranking) in the means.
-- depends_on: {{ ref('int_judged_docs_retrieved') }} (read only under judged_docs_only)

with runs as (
    {{ rows_of_planned_runs(ref('stg_raw__runs')) }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

retrieved_counts as (
    select
        collection_id,
        run_id,
        question_id,
        cast(count(*) as integer) as n_retrieved
    from ({{ rows_of_planned_runs(ref('stg_raw__rankings')) }}) as rankings
    group by collection_id, run_id, question_id
),

{% if judged_docs_only() -%}
ranked_counts as (
    select
        collection_id,
        run_id,
        question_id,
        cast(count(*) as integer) as n_ranked
    from ({{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}) as judged_docs
    group by collection_id, run_id, question_id
),
{%- endif %}

scaffolded as (
    select
        runs.collection_id,
        runs.run_id,
        questions.question_id,
        questions.n_judged,
        questions.n_relevant,
        questions.n_judged_nonrelevant,
        coalesce(retrieved_counts.n_retrieved, 0) as n_retrieved,
        {% if judged_docs_only() -%}
        coalesce(ranked_counts.n_ranked, 0)
        {%- else -%}
        coalesce(retrieved_counts.n_retrieved, 0)
        {%- endif %} as n_ranked,
        cast(
            {% if averaging_mode() == 'retrieved_only' -%}
                retrieved_counts.n_retrieved is not null and questions.n_judged > 0
            {%- else -%}
                true
            {%- endif %}
        as boolean) as is_averaged
    from runs
    inner join questions
        on runs.collection_id = questions.collection_id
    left join retrieved_counts
        on runs.collection_id = retrieved_counts.collection_id
        and runs.run_id = retrieved_counts.run_id
        and questions.question_id = retrieved_counts.question_id
    {% if judged_docs_only() -%}
    left join ranked_counts
        on runs.collection_id = ranked_counts.collection_id
        and runs.run_id = ranked_counts.run_id
        and questions.question_id = ranked_counts.question_id
    {%- endif %}
)

select * from scaffolded
