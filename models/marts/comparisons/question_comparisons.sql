-- One row per (collection, run, baseline, question, measure name): every run against every baseline of its
-- collection but itself (baseline_run_id, one or more), on every compared measure of the registry or of a user
-- (is_compared in measure_catalog): the run's value, the baseline's, the difference, and whether the question is
-- a win, tie or loss for the run. Only questions both runs average are paired. Its fingerprint of a run holds the
-- collection's baselines (meta reads_baselines, macros/incremental_runs.sql): a change of them recomputes the
-- comparisons, not the measures.

{{ config(meta={'reads_baselines': true}) }}

with runs_to_compute as (
    {{ runs_to_compute(given_runs='question_measures') }}
),

question_measures as (
    select * from {{ ref('question_measures') }}
    where is_averaged
        and measure in (select measure from {{ ref('measure_catalog') }} where is_compared)
),

-- each collection's baseline runs (its own baseline_run_id, else the var's), one row each
baselines as (
    select collection_id, value as baseline_run_id
    from {{ ref('int_collection_settings') }}
    where setting = 'baseline_run_id'
),

-- the runs this build computes (macros/incremental_runs.sql); the baseline's values are read whatever it plans
candidates as (
    {{ rows_of_runs('question_measures') }}
),

paired as (
    select
        candidate.collection_id,
        candidate.run_id,
        baseline.run_id as baseline_run_id,
        candidate.question_id,
        candidate.measure,
        candidate.k,
        candidate.measure_name,
        candidate.value as run_value,
        baseline.value as baseline_value,
        candidate.value - baseline.value as difference
    from candidates as candidate
    inner join baselines
        on candidate.collection_id = baselines.collection_id
    inner join question_measures as baseline
        on candidate.collection_id = baseline.collection_id
        and baselines.baseline_run_id = baseline.run_id
        and candidate.question_id = baseline.question_id
        and candidate.measure_name = baseline.measure_name
    where candidate.run_id <> baseline.run_id
),

computed_rows as (
    select
        collection_id,
        run_id,
        baseline_run_id,
        question_id,
        measure,
        k,
        measure_name,
        run_value,
        baseline_value,
        difference,
        cast(
            case
                when difference > {{ tie_tolerance() }} then 'win'
                when difference < -{{ tie_tolerance() }} then 'loss'
                else 'tie'
            end as string
        ) as outcome
    from paired
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
