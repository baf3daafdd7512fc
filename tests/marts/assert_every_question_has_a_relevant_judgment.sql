-- Warns about (and names) every question with no relevant judgment: it scores 0 on every measure, which
-- drags the means down without being a retrieval failure. Rows returned = the questions at fault.
{{ config(severity='warn', store_failures=true) }}
-- depends_on: {{ ref('int_collection_evaluation_settings') }}

{%- if execute %}
    {%- set unjudged = run_query(
        "select questions.collection_id || '/' || questions.question_id, settings.relevance_level from "
        ~ ref('int_questions_judged') ~ " as questions left join " ~ ref('int_collection_evaluation_settings')
        ~ " as settings on questions.collection_id = settings.collection_id where questions.n_relevant = 0 order by 1"
    ) %}
    {%- for row in unjudged.rows[:10] %}
        {{ log("WARNING: question " ~ row[0] ~ " has no relevant judgment (grade >= " ~ row[1] ~ "); it scores 0 on every measure", info=true) }}
    {%- endfor %}
    {%- if unjudged.rows | length > 10 %}
        {{ log("WARNING: ... and " ~ (unjudged.rows | length - 10) ~ " more questions with no relevant judgment (all in dbt_test__audit.assert_every_question_has_a_relevant_judgment)", info=true) }}
    {%- endif %}
{%- endif %}

select collection_id, question_id, question_text, n_judged
from {{ ref('int_questions_judged') }}
where n_relevant = 0
