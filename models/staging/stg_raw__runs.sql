{#- the raw columns a warehouse written by an older version may lack -#}
{%- set raw_columns = adapter.get_columns_in_relation(source('raw', 'runs')) | map(attribute='name') | map('lower') | list if execute else [] -%}

with source as (
    select * from {{ source('raw', 'runs') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(run_id as string) as run_id,
        cast(retriever as string) as retriever,
        cast(parameters as string) as parameters,
        {#- the run file's ir_metadata block (JSON text); null without one, and in a warehouse that never got one -#}
        {%- if 'ir_metadata' in raw_columns %}
        cast(ir_metadata as string) as ir_metadata,
        {%- else %}
        cast(null as string) as ir_metadata,
        {%- endif %}
        cast(created_at as timestamp) as created_at,
        {#- a warehouse whose runs were all written before run versions: the write time stands in -#}
        {%- if execute and 'run_version' not in raw_columns %}
        cast(created_at as string) as run_version
        {%- else %}
        cast(coalesce(run_version, cast(created_at as string)) as string) as run_version
        {%- endif %}
    from source
)

select * from renamed
