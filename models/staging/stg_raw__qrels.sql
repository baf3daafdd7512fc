with source as (
    select * from {{ source('raw', 'qrels') }}
),

renamed as (
    select
        cast(collection_id as varchar) as collection_id,
        cast(question_id as varchar) as question_id,
        cast(doc_id as varchar) as doc_id,
        cast(relevance as integer) as relevance
    from source
)

select * from renamed
