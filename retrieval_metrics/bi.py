"""`make bi`: Apache Superset on 127.0.0.1 over the serving copy, with the warehouse's dashboard provisioned.

Superset lives in an environment of its own (.venv/superset, `make install-bi`, pinned in requirements-bi.txt);
this module drives it from outside: it writes Superset's config, secret key and admin password into a folder
outside git (`$RETRIEVAL_BI_HOME`, default ~/.config/retrieval-metrics/superset; the secrets are mode 0600 and
made once per install), initialises its metadata (an embedded SQLite file in that folder), starts
`superset run` on 127.0.0.1, and provisions through Superset's REST API, idempotently: the serving copy as a
read-only database, one dataset per mart the charts read, the charts of CHARTS and the dashboard holding them.
Superset opens a new connection for each query, so each build's new serving copy shows without a restart.

    python -m retrieval_metrics.bi [--port 8088] [--provision-only]
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retrieval_metrics.warehouse import REPO_ROOT, InputError, database_path, serving_path, shown

SUPERSET = REPO_ROOT / ".venv" / "superset" / "bin" / "superset"
DATABASE_NAME = "retrieval-metrics (serving copy)"
DASHBOARD_SLUG = "retrieval-metrics"
ADMIN = "admin"


@dataclass(frozen=True)
class Chart:
    """A chart of the dashboard: its name, Superset viz type and the mart it reads; the query's columns (the
    group-by columns where it has metrics), metrics, order and filter; and the viz's other form data."""

    name: str
    viz_type: str
    table: str
    columns: tuple[str | dict[str, str], ...]
    metrics: tuple[dict[str, str], ...] = ()
    order_by: tuple[str, ...] = ()
    where: str = ""
    options: dict[str, Any] = field(default_factory=dict)


def metric(sql: str, label: str) -> dict[str, str]:
    """A metric as SQL, under a label (the column name the chart-data API answers with)."""
    return {"expressionType": "SQL", "sqlExpression": sql, "label": label}


def three_decimals(*columns: str) -> dict[str, Any]:
    """A table's form data showing these columns with three decimals."""
    return {"column_config": {column: {"d3NumberFormat": ".3f"} for column in columns}}


ROW_LIMIT = 10000
RUN = {"expressionType": "SQL", "sqlExpression": "collection_id || ' / ' || run_id", "label": "run"}
RETRIEVER = {"expressionType": "SQL", "sqlExpression": "collection_id || ' / ' || retriever", "label": "retriever"}
# when each run was written, to the second (Superset's time grain PT1S), as the x axis of a time series
WRITTEN_AT = {"expressionType": "SQL", "sqlExpression": "written_at", "label": "written_at", "columnType": "BASE_AXIS",
              "timeGrain": "PT1S"}
CHARTS = (
    Chart("Leaderboard", "table", "run_leaderboard",
          ("collection_id", "k", "run_position", "run_id", "ndcg", "recall", "precision", "mrr",
           "mean_average_precision", "latency_p95_ms", "ndcg_letters"),
          order_by=("collection_id", "k", "run_position"),
          options=three_decimals("ndcg", "recall", "precision", "mrr", "mean_average_precision")),
    Chart("NDCG@k per run", "echarts_timeseries_bar", "run_leaderboard", ("run_id", "k"),
          (metric("MAX(ndcg)", "NDCG@k"),), order_by=("run_id",),
          options={"x_axis_sort_asc": True, "show_legend": True, "y_axis_format": ".3f"}),
    Chart("NDCG@k with its 95% interval", "table", "run_measures",
          ("collection_id", "run_id", "measure_name", "k", "value", "ci_low", "ci_high", "n_questions"),
          order_by=("collection_id", "k", "run_id"), where="measure = 'ndcg_cut'",
          options=three_decimals("value", "ci_low", "ci_high")),
    Chart("NDCG@k against p95 latency", "bubble_v2", "run_leaderboard", (RUN, "k"),
          (metric("MAX(latency_p95_ms)", "p95 latency ms"), metric("MAX(ndcg)", "NDCG@k"),
           metric("MAX(recall)", "Recall@k")),
          where="latency_p95_ms IS NOT NULL",
          options={"x_axis_label": "p95 search latency per question, ms (log scale; bubble: Recall@k)",
                   "y_axis_label": "NDCG@k", "logXAxis": True, "max_bubble_size": "25", "opacity": 0.7,
                   "x_axis_title_margin": 30, "y_axis_title_margin": 40, "y_axis_format": ".3f"}),
    Chart("Headline NDCG of each retriever over time", "echarts_timeseries_line", "run_leaderboard",
          (WRITTEN_AT, RETRIEVER), (metric("MAX(headline_ndcg)", "headline NDCG"),),
          options={"time_grain_sqla": "PT1S", "markerEnabled": True, "markerSize": 8, "show_legend": True,
                   "y_axis_format": ".3f", "x_axis_title": "written at (UTC)", "x_axis_title_margin": 30}),
    Chart("Discriminative power per measure", "table", "measure_anova",
          ("collection_id", "measure_name", "discriminative_power", "n_significant_pairs", "n_pairs", "n_questions",
           "residual_variance", "detectable_difference_t"),
          order_by=("collection_id", "measure_name"),
          options=three_decimals("discriminative_power", "residual_variance", "detectable_difference_t")),
    Chart("Per question", "table", "question_metrics",
          ("collection_id", "run_id", "question_id", "k", "ndcg", "recall", "reciprocal_rank", "first_relevant_rank"),
          order_by=("collection_id", "run_id", "question_id", "k"),
          options=three_decimals("ndcg", "recall", "reciprocal_rank")),
)  # fmt: skip


def form_data(chart: Chart) -> dict[str, Any]:
    """The chart's form data (what Superset's explore view edits), by viz type."""
    common = {"viz_type": chart.viz_type, "row_limit": ROW_LIMIT, "adhoc_filters": sql_filter(chart.where)}
    if chart.viz_type == "table":
        shape: dict[str, Any] = {"query_mode": "raw", "all_columns": list(chart.columns), "server_pagination": False,
                                 "order_by_cols": [json.dumps([column, True]) for column in chart.order_by]}  # fmt: skip
    elif chart.viz_type in ("echarts_timeseries_bar", "echarts_timeseries_line"):
        x_axis = chart.columns[0]
        shape = {"x_axis": x_axis["label"] if isinstance(x_axis, dict) else x_axis, "groupby": list(chart.columns[1:]),
                 "metrics": list(chart.metrics)}
    elif chart.viz_type == "bubble_v2":
        x, y, size = chart.metrics
        shape = {"entity": chart.columns[0], "series": chart.columns[1], "x": x, "y": y, "size": size}
    else:
        raise ValueError(f"no form data for viz type {chart.viz_type}")
    return {**common, **shape, **chart.options}


def sql_filter(where: str) -> list[dict[str, Any]]:
    """A WHERE clause as the adhoc filter of a chart's form data."""
    return [{"expressionType": "SQL", "clause": "WHERE", "sqlExpression": where}] if where else []


def bi_home() -> Path:
    """Superset's folder, outside git: $RETRIEVAL_BI_HOME, else ~/.config/retrieval-metrics/superset."""
    return Path(os.environ.get("RETRIEVAL_BI_HOME") or Path.home() / ".config" / "retrieval-metrics" / "superset")


def secret(home: Path, name: str) -> str:
    """A secret of this install, made once (mode 0600) and read after."""
    path = home / name
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(32))
    return path.read_text().strip()


def prepare_home(home: Path) -> str:
    """Superset's folder: config, secret key, admin password (returned), metadata database location."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    secret(home, "secret_key")
    password = secret(home, "admin_password")
    (home / "superset_config.py").write_text(
        "# Written by retrieval_metrics.bi: Superset for the retrieval-metrics serving copy, on 127.0.0.1 only.\n"
        "from pathlib import Path\n"
        "HOME = Path(__file__).parent\n"
        "SECRET_KEY = (HOME / 'secret_key').read_text().strip()\n"
        "SQLALCHEMY_DATABASE_URI = f\"sqlite:///{HOME / 'superset.db'}\"\n"
        "WTF_CSRF_TIME_LIMIT = None\n"
        "FEATURE_FLAGS = {'DASHBOARD_RBAC': False}\n"
    )
    return password


def superset_env(home: Path) -> dict[str, str]:
    """The environment of Superset's commands: its config and home in `home`."""
    return {**os.environ, "SUPERSET_CONFIG_PATH": str(home / "superset_config.py"), "SUPERSET_HOME": str(home),
            "FLASK_APP": "superset"}  # fmt: skip


def superset(home: Path, *args: str) -> None:
    """A `superset` command (db upgrade, init, fab ...); its last line of output if it fails."""
    done = subprocess.run([str(SUPERSET), *args], env=superset_env(home), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["?"]
        raise InputError(f"superset {args[0]} failed: {tail[0]}")


def initialise(home: Path, password: str) -> None:
    """Superset's metadata, its admin and roles: once per install of Superset (stamped with its script's mtime)."""
    version = str(SUPERSET.stat().st_mtime)
    stamp = home / "initialised"
    if stamp.exists() and stamp.read_text() == version:
        return
    superset(home, "db", "upgrade")
    superset(home, "fab", "create-admin", "--username", ADMIN, "--firstname", "retrieval", "--lastname", "metrics",
             "--email", "admin@localhost", "--password", password)  # fmt: skip
    superset(home, "fab", "reset-password", "--username", ADMIN, "--password", password)
    superset(home, "init")
    stamp.write_text(version)


def check_port(port: int) -> None:
    """Refuse a port something on 127.0.0.1 already holds, before anything starts."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Superset's server binds: TIME_WAIT is free
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            message = f"port {port} on 127.0.0.1 is taken: stop what holds it or pass --port (make bi BI_PORT=...)"
            raise InputError(message) from None


def start(home: Path, port: int) -> subprocess.Popen[bytes]:
    """`superset run` on 127.0.0.1:port (its log in the home folder), once it answers /health."""
    log = (home / "superset.log").open("ab")
    process = subprocess.Popen([str(SUPERSET), "run", "-h", "127.0.0.1", "-p", str(port), "--with-threads"],
                               env=superset_env(home), stdout=log, stderr=log)  # fmt: skip
    try:
        wait_until_healthy(process, home, port)
    except BaseException:  # not answering, or Ctrl-C while it starts: leave no server behind
        stop(process)
        raise
    return process


def wait_until_healthy(process: subprocess.Popen[bytes], home: Path, port: int, timeout: float = 120) -> None:
    """Return once Superset answers /health; refuse if it exits or stays silent for `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise InputError(f"superset stopped (exit {process.returncode}); its log: {shown(home / 'superset.log')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise InputError(f"superset did not answer on port {port} in {timeout:.0f} s; its log: {shown(home / 'superset.log')}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop Superset's server (SIGTERM, then SIGKILL after 30 s)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Client:
    """Superset's REST API as its admin: a JWT for the API and the session's CSRF token for writes."""

    def __init__(self, url: str, password: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.headers: dict[str, str] = {}
        login = {"username": ADMIN, "password": password, "provider": "db", "refresh": False}
        self.headers["Authorization"] = f"Bearer {self.call('POST', '/api/v1/security/login', login)['access_token']}"
        self.headers["X-CSRFToken"] = self.call("GET", "/api/v1/security/csrf_token/")["result"]
        self.headers["Referer"] = url

    def call(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = self.headers if data is None else {**self.headers, "Content-Type": "application/json"}
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=120) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise InputError(f"superset {method} {path}: HTTP {exc.code}: {exc.read()[:300]!r}") from None

    def find(self, kind: str, column: str, value: str) -> int | None:
        query = json.dumps({"filters": [{"col": column, "opr": "eq", "value": value}]})
        found = self.call("GET", f"/api/v1/{kind}/?q={urllib.request.quote(query)}")["result"]
        return int(found[0]["id"]) if found else None

    def upsert(self, kind: str, column: str, body: dict[str, Any], update: bool = True) -> int:
        """The id of the `kind` whose `column` is body[column]: created, or updated with body."""
        existing = self.find(kind, column, body[column])
        if existing is None:
            return int(self.call("POST", f"/api/v1/{kind}/", body)["id"])
        if update:
            self.call("PUT", f"/api/v1/{kind}/{existing}", body)
        return existing


def query_context(dataset: int, chart: Chart) -> dict[str, Any]:
    """What the chart-data API runs for the chart (GET /api/v1/chart/<id>/data/): its columns, metrics, order
    and filter, as its form data has them."""
    query: dict[str, Any] = {
        "columns": list(chart.columns), "metrics": list(chart.metrics), "row_limit": ROW_LIMIT,
        "orderby": [[column, True] for column in chart.order_by], "extras": {"where": chart.where} if chart.where else {},
    }  # fmt: skip
    return {"datasource": {"id": dataset, "type": "table"}, "queries": [query],
            "form_data": {**form_data(chart), "datasource": f"{dataset}__table"},
            "result_format": "json", "result_type": "full"}  # fmt: skip


def ensure_dataset(client: Client, database: int, table: str) -> int:
    """The id of the dataset of mart `table`: created, or its columns read again (a build may have added some)."""
    filters = [{"col": "table_name", "opr": "eq", "value": table}, {"col": "database", "opr": "rel_o_m", "value": database}]
    found = client.call("GET", "/api/v1/dataset/?q=" + urllib.request.quote(json.dumps({"filters": filters})))["result"]
    if not found:
        return int(client.call("POST", "/api/v1/dataset/", {"database": database, "schema": "main", "table_name": table})["id"])
    client.call("PUT", f"/api/v1/dataset/{found[0]['id']}/refresh")
    return int(found[0]["id"])


def provision(client: Client, serving: Path) -> dict[str, Any]:
    """The serving copy as a read-only database, its datasets, the charts and the dashboard; their ids."""
    database = client.upsert("database", "database_name", {
        "database_name": DATABASE_NAME, "sqlalchemy_uri": f"duckdb:///{serving.absolute()}",
        "extra": json.dumps({"engine_params": {"connect_args": {"read_only": True}}}), "expose_in_sqllab": True})
    datasets = {table: ensure_dataset(client, database, table) for table in sorted({chart.table for chart in CHARTS})}
    dashboard = client.upsert("dashboard", "slug", {"dashboard_title": "Retrieval metrics", "slug": DASHBOARD_SLUG,
                                                    "published": True}, update=False)  # fmt: skip
    charts = {}
    for chart in CHARTS:
        dataset = datasets[chart.table]
        charts[chart.name] = client.upsert("chart", "slice_name", {
            "slice_name": chart.name, "viz_type": chart.viz_type, "datasource_id": dataset,
            "datasource_type": "table", "params": json.dumps({**form_data(chart), "datasource": f"{dataset}__table"}),
            "query_context": json.dumps(query_context(dataset, chart)), "dashboards": [dashboard]})
    for stale in client.call("GET", f"/api/v1/dashboard/{dashboard}/charts")["result"]:
        if int(stale["id"]) not in charts.values():  # a chart an earlier version of CHARTS made
            client.call("DELETE", f"/api/v1/chart/{stale['id']}")
    client.call("PUT", f"/api/v1/dashboard/{dashboard}", {"position_json": json.dumps(layout(charts))})
    return {"database": database, "datasets": datasets, "charts": charts, "dashboard": dashboard}


def layout(charts: dict[str, int]) -> dict[str, Any]:
    """The dashboard's grid: two charts a row, each half the width (a last one alone, the whole width)."""
    position: dict[str, Any] = {"DASHBOARD_VERSION_KEY": "v2", "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID",
                                "children": ["GRID_ID"]}, "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": []}}  # fmt: skip
    names = list(charts)
    for row_number in range(0, len(names), 2):
        row = f"ROW-{row_number}"
        position["GRID_ID"]["children"].append(row)
        position[row] = {"type": "ROW", "id": row, "children": [], "meta": {"background": "BACKGROUND_TRANSPARENT"}}
        in_row = names[row_number:row_number + 2]
        for name in in_row:
            key = f"CHART-{charts[name]}"
            position[row]["children"].append(key)
            position[key] = {"type": "CHART", "id": key, "children": [], "meta": {
                "chartId": charts[name], "width": 12 // len(in_row), "height": 60, "sliceName": name}}  # fmt: skip
    return position


def run(port: int, serving: Path, provision_only: bool = False) -> None:
    """Check, prepare, start and provision Superset; then wait for it (Ctrl-C), or stop it with provision_only."""
    if not SUPERSET.exists():
        raise InputError("Superset is not installed: run `make install-bi` (it goes into .venv/superset)")
    if not serving.exists():
        raise InputError(f"{shown(serving)} does not exist: run `make run` (or `retrieval-metrics build`) first")
    check_port(port)
    home = bi_home()
    password = prepare_home(home)
    print(f"retrieval-metrics bi: starting Superset on 127.0.0.1:{port} (files in {shown(home)})", file=sys.stderr,
          flush=True)  # fmt: skip
    initialise(home, password)
    process = start(home, port)
    try:
        ids = provision(Client(f"http://127.0.0.1:{port}", password), serving)
        url = f"http://127.0.0.1:{port}/superset/dashboard/{DASHBOARD_SLUG}/"
        print(f"retrieval-metrics bi: {url} (user {ADMIN}, password in {shown(home / 'admin_password')}); "
              f"charts {sorted(ids['charts'].values())} over {shown(serving)}; Ctrl-C stops it", flush=True)  # fmt: skip
        if not provision_only and process.wait() != 0:
            raise InputError(f"superset stopped (exit {process.returncode}); its log: {shown(home / 'superset.log')}")
    finally:
        stop(process)


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP as Ctrl-C: `run` then stops Superset before exiting, leaving no server behind."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupt)


def main(argv: list[str] | None = None) -> int:
    """`make bi`: 0 once stopped; 2 with one line on stderr where it cannot start; 130 on Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m retrieval_metrics.bi", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8088, help="the port on 127.0.0.1 (default 8088)")
    parser.add_argument("--provision-only", action="store_true", help="provision, then stop Superset")
    args = parser.parse_args(argv)
    try:
        stop_on_signals()
        run(args.port, serving_path(database_path()), args.provision_only)
    except InputError as exc:
        print(f"retrieval-metrics bi: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
