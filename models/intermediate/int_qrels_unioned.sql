-- One row per judgment of any collection: the lesson's seeds (collection docent) and the imported collections.

with seeded as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_seeds__golden_qrels') }}
),

imported as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_raw__qrels') }}
),

unioned as (
    select * from seeded
    union all
    select * from imported
)

select * from unioned
