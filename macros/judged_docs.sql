{#- The CTEs that turn rankings into the rows every measure reads: one row per judged document (any grade,
    negative included) a run retrieved for a question, with the running counts the measures need at its
    position. The last CTE is named `name`. int_judged_docs_retrieved reads the collections' qrels through it;
    int_judge_question_measures reads the people's and an automatic judge's grades of the same pairs through it,
    `label_keys` telling those label sets apart (columns of `qrels` carried into every partition).

    `rankings` (collection_id, run_id, question_id, doc_id, rank, matched_terms), `qrels` (collection_id,
    question_id, doc_id, relevance, label_keys) and `settings` (int_collection_evaluation_settings) are CTEs or
    relations. Under the collection's settings: is_relevant at its relevance_level, ERR's gains on its
    err_max_grade scale, and with judged_docs_only (trec_eval -J) documents without a grade >= 0 dropped and the
    rest re-ranked 1, 2, ..., and with ignore_identical_ids (BEIR) the document whose id is the question's dropped
    and those below moved up, and with max_docs_per_question (trec_eval -M) only the top ones kept (after
    ignore_identical_ids, before judged_docs_only, as trec_eval cuts before -J); rbp's weights at its
    rbp_persistence. -#}
{% macro judged_docs_ctes(name, rankings, qrels, settings, label_keys=[]) -%}
    {%- set labels = key_columns(label_keys) -%}
    {%- set partition = 'collection_id, ' ~ labels ~ 'run_id, question_id' -%}
-- rbp's gain scale, as trec_eval's: the question's highest grade (>= 0) among its judgments
{{ name }}_grade_scales as (
    select collection_id, {{ labels }}question_id, max(relevance) as max_grade
    from {{ qrels }}
    where relevance >= 0
    group by collection_id, {{ labels }}question_id
),

-- under ignore_identical_ids: the rank of the question's own id in the ranking (a few rows at most)
{{ name }}_identical as (
    select rankings.collection_id, rankings.run_id, rankings.question_id, rankings.rank
    from {{ rankings }} as rankings
    inner join {{ settings }} as settings
        on rankings.collection_id = settings.collection_id
    where settings.ignore_identical_ids and rankings.doc_id = rankings.question_id
),

{{ name }}_kept as (
    select *
    from (
        select
            rankings.collection_id,
            rankings.run_id,
            rankings.question_id,
            rankings.doc_id,
            rankings.rank,
            rankings.rank - case when identical.rank < rankings.rank then 1 else 0 end as kept_rank,
            rankings.matched_terms,
            settings.max_docs_per_question
        from {{ rankings }} as rankings
        inner join {{ settings }} as settings
            on rankings.collection_id = settings.collection_id
        left join {{ name }}_identical as identical
            on rankings.collection_id = identical.collection_id
            and rankings.run_id = identical.run_id
            and rankings.question_id = identical.question_id
        where identical.rank is null or identical.rank <> rankings.rank
    ) as kept
    where max_docs_per_question is null or kept_rank <= max_docs_per_question
),

{{ name }}_joined as (
    select
        kept.collection_id,
        {{ key_columns(label_keys, 'qrels') }}kept.run_id,
        kept.question_id,
        kept.doc_id,
        kept.rank,
        kept.kept_rank,
        kept.matched_terms,
        qrels.relevance,
        settings.judged_docs_only,
        settings.relevance_level,
        settings.err_max_grade,
        settings.rbp_persistence,
        grade_scales.max_grade
    from {{ name }}_kept as kept
    inner join {{ qrels }} as qrels
        on kept.collection_id = qrels.collection_id
        and kept.question_id = qrels.question_id
        and kept.doc_id = qrels.doc_id
    inner join {{ settings }} as settings
        on kept.collection_id = settings.collection_id
    left join {{ name }}_grade_scales as grade_scales
        on kept.collection_id = grade_scales.collection_id{{ keys_equal(label_keys, 'qrels', 'grade_scales') }}
        and kept.question_id = grade_scales.question_id
    where qrels.relevance >= 0 or not settings.judged_docs_only
),

{{ name }}_graded as (
    select
        *,
        case when judged_docs_only
            then cast(row_number() over (partition by {{ partition }} order by rank) as integer)
            else kept_rank
        end as position,
        relevance >= relevance_level as is_relevant,
        cast(greatest(relevance, 0) as double) as gain,
        case when relevance > 0
            then (power(2.0, least(relevance, err_max_grade)) - 1.0) / power(2.0, err_max_grade)
            else 0.0
        end as err_gain,
        case
            when relevance <= 0 then 0.0
            when max_grade > 1 then cast(relevance as double) / max_grade
            else cast(relevance as double)
        end as rbp_gain
    from {{ name }}_joined
),

{{ name }} as (
    select
        collection_id,
        {{ labels }}run_id,
        question_id,
        doc_id,
        rank,
        position,
        matched_terms,
        relevance,
        is_relevant,
        gain,
        err_gain,
        rbp_gain,
        rbp_weight,
        relevant_so_far,
        nonrelevant_above,
        err_continue
    from (
        select
            *,
            cast(sum(case when is_relevant then 1 else 0 end) over (
                partition by {{ partition }} order by position
                rows between unbounded preceding and current row
            ) as integer) as relevant_so_far,
            cast(coalesce(sum(case when relevance >= 0 and not is_relevant then 1 else 0 end) over (
                partition by {{ partition }} order by position
                rows between unbounded preceding and 1 preceding
            ), 0) as integer) as nonrelevant_above,
            (1.0 - rbp_persistence) * power(rbp_persistence, position - 1) as rbp_weight,
            coalesce({{ product_over('1.0 - err_gain',
                'partition by ' ~ partition ~ ' order by position
                rows between unbounded preceding and 1 preceding') }}, 1.0) as err_continue
        from {{ name }}_graded
    ) as counted
)
{%- endmacro %}
