-- One row per judged document a run retrieved for a question (any grade, negative included): the only ranking
-- rows the measures read, with the running counts they need at the document's position (macros/judged_docs.sql).
-- Computed per run: only the runs this build plans (macros/incremental_runs.sql), as in every per-run model.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('stg_raw__rankings')) }}
),

rankings as (
    {{ rows_of_runs(ref('stg_raw__rankings')) }}
),

qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

{{ judged_docs_ctes('judged_docs', 'rankings', 'qrels', 'settings') }}
,

computed_rows as (
    select * from judged_docs
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
