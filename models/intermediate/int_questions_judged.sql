-- One row per question of a collection: every golden question plus any question that only appears in the
-- qrels, with how many docs are judged for it and how many of those are relevant (grade >= 1).

with golden_questions as (
    select * from {{ ref('stg_seeds__golden_questions') }}
),

qrels as (
    select * from {{ ref('stg_seeds__golden_qrels') }}
),

judgment_counts as (
    select
        collection_id,
        question_id,
        cast(count(*) as integer) as n_judged,
        cast(sum(case when relevance >= 1 then 1 else 0 end) as integer) as n_relevant
    from qrels
    group by collection_id, question_id
),

question_ids as (
    select collection_id, question_id from golden_questions
    union
    select collection_id, question_id from judgment_counts
),

joined as (
    select
        question_ids.collection_id,
        question_ids.question_id,
        golden_questions.question_text,
        coalesce(judgment_counts.n_judged, 0) as n_judged,
        coalesce(judgment_counts.n_relevant, 0) as n_relevant
    from question_ids
    left join golden_questions
        on question_ids.collection_id = golden_questions.collection_id
        and question_ids.question_id = golden_questions.question_id
    left join judgment_counts
        on question_ids.collection_id = judgment_counts.collection_id
        and question_ids.question_id = judgment_counts.question_id
)

select * from joined
