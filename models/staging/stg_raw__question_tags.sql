-- One row per (question, tag) of an imported collection (`retrieval-metrics import --tags`, rm.question_tags).

with source as (
    select * from {{ source('raw', 'question_tags') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(question_id as string) as question_id,
        cast(tag as string) as tag
    from source
)

select * from renamed
