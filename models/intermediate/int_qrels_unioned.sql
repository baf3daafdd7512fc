-- a table, not a view: every per-run model and its fingerprint reads it, and as a view the overlay below was
-- computed at each read (a forced Docent build took 8.1-9.0 s instead of 6.6-7.6 s)
{{ config(materialized="table") }}

-- One row per judgment of any collection, at the collection's qrels version (setting qrels_version, default the
-- latest): the base judgments (the lesson's seeds for docent, raw.qrels for the imported collections: version 0),
-- overlaid by the judgments imported as versions up to it (raw.judgments): for each pair, the latest person's
-- grade, else the latest automatic judge's, else the base grade.

with seeded as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_seeds__golden_qrels') }}
),

imported as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_raw__qrels') }}
),

base as (
    select * from seeded
    union all
    select * from imported
),

versioned as (
    select
        judgments.collection_id,
        judgments.question_id,
        judgments.doc_id,
        judgments.grade,
        row_number() over (
            partition by judgments.collection_id, judgments.question_id, judgments.doc_id
            order by case when judgments.judge_kind = 'human' then 0 else 1 end, judgments.qrels_version desc
        ) as precedence
    from {{ ref('stg_raw__judgments') }} as judgments
    inner join {{ ref('int_collection_evaluation_settings') }} as settings
        on judgments.collection_id = settings.collection_id
    where judgments.qrels_version <= settings.qrels_version
),

latest as (
    select collection_id, question_id, doc_id, grade from versioned where precedence = 1
)

select
    coalesce(latest.collection_id, base.collection_id) as collection_id,
    coalesce(latest.question_id, base.question_id) as question_id,
    coalesce(latest.doc_id, base.doc_id) as doc_id,
    coalesce(latest.grade, base.relevance) as relevance
from base
full outer join latest
    on base.collection_id = latest.collection_id
    and base.question_id = latest.question_id
    and base.doc_id = latest.doc_id
