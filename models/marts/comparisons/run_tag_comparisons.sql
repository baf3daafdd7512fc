-- One row per (collection, run, baseline, tag, measure name): run_comparisons over the questions of one tag
-- (run_comparison_tests), with each test's p-values adjusted by Holm-Bonferroni within one family: the
-- runs compared with the same baseline on the same measure name over the same tag. Tags are not pooled: each
-- slice is its own question. Rebuilt whole from the per-run tests, as run_comparisons.

{{ comparisons_with_holm('(select * from ' ~ ref('run_comparison_tests') ~ ' where tag is not null) as tests_by_tag', ['collection_id', 'baseline_run_id', 'tag', 'measure_name'],
                         ['collection_id', 'run_id', 'baseline_run_id', 'tag', 'measure_name']) }}
