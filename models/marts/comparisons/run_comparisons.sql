-- One row per (collection, run, baseline, measure name): paired significance of the run against the baseline
-- (run_comparison_tests over all the questions: t-test, randomization test, effect size), with each test's p-values adjusted by
-- Holm-Bonferroni within one family: the runs compared with the same baseline on the same measure name (one
-- collection, one measure, one k); measures and cutoffs are not pooled (macros/run_aggregates.sql has Holm's
-- rule). A run added to a family changes its neighbours' adjusted values, so this mart is rebuilt whole
-- (a few rows per run) from the per-run tests.

{{ comparisons_with_holm('(select * from ' ~ ref('run_comparison_tests') ~ ' where tag is null) as tests_of_every_question', ['collection_id', 'baseline_run_id', 'measure_name'],
                         ['collection_id', 'run_id', 'baseline_run_id', 'measure_name']) }}
