"""`make bi` (retrieval_metrics.bi): Apache Superset over the serving copy, its dashboard provisioned. Started on a
free port with a fresh home folder against a warehouse built in a temporary folder (the lesson's run plus two
runs that report their search latency), it answers the chart-data API for every chart with the warehouse's own
numbers, shows a new build without a restart, provisions again without changing anything, and draws every chart
of the dashboard in headless Chromium (`make test-bi`, after `make install-bi`; CI installs Chromium and
chromedriver)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics import api, bi

pytestmark = [pytest.mark.bi, pytest.mark.dbt]

ARTIFACTS = REPO_ROOT / "test-artifacts"
# Two runs with keyword_overlap's rankings and scores whose search took 2 ms and 40 ms per question.
LATENCY_RUNS = {"fast_run": 2.0, "slow_run": 40.0}
KEYWORD_OVERLAP_NDCG = {1: 0.6666666666666666, 2: 0.8068732785714351, 3: 0.8068732785714351}  # the lesson's

# Each chart's rows, read from the warehouse (the build file, not the serving copy Superset reads) by SQL of its
# own, and whether the chart lists them in that order (else they are compared as sets).
EXPECTED = {
    "Leaderboard": (
        ("select collection_id, k, run_position, run_id, ndcg, recall, precision, mrr, mean_average_precision, "
        "latency_p95_ms, ndcg_letters from run_leaderboard order by collection_id, k, run_position"), True),
    "NDCG@k per run": ("select run_id, k, ndcg from run_leaderboard", False),
    "NDCG@k with its 95% interval": (
        ("select collection_id, run_id, measure_name, k, value, ci_low, ci_high, n_questions from run_measures "
        "where measure = 'ndcg_cut' order by collection_id, k, run_id"), True),
    "NDCG@k against p95 latency": (
        ("select collection_id || ' / ' || run_id, k, latency_p95_ms, ndcg, recall from run_leaderboard "
        "where latency_p95_ms is not null"), False),
    "Headline NDCG of each retriever over time": (  # the time axis as the API gives it: epoch milliseconds
        ("select epoch_ms(date_trunc('second', written_at)), collection_id || ' / ' || retriever, max(headline_ndcg) "
         "from run_leaderboard group by all"), False),
    "Discriminative power per measure": (
        ("select collection_id, measure_name, discriminative_power, n_significant_pairs, n_pairs, n_questions, "
        "residual_variance, detectable_difference_t from measure_anova order by collection_id, measure_name"), True),
    "Per question": (
        ("select collection_id, run_id, question_id, k, ndcg, recall, reciprocal_rank, first_relevant_rank "
        "from question_metrics order by collection_id, run_id, question_id, k"), True),
}  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Superset:
    """A running Superset (its process, port, API client, provisioned ids) over a warehouse's serving copy."""

    def __init__(self, warehouse: Warehouse, process: subprocess.Popen[bytes], port: int, client: bi.Client,
                 ids: dict[str, Any], password: str) -> None:  # fmt: skip
        self.warehouse, self.process, self.port, self.client = warehouse, process, port, client
        self.ids, self.password = ids, password
        self.serving = warehouse.db_path.with_name("serving.duckdb")

    def data(self, name: str) -> list[tuple[Any, ...]]:
        """Chart `name`'s rows from the chart-data API (its saved query), in its columns' order."""
        (answer,) = self.client.call("GET", f"/api/v1/chart/{self.ids['charts'][name]}/data/")["result"]
        return [tuple(row[column] for column in answer["colnames"]) for row in answer["data"]]


def write_latency_run(warehouse: Warehouse, run_id: str, latency_ms: float) -> None:
    """keyword_overlap's rankings as run `run_id`, each question's search taking `latency_ms`."""
    rankings = warehouse.rows("select question_id, doc_id, score from raw.rankings where run_id = 'keyword_overlap'")
    api.write_run("docent", run_id, [(*row, latency_ms) for row in rankings], database=warehouse.db_path)


@pytest.fixture(scope="module")
def superset(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Superset]:
    if not bi.SUPERSET.exists():
        pytest.fail("Superset is not installed: make install-bi (make test-bi does)")
    folder = tmp_path_factory.mktemp("bi")
    warehouse = lesson.copy(folder / "warehouse")
    for run_id, latency_ms in LATENCY_RUNS.items():
        write_latency_run(warehouse, run_id, latency_ms)
    built = warehouse.cli("build")  # publishes serving.duckdb beside it
    assert built.returncode == 0, built.stderr
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RETRIEVAL_BI_HOME", str(folder / "home"))
        home = bi.bi_home()
        password = bi.prepare_home(home)
        bi.initialise(home, password)
        port = free_port()
        process = bi.start(home, port)
        try:
            client = bi.Client(f"http://127.0.0.1:{port}", password)
            ids = bi.provision(client, warehouse.db_path.with_name("serving.duckdb"))
            yield Superset(warehouse, process, port, client, ids, password)
        finally:
            process.terminate()
            process.wait(timeout=30)


def expected_rows(warehouse: Warehouse, name: str) -> list[tuple[Any, ...]]:
    sql, ordered = EXPECTED[name]
    rows = warehouse.rows(sql)
    return rows if ordered else sorted(rows, key=repr)


def test_every_chart_answers_with_the_warehouses_numbers(superset: Superset) -> None:
    assert set(superset.ids["charts"]) == {chart.name for chart in bi.CHARTS} == set(EXPECTED)
    for chart in bi.CHARTS:
        answer = superset.data(chart.name)
        ordered = EXPECTED[chart.name][1]
        assert (answer if ordered else sorted(answer, key=repr)) == expected_rows(superset.warehouse, chart.name)
        assert answer, chart.name
    # and the numbers the lesson and the latency runs give, by hand
    leaderboard = {(row[3], row[1]): row for row in superset.data("Leaderboard")}
    for k, ndcg_at_k in KEYWORD_OVERLAP_NDCG.items():
        assert leaderboard["keyword_overlap", k][4] == ndcg_at_k
        p95 = leaderboard["keyword_overlap", k][9]  # rank's built-in retrievers time each question too
        assert p95 is not None and p95 >= 0
        assert [leaderboard[run_id, k][9] for run_id in LATENCY_RUNS] == list(LATENCY_RUNS.values())
    ndcg = {(row[3], row[1]): row[4] for row in superset.data("Leaderboard")}
    recall = {(row[3], row[1]): row[5] for row in superset.data("Leaderboard")}
    latency = superset.data("NDCG@k against p95 latency")
    p95s = {**LATENCY_RUNS, "keyword_overlap": leaderboard["keyword_overlap", 1][9]}
    assert sorted(latency, key=repr) == sorted(
        [(f"docent / {run_id}", k, ms, ndcg[run_id, k], recall[run_id, k]) for run_id, ms in p95s.items()
         for k in (1, 2, 3)], key=repr)  # fmt: skip
    intervals = {(row[1], row[3]): row[4:7] for row in superset.data("NDCG@k with its 95% interval")}
    value, low, high = intervals["keyword_overlap", 2]
    assert value == KEYWORD_OVERLAP_NDCG[2] and low < value < high


def test_a_new_build_shows_without_a_restart(superset: Superset) -> None:
    before = superset.data("Leaderboard")
    write_latency_run(superset.warehouse, "superset_new_run", 7.5)
    assert superset.warehouse.cli("build").returncode == 0  # a new serving copy, renamed over the old one
    after = superset.data("Leaderboard")
    assert superset.process.poll() is None  # the same Superset
    assert len(after) == len(before) + 3  # k = 1, 2, 3
    assert {row[3] for row in after} - {row[3] for row in before} == {"superset_new_run"}
    assert {row[2] for row in superset.data("NDCG@k against p95 latency") if row[0] == "docent / superset_new_run"} \
        == {7.5}  # fmt: skip
    assert sorted(superset.data("NDCG@k per run"), key=repr) == expected_rows(superset.warehouse, "NDCG@k per run")


def test_provisioning_again_changes_nothing(superset: Superset) -> None:
    assert bi.provision(superset.client, superset.serving) == superset.ids
    database = superset.client.call("GET", f"/api/v1/database/{superset.ids['database']}/connection")["result"]
    assert json.loads(database["extra"])["engine_params"] == {"connect_args": {"read_only": True}}
    assert database["sqlalchemy_uri"] == f"duckdb:///{superset.serving.absolute()}"
    assert not database["allow_dml"]


def coloured_pixels(image: Image.Image) -> int:
    """Pixels of a colour (saturated: not white, grey or black): bars, bubbles, the tables' cell bars."""
    saturation = image.convert("RGB").convert("HSV").getchannel("S")
    return saturation.point(lambda s: 255 if s > 40 else 0).histogram()[255]


def inked_pixels(image: Image.Image) -> int:
    """Pixels darker than the page (text, rules): a table's cells, whose bars are pale or absent (all zeros)."""
    return image.convert("L").point(lambda v: 255 if v < 160 else 0).histogram()[255]


def test_the_dashboard_draws_every_chart_in_chromium(superset: Superset, tmp_path: Path) -> None:
    if shutil.which("chromedriver") is None and not Path("/usr/bin/chromedriver").exists():
        message = "chromedriver not found (the chromium-driver package)"
        pytest.fail(f"{message}: CI must install it (.ci/run does)") if os.environ.get("CI") else pytest.skip(message)
    url = f"http://127.0.0.1:{superset.port}/superset/dashboard/{bi.DASHBOARD_SLUG}/"
    png = tmp_path / "dashboard.png"
    done = subprocess.run([str(bi.SUPERSET.with_name("python")), str(REPO_ROOT / "bi" / "screenshot.py"), url,
                           bi.ADMIN, superset.password, str(png)],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["title"] == "Retrieval metrics", seen["title"]
    charts = {chart["title"]: chart for chart in seen["charts"]}
    assert list(charts) == [chart.name for chart in bi.CHARTS], seen
    image = Image.open(png)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(png, ARTIFACTS / "superset-dashboard.png")
    for chart in bi.CHARTS:
        drawn = charts[chart.name]
        assert not drawn["error"] and not drawn["loading"], drawn
        if chart.viz_type == "table":  # every row the chart-data API gives
            assert drawn["rows"] == len(superset.data(chart.name)), drawn
        else:  # ECharts draws on a canvas
            assert drawn["canvases"] >= 1, drawn
        left, top, right, bottom = drawn["box"]
        assert 0 <= top < bottom <= image.height and right - left > 300, drawn  # on the screenshot
        drawing = image.crop((left, top, right, bottom))
        assert (inked_pixels if chart.viz_type == "table" else coloured_pixels)(drawing) > 1000, drawn
