{#- Regression gate, on question_comparisons: fails when a gated run's mean of a gated measure (as printed:
    ndcg_cut_2, recall_2, map, Judged@10) falls below a baseline's by more than the collection's gate_tolerance
    (or `tolerance`, if more): each gated run is held to every baseline of its collection (a gated run that is a
    baseline, to the others). The gated runs, measures and tolerance are each collection's settings gated_run_ids,
    gated_measures and gate_tolerance (int_collection_settings: its own, else the vars for the collection
    gated_collection_id); runs that are not in the collection are not
    checked. Its failure rows name the questions that got worse and by how much, with the run's mean
    difference. -#}
{% test no_regression_vs_baseline(model, tolerance=0.0) %}
{%- set failing_rows_sql -%}
with gated_runs as (
    select collection_id, value as run_id
    from {{ ref('int_collection_settings') }}
    where setting = 'gated_run_ids'
),

gated_measures as (
    select collection_id, value as measure_name
    from {{ ref('int_collection_settings') }}
    where setting = 'gated_measures'
),

tolerances as (
    select collection_id, cast(value as double) as tolerance
    from {{ ref('int_collection_settings') }}
    where setting = 'gate_tolerance'
),

compared as (
    select checked.*
    from {{ model }} as checked
    inner join gated_runs
        on checked.collection_id = gated_runs.collection_id
        and checked.run_id = gated_runs.run_id
    inner join gated_measures
        on checked.collection_id = gated_measures.collection_id
        and checked.measure_name = gated_measures.measure_name
),

regressed_runs as (
    select
        compared.collection_id, compared.run_id, compared.baseline_run_id, compared.measure_name,
        avg(compared.difference) as mean_difference
    from compared
    left join tolerances
        on compared.collection_id = tolerances.collection_id
    group by
        compared.collection_id, compared.run_id, compared.baseline_run_id, compared.measure_name, tolerances.tolerance
    having avg(compared.difference) < -greatest({{ tolerance }}, coalesce(tolerances.tolerance, 0.0))
)

select
    compared.collection_id,
    compared.run_id,
    compared.baseline_run_id,
    compared.measure_name,
    regressed_runs.mean_difference as run_mean_difference,
    compared.question_id,
    compared.baseline_value,
    compared.run_value,
    compared.difference
from compared
inner join regressed_runs
    on compared.collection_id = regressed_runs.collection_id
    and compared.run_id = regressed_runs.run_id
    and compared.baseline_run_id = regressed_runs.baseline_run_id
    and compared.measure_name = regressed_runs.measure_name
where compared.difference < 0
{%- endset -%}

{#- dbt prints only a count for a failing test: name the regressed questions in the log too -#}
{%- if execute -%}
    {%- set failing = run_query(failing_rows_sql ~ " order by collection_id, run_id, baseline_run_id, measure_name, difference, question_id") -%}
    {%- for row in failing.rows -%}
        {{ log("REGRESSION: run " ~ row[0] ~ "/" ~ row[1] ~ " " ~ row[3] ~ " is " ~ "%.4f" % row[4] ~ " below " ~ row[2]
               ~ "; question " ~ row[5] ~ ": " ~ "%.4f" % row[6] ~ " -> " ~ "%.4f" % row[7]
               ~ " (" ~ "%+.4f" % row[8] ~ ")", info=true) }}
    {%- endfor -%}
{%- endif -%}

{{ failing_rows_sql }}
{% endtest %}
