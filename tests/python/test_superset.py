"""`make bi` (retrieval_metrics.bi): Apache Superset over the serving copy, its dashboard provisioned. Started on a
free port with a fresh home folder, it answers the chart-data API for every chart with the warehouse's own
numbers, shows a new build without a restart, and draws the dashboard in headless Chromium (`make test-bi`,
after `make install-bi`; CI installs Chromium and chromedriver)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from PIL import Image

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics import api, bi

pytestmark = [pytest.mark.bi, pytest.mark.dbt]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Superset:
    def __init__(self, warehouse: Warehouse, port: int, client: bi.Client, ids: dict, password: str) -> None:
        self.warehouse, self.port, self.client, self.ids, self.password = warehouse, port, client, ids, password
        self.serving = warehouse.db_path.with_name("serving.duckdb")

    def data(self, chart: int) -> list[dict]:
        return self.client.call("GET", f"/api/v1/chart/{chart}/data/")["result"][0]["data"]


@pytest.fixture(scope="module")
def superset(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Superset]:
    if not bi.SUPERSET.exists():
        pytest.fail("Superset is not installed: make install-bi (make test-bi does)")
    folder = tmp_path_factory.mktemp("bi")
    warehouse = lesson.copy(folder / "warehouse")
    assert warehouse.cli("build").returncode == 0  # publishes serving.duckdb beside it
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
            yield Superset(warehouse, port, client, ids, password)
        finally:
            process.terminate()
            process.wait(timeout=30)


def warehouse_rows(serving: Path, chart: bi.Chart) -> list[dict]:
    """The chart's rows, computed from the serving copy directly with the chart's own columns and filters."""
    context = bi.query_context(0, chart)["queries"][0]
    where = f"where {context['extras']['where']}" if context["extras"] else ""
    if chart.params.get("query_mode") == "raw":
        columns = context["columns"]
        order = ", ".join(column for column, _ in context["orderby"])
        sql = f"select {', '.join(columns)} from {chart.table} {where} order by {order}"
    else:
        keys = context["columns"]
        metrics = ", ".join(f"{m['sqlExpression']} as {m['label']}" for m in context["metrics"])
        sql = f"select {', '.join(keys)}, {metrics} from {chart.table} {where} group by all order by all"
    with duckdb.connect(str(serving), read_only=True) as con:
        relation = con.sql(sql)
        return [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]


def sorted_rows(rows: list[dict]) -> list[list]:
    return sorted(([row[key] for key in sorted(row)] for row in rows), key=json.dumps)


def test_every_chart_answers_with_the_warehouses_numbers(superset: Superset) -> None:
    assert set(superset.ids["charts"]) == {chart.name for chart in bi.CHARTS}
    for chart in bi.CHARTS:
        answer = superset.data(superset.ids["charts"][chart.name])
        expected = warehouse_rows(superset.serving, chart)
        assert len(answer) == len(expected) > 0, chart.name
        if chart.params.get("query_mode") == "raw":  # in the chart's order
            assert [[row[c] for c in chart.params["all_columns"]] for row in answer] == [
                [row[c] for c in chart.params["all_columns"]] for row in expected], chart.name
        else:
            assert sorted_rows(answer) == sorted_rows(expected), chart.name


def test_a_new_build_shows_without_a_restart(superset: Superset) -> None:
    leaderboard = superset.ids["charts"]["Leaderboard"]
    before = superset.data(leaderboard)
    rows = [(q, "auth", 1.0) for q in ("rate_limit_status", "pro_rate_limit")]
    api.write_run("docent", "superset_new_run", rows, database=superset.warehouse.db_path)
    assert superset.warehouse.cli("build").returncode == 0
    after = superset.data(leaderboard)
    assert len(after) == len(before) + 3  # k = 1, 2, 3
    assert {row["run_id"] for row in after} - {row["run_id"] for row in before} == {"superset_new_run"}


def test_provisioning_again_changes_nothing(superset: Superset) -> None:
    assert bi.provision(superset.client, superset.serving) == superset.ids


def test_the_dashboard_draws_its_charts_in_chromium(superset: Superset, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{superset.port}/superset/dashboard/{bi.DASHBOARD_SLUG}/"
    png = tmp_path / "dashboard.png"
    done = subprocess.run([str(bi.SUPERSET.with_name("python")), str(REPO_ROOT / "bi" / "screenshot.py"), url,
                           superset.password, str(png), str(len(bi.CHARTS))],
                          capture_output=True, text=True, timeout=240, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    tables = sum(chart.viz_type == "table" for chart in bi.CHARTS)
    assert seen["charts"] == len(bi.CHARTS) and seen["tables"] >= tables and seen["canvases"] >= 1, seen
    shades = Image.open(png).convert("L").getcolors(maxcolors=256) or []
    assert len(shades) > 50  # drawn: many shades of grey, not a blank page


def test_a_taken_port_and_a_missing_superset_are_one_line(
    superset: Superset, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_DB", str(superset.warehouse.db_path))
    assert bi.main(["--port", str(superset.port)]) == 2
    assert capsys.readouterr().err == (f"retrieval-metrics bi: error: port {superset.port} on 127.0.0.1 is taken: "
                                       "stop what holds it or pass --port\n")  # fmt: skip
    monkeypatch.setattr(bi, "SUPERSET", Path("/nonexistent/superset"))
    assert bi.main(["--port", str(free_port())]) == 2
    assert capsys.readouterr().err == ("retrieval-metrics bi: error: Superset is not installed: run `make install-bi` "
                                       "(it goes into .venv/superset)\n")  # fmt: skip
