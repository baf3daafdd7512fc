with source as (
    select * from {{ ref('golden_qrels') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(question_id as string) as question_id,
        cast(doc_id as string) as doc_id,
        cast(relevance as integer) as relevance
    from source
)

select * from renamed
