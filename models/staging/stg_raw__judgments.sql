-- One row per judgment of each qrels version of a collection (`retrieval-metrics import --judgments`).

with source as (
    select * from {{ source('raw', 'judgments') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(qrels_version as integer) as qrels_version,
        cast(question_id as string) as question_id,
        cast(doc_id as string) as doc_id,
        cast(grade as integer) as grade,
        cast(judge as string) as judge,
        cast(judge_kind as string) as judge_kind,
        cast(rationale as string) as rationale,
        cast(latency_ms as double) as latency_ms
    from source
)

select * from renamed
