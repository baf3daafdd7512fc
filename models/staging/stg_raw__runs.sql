with source as (
    select * from {{ source('raw', 'runs') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(run_id as string) as run_id,
        cast(retriever as string) as retriever,
        cast(parameters as string) as parameters,
        cast(created_at as timestamp) as created_at,
        {#- a warehouse whose runs were all written before run versions: the write time stands in -#}
        {%- if execute and 'run_version' not in adapter.get_columns_in_relation(source('raw', 'runs')) | map(attribute='name') | map('lower') | list %}
        cast(created_at as string) as run_version
        {%- else %}
        cast(coalesce(run_version, cast(created_at as string)) as string) as run_version
        {%- endif %}
    from source
)

select * from renamed
