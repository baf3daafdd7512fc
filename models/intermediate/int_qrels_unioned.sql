-- a table, not a view: every per-run model and its fingerprint reads it, and as a view the overlay below was
-- computed at each read (a forced Docent build took 8.1-9.0 s instead of 6.6-7.6 s)
{{ config(materialized="table") }}

-- One row per judgment of any collection, at the collection's qrels version (setting qrels_version, default the
-- latest): the base judgments (the lesson's seeds for docent, raw.qrels for the imported collections: version 0,
-- the assessors') and the judgments imported as versions up to it (raw.judgments). For each pair, people's grades
-- first: the latest label file's (judge_kind human), else the base grade; only a pair no person graded takes the
-- latest automatic judge's.

with seeded as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_seeds__golden_qrels') }}
),

imported as (
    select collection_id, question_id, doc_id, relevance from {{ ref('stg_raw__qrels') }}
),

versioned as (
    select
        judgments.collection_id,
        judgments.question_id,
        judgments.doc_id,
        judgments.grade as relevance,
        case when judgments.judge_kind = 'human' then 0 else 2 end as precedence,
        judgments.qrels_version
    from {{ ref('stg_raw__judgments') }} as judgments
    inner join {{ ref('int_collection_evaluation_settings') }} as settings
        on judgments.collection_id = settings.collection_id
    where judgments.qrels_version <= settings.qrels_version
),

-- every grade a pair has, the base's between people's label files (0) and automatic judges' (2)
candidates as (
    select collection_id, question_id, doc_id, relevance, 1 as precedence, 0 as qrels_version from seeded
    union all
    select collection_id, question_id, doc_id, relevance, 1 as precedence, 0 as qrels_version from imported
    union all
    select * from versioned
),

chosen as (
    select
        collection_id,
        question_id,
        doc_id,
        relevance,
        row_number() over (
            partition by collection_id, question_id, doc_id order by precedence, qrels_version desc
        ) as choice
    from candidates
)

select collection_id, question_id, doc_id, relevance
from chosen
where choice = 1
