with source as (
    select * from {{ source('raw', 'qrels') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(question_id as string) as question_id,
        cast(doc_id as string) as doc_id,
        cast(relevance as integer) as relevance
    from source
)

select * from renamed
