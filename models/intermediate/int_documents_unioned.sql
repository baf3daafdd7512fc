-- One row per document of any collection: the lesson's seeds (collection docent) and the imported collections.

with seeded as (
    select collection_id, doc_id, title, doc_text, doc_position from {{ ref('stg_seeds__docs') }}
),

imported as (
    select collection_id, doc_id, title, doc_text, doc_position from {{ ref('stg_raw__documents') }}
),

unioned as (
    select * from seeded
    union all
    select * from imported
)

select * from unioned
