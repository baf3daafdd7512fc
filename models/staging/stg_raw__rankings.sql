with source as (
    select * from {{ source('raw', 'rankings') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(run_id as string) as run_id,
        cast(question_id as string) as question_id,
        cast(doc_id as string) as doc_id,
        cast(rank as integer) as rank,
        cast(score as double) as score,
        cast(matched_terms as string) as matched_terms
    from source
)

select * from renamed
