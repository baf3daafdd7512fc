with source as (
    select * from {{ source('raw', 'rankings') }}
),

renamed as (
    select
        cast(collection_id as varchar) as collection_id,
        cast(run_id as varchar) as run_id,
        cast(question_id as varchar) as question_id,
        cast(doc_id as varchar) as doc_id,
        cast(rank as integer) as rank,
        cast(score as double) as score,
        cast(matched_terms as varchar) as matched_terms
    from source
)

select * from renamed
