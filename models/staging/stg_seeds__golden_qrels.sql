with source as (
    select * from {{ ref('golden_qrels') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(question_id as varchar) as question_id,
        cast(doc_id as varchar) as doc_id,
        cast(relevance as integer) as relevance
    from source
)

select * from renamed
