-- The golden set's seed files, the one layer that can break these invariants (staging only casts them): one row
-- per problem. Document and question ids present and unique; each judgment's (question, doc) present, unique and
-- graded, its question a golden question and its doc a document.

with problems as (
    select 'document id missing or repeated' as problem, doc_id as question_id_or_doc_id
    from {{ ref('docs') }}
    group by doc_id
    having doc_id is null or count(*) > 1

    union all

    select 'question id missing or repeated', question_id
    from {{ ref('golden_questions') }}
    group by question_id
    having question_id is null or count(*) > 1

    union all

    select 'judgment key missing or repeated', concat(coalesce(question_id, '(null)'), ' / ', coalesce(doc_id, '(null)'))
    from {{ ref('golden_qrels') }}
    group by question_id, doc_id
    having question_id is null or doc_id is null or count(*) > 1

    union all

    select 'judgment without a grade', concat(question_id, ' / ', doc_id)
    from {{ ref('golden_qrels') }}
    where relevance is null

    union all

    select 'judgment of an unknown question', qrels.question_id
    from {{ ref('golden_qrels') }} as qrels
    left join {{ ref('golden_questions') }} as questions on qrels.question_id = questions.question_id
    where questions.question_id is null and qrels.question_id is not null

    union all

    select 'judgment of an unknown document', qrels.doc_id
    from {{ ref('golden_qrels') }} as qrels
    left join {{ ref('docs') }} as docs on qrels.doc_id = docs.doc_id
    where docs.doc_id is null and qrels.doc_id is not null
)

select * from problems
