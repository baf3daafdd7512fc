-- One row per judged document a run retrieved for a question (any grade, negative included): the only ranking
-- rows the measures read, with the running counts they need at the document's position (macros/judged_docs.sql).
-- Computed per run: only the runs this build plans (macros/incremental_runs.sql), as in every per-run model.

with rankings as (
    {{ rows_of_planned_runs(ref('stg_raw__rankings')) }}
),

qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

{{ judged_docs_ctes('judged_docs', 'rankings', 'qrels', 'settings') }}

select * from judged_docs
