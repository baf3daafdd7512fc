-- Warns about questions a run answered that its collection does not know (not in the questions nor the
-- qrels): the measures ignore them, as trec_eval does. One row per (collection, run, question); the log
-- says how many per run.
{{ config(severity='warn', store_failures=true, where='__runs_not_yet_computed__') }}

{% set unknown_sql %}
    select rankings.collection_id, rankings.run_id, rankings.question_id
    from (select * from {{ get_where_subquery(ref('stg_raw__rankings')) }}) as rankings
    left join {{ ref('int_questions_judged') }} as questions
        on rankings.collection_id = questions.collection_id
        and rankings.question_id = questions.question_id
    where questions.question_id is null
    group by rankings.collection_id, rankings.run_id, rankings.question_id
{% endset %}

{%- if execute %}
    {%- set counts = run_query(
        "select collection_id || '/' || run_id, count(*) from (" ~ unknown_sql ~ ") group by 1 order by 1"
    ) %}
    {%- for row in counts.rows %}
        {{ log("WARNING: run " ~ row[0] ~ " has " ~ row[1] ~ " question(s) not in its collection's qrels: ignored", info=true) }}
    {%- endfor %}
{%- endif %}

{{ unknown_sql }}
