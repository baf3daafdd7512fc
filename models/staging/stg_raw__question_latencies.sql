-- One row per (collection, run, question) whose search time the run reports (plug-in retrievers, the Python
-- API). Empty in a warehouse written before latencies were recorded.
{%- set latencies = source('raw', 'question_latencies') %}
{%- set present = not execute or adapter.get_relation(
    database=latencies.database, schema=latencies.schema, identifier=latencies.identifier) is not none %}

with source as (
    {%- if present %}
    select * from {{ latencies }}
    {%- else %}
    select null as collection_id, null as run_id, null as question_id, null as latency_ms where false
    {%- endif %}
)

select
    cast(collection_id as string) as collection_id,
    cast(run_id as string) as run_id,
    cast(question_id as string) as question_id,
    cast(latency_ms as double) as latency_ms
from source
