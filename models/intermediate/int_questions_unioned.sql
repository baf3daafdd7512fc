-- One row per question of any collection: the lesson's seeds (collection docent) and the imported collections.

with seeded as (
    select collection_id, question_id, question_text from {{ ref('stg_seeds__golden_questions') }}
),

imported as (
    select collection_id, question_id, question_text from {{ ref('stg_raw__questions') }}
),

unioned as (
    select * from seeded
    union all
    select * from imported
)

select * from unioned
