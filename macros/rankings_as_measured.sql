{#- The rankings of the runs in `within` (a relation or CTE joined on `keys`) as the measures see them: under the
    collection's ignore_identical_ids, without the document whose id is the question's, those below it moving up
    (rank 1, 2, ... again); under its max_docs_per_question (trec_eval -M), only the top ones of what is left.
    Only the rows of `within` are re-ranked. The judging marts read rankings this way. -#}
{% macro rankings_as_measured(within, keys) -%}
    select collection_id, run_id, question_id, doc_id, rank
    from (
        select
            rankings.collection_id,
            rankings.run_id,
            rankings.question_id,
            rankings.doc_id,
            row_number() over (
                partition by rankings.collection_id, rankings.run_id, rankings.question_id order by rankings.rank
            ) as rank,
            measured_settings.max_docs_per_question
        from {{ ref('stg_raw__rankings') }} as rankings
        inner join {{ within }}
            on {% for key in keys %}rankings.{{ key }} = {{ within }}.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
        inner join {{ ref('int_collection_evaluation_settings') }} as measured_settings
            on rankings.collection_id = measured_settings.collection_id
        where not (measured_settings.ignore_identical_ids and rankings.doc_id = rankings.question_id)
    ) as measured
    where max_docs_per_question is null or rank <= max_docs_per_question
{%- endmacro %}
