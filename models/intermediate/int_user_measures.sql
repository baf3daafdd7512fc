-- One row per measure a user defined for a collection (its setting user_measures, retrieval_metrics/user_measures.py):
-- its kind (sql or python), description and definition. question_measures computes the SQL ones, and
-- int_user_measure_values the Python ones; measure_catalog lists them. Read from int_collection_settings when dbt runs.

{{ config(materialized="table") }}

-- depends_on: {{ ref('int_collection_settings') }}
{{ user_measures_select(ref('int_collection_settings')) }}
