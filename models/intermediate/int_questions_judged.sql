-- One row per question of a collection: every known question (seeded or imported) plus any question found
-- only in the qrels, with how many docs are judged for it, how many of those are relevant
-- (grade >= the collection's relevance_level) and how many judged not relevant (0 <= grade < relevance_level).

with questions as (
    select * from {{ ref('int_questions_unioned') }}
),

qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

judgment_counts as (
    {{ judgment_counts_select('qrels', 'settings') }}
),

question_ids as (
    select collection_id, question_id from questions
    union
    select collection_id, question_id from judgment_counts
),

joined as (
    select
        question_ids.collection_id,
        question_ids.question_id,
        questions.question_text,
        coalesce(judgment_counts.n_judged, 0) as n_judged,
        coalesce(judgment_counts.n_relevant, 0) as n_relevant,
        coalesce(judgment_counts.n_judged_nonrelevant, 0) as n_judged_nonrelevant
    from question_ids
    left join questions
        on question_ids.collection_id = questions.collection_id
        and question_ids.question_id = questions.question_id
    left join judgment_counts
        on question_ids.collection_id = judgment_counts.collection_id
        and question_ids.question_id = judgment_counts.question_id
)

select * from joined
