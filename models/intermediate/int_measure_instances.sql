-- One row per measure instance a collection lists (its setting `measures`, macros/measure_instances.sql), and per
-- grade its gain map sets: the registry measure it is, its cutoff and parameters, its name as ir_measures prints
-- it and trec_eval's where trec_eval computes the same. Read from int_collection_settings when dbt runs.
-- A table, built once per build: question_measures and run_measures read it.

{{ config(materialized="table") }}

-- depends_on: {{ ref('int_collection_settings') }}
{{ measure_instances_select(ref('int_collection_settings')) }}
