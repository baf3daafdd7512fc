-- One row per (collection, question, tag): the slices questions are grouped in (run_tag_measures,
-- run_tag_comparisons). Docent's from the seed, the imported collections' from raw.question_tags.

with seeded as (
    select collection_id, question_id, tag from {{ ref('stg_seeds__golden_question_tags') }}
),

imported as (
    select collection_id, question_id, tag from {{ ref('stg_raw__question_tags') }}
),

unioned as (
    select * from seeded
    union all
    select * from imported
)

select * from unioned
