{#- Regression gate, on question_comparisons: fails when a gated run's mean of `measure_name` (as printed:
    ndcg_cut_2, recall_2, map, Judged@10) falls below the baseline's by more than `tolerance`. Its failure rows name the questions that got worse and by how
    much, with the run's mean difference. `run_ids` and `collection_id` default to the vars gated_run_ids and
    gated_collection_id; runs that are not in the collection are not checked. -#}
{% test no_regression_vs_baseline(model, measure_name, tolerance=0.0, run_ids=none, collection_id=none) %}
{%- set gated = run_ids if run_ids is not none else var('gated_run_ids') -%}
{%- set collection = collection_id if collection_id is not none else var('gated_collection_id') -%}
{%- if gated is string -%}{%- set gated = gated.split(',') -%}{%- endif -%}
{%- set failing_rows_sql -%}
with compared as (
    select *
    from {{ model }}
    where collection_id = '{{ collection }}'
        and measure_name = {{ sql_string(measure_name) }}
        and run_id in ({% for run_id in gated %}'{{ run_id | trim }}'{% if not loop.last %}, {% endif %}{% endfor %}{% if gated | length == 0 %}null{% endif %})
),

regressed_runs as (
    select run_id, avg(difference) as mean_difference
    from compared
    group by run_id
    having avg(difference) < -{{ tolerance }}
)

select
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
    on compared.run_id = regressed_runs.run_id
where compared.difference < 0
{%- endset -%}

{#- dbt prints only a count for a failing test: name the regressed questions in the log too -#}
{%- if execute -%}
    {%- set failing = run_query(failing_rows_sql ~ " order by run_id, difference, question_id") -%}
    {%- for row in failing.rows -%}
        {{ log("REGRESSION: run " ~ row[0] ~ " " ~ row[2] ~ " is " ~ "%.4f" % row[3] ~ " below " ~ row[1]
               ~ "; question " ~ row[4] ~ ": " ~ "%.4f" % row[5] ~ " -> " ~ "%.4f" % row[6]
               ~ " (" ~ "%+.4f" % row[7] ~ ")", info=true) }}
    {%- endfor -%}
{%- endif -%}

{{ failing_rows_sql }}
{% endtest %}
