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
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_metrics.warehouse import REPO_ROOT, InputError, database_path, serving_path, shown

SUPERSET = REPO_ROOT / ".venv" / "superset" / "bin" / "superset"
DATABASE_NAME = "retrieval-metrics (serving copy)"
DASHBOARD_SLUG = "retrieval-metrics"
ADMIN = "admin"


@dataclass(frozen=True)
class Chart:
    """A chart of the dashboard: its name, Superset viz type, the mart it reads, and its form data."""

    name: str
    viz_type: str
    table: str
    params: dict[str, Any]


def raw_table(columns: list[str], order_by: list[str], where: str = "") -> dict[str, Any]:
    """A table chart's form data listing rows as they are (query mode raw)."""
    return {"query_mode": "raw", "all_columns": columns, "order_by_cols": [json.dumps([c, True]) for c in order_by],
            "row_limit": 10000, "adhoc_filters": sql_filter(where), "server_pagination": False}  # fmt: skip


def sql_filter(where: str) -> list[dict[str, Any]]:
    return [{"expressionType": "SQL", "clause": "WHERE", "sqlExpression": where}] if where else []


def metric(column: str, label: str) -> dict[str, Any]:
    return {"expressionType": "SQL", "sqlExpression": f"MAX({column})", "label": label}


CHARTS = (
    Chart("Leaderboard", "table", "run_leaderboard", raw_table(
        ["collection_id", "k", "run_position", "run_id", "ndcg", "recall", "precision", "mrr",
         "mean_average_precision"], ["collection_id", "k", "run_position"])),
    Chart("NDCG by k, per run", "echarts_timeseries_bar", "run_leaderboard", {
        "x_axis": "run_id", "metrics": [metric("ndcg", "ndcg")], "groupby": ["k"], "adhoc_filters": [],
        "row_limit": 10000, "x_axis_sort_asc": True, "show_legend": True}),
    Chart("NDCG with its 95% interval", "table", "run_measures", raw_table(
        ["collection_id", "run_id", "k", "value", "ci_low", "ci_high"], ["collection_id", "run_id", "k"],
        "measure = 'ndcg'")),
    Chart("NDCG against latency", "table", "run_leaderboard", raw_table(
        ["collection_id", "run_id", "k", "ndcg", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms"],
        ["collection_id", "run_id", "k"])),
    Chart("Per question", "table", "question_metrics", raw_table(
        ["collection_id", "run_id", "question_id", "k", "ndcg", "recall", "reciprocal_rank", "first_relevant_rank"],
        ["collection_id", "run_id", "question_id", "k"])),
)


def bi_home() -> Path:
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
        "PREVENT_UNSAFE_DB_CONNECTIONS = False  # a DuckDB file is a local database\n"
        "WTF_CSRF_TIME_LIMIT = None\n"
        "FEATURE_FLAGS = {'DASHBOARD_RBAC': False}\n"
    )
    return password


def superset_env(home: Path) -> dict[str, str]:
    return {**os.environ, "SUPERSET_CONFIG_PATH": str(home / "superset_config.py"), "SUPERSET_HOME": str(home),
            "FLASK_APP": "superset"}  # fmt: skip


def superset(home: Path, *args: str) -> None:
    done = subprocess.run([str(SUPERSET), *args], env=superset_env(home), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["?"]
        raise InputError(f"superset {args[0]} failed: {tail[0]}")


def initialise(home: Path, password: str) -> None:
    """Superset's metadata, its admin and roles: once per install of Superset (stamped with its version)."""
    version = SUPERSET.resolve().parent.parent.name + ":" + str(SUPERSET.stat().st_mtime)
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
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise InputError(f"port {port} on 127.0.0.1 is taken: stop what holds it or pass --port") from None


def start(home: Path, port: int) -> subprocess.Popen[bytes]:
    """`superset run` on 127.0.0.1:port (its log in the home folder), once it answers /health."""
    log = (home / "superset.log").open("ab")
    process = subprocess.Popen([str(SUPERSET), "run", "-h", "127.0.0.1", "-p", str(port), "--with-threads"],
                               env=superset_env(home), stdout=log, stderr=log)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise InputError(f"superset stopped (exit {process.returncode}); its log: {shown(home / 'superset.log')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return process
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise InputError(f"superset did not answer on port {port} in 120 s; its log: {shown(home / 'superset.log')}")


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
    """What the chart-data API runs for the chart: the same columns, metrics and filters as its form data."""
    params = chart.params
    filters = params.get("adhoc_filters", [])
    where = " and ".join(f"({f['sqlExpression']})" for f in filters)
    query: dict[str, Any] = {"extras": {"where": where} if where else {}, "row_limit": params.get("row_limit", 10000)}
    if params.get("query_mode") == "raw":
        query |= {"columns": params["all_columns"], "metrics": [],
                  "orderby": [[c, True] for c in (json.loads(o)[0] for o in params["order_by_cols"])]}  # fmt: skip
    else:
        query |= {"columns": [params["x_axis"], *params["groupby"]], "metrics": params["metrics"],
                  "orderby": [[params["x_axis"], True]]}
    return {"datasource": {"id": dataset, "type": "table"}, "queries": [query],
            "form_data": {**params, "viz_type": chart.viz_type, "datasource": f"{dataset}__table"},
            "result_format": "json", "result_type": "full"}  # fmt: skip


def provision(client: Client, serving: Path) -> dict[str, Any]:
    """The serving copy as a read-only database, its datasets, the charts and the dashboard; their ids."""
    database = client.upsert("database", "database_name", {
        "database_name": DATABASE_NAME, "sqlalchemy_uri": f"duckdb:///{serving.absolute()}",
        "extra": json.dumps({"engine_params": {"connect_args": {"read_only": True}}}), "expose_in_sqllab": True})
    datasets: dict[str, int] = {}
    for table in sorted({chart.table for chart in CHARTS}):
        found = client.call("GET", "/api/v1/dataset/?q=" + urllib.request.quote(json.dumps({"filters": [
            {"col": "table_name", "opr": "eq", "value": table}, {"col": "database", "opr": "rel_o_m", "value": database}]})))
        existing = found["result"]
        datasets[table] = int(existing[0]["id"]) if existing else int(
            client.call("POST", "/api/v1/dataset/", {"database": database, "schema": "main", "table_name": table})["id"])
    dashboard = client.upsert("dashboard", "slug", {"dashboard_title": "Retrieval metrics", "slug": DASHBOARD_SLUG,
                                                    "published": True}, update=False)  # fmt: skip
    charts = {}
    for chart in CHARTS:
        dataset = datasets[chart.table]
        charts[chart.name] = client.upsert("chart", "slice_name", {
            "slice_name": chart.name, "viz_type": chart.viz_type, "datasource_id": dataset,
            "datasource_type": "table", "params": json.dumps({**chart.params, "viz_type": chart.viz_type,
                                                              "datasource": f"{dataset}__table"}),
            "query_context": json.dumps(query_context(dataset, chart)), "dashboards": [dashboard]})
    for stale in client.call("GET", f"/api/v1/dashboard/{dashboard}/charts")["result"]:
        if int(stale["id"]) not in charts.values():  # a chart an earlier version of CHARTS made
            client.call("DELETE", f"/api/v1/chart/{stale['id']}")
    client.call("PUT", f"/api/v1/dashboard/{dashboard}", {"position_json": json.dumps(layout(charts))})
    return {"database": database, "datasets": datasets, "charts": charts, "dashboard": dashboard}


def layout(charts: dict[str, int]) -> dict[str, Any]:
    """The dashboard's grid: two charts a row, each half the width."""
    position: dict[str, Any] = {"DASHBOARD_VERSION_KEY": "v2", "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID",
                                "children": ["GRID_ID"]}, "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": []}}  # fmt: skip
    names = list(charts)
    for row_number in range(0, len(names), 2):
        row = f"ROW-{row_number}"
        position["GRID_ID"]["children"].append(row)
        position[row] = {"type": "ROW", "id": row, "children": [], "meta": {"background": "BACKGROUND_TRANSPARENT"}}
        for name in names[row_number:row_number + 2]:
            key = f"CHART-{charts[name]}"
            position[row]["children"].append(key)
            position[key] = {"type": "CHART", "id": key, "children": [],
                             "meta": {"chartId": charts[name], "width": 6, "height": 60, "sliceName": name}}  # fmt: skip
    return position


def run(port: int, serving: Path, provision_only: bool = False) -> None:
    if not SUPERSET.exists():
        raise InputError("Superset is not installed: run `make install-bi` (it goes into .venv/superset)")
    if not serving.exists():
        raise InputError(f"{shown(serving)} does not exist: run `make run` (or `retrieval-metrics build`) first")
    check_port(port)
    home = bi_home()
    password = prepare_home(home)
    initialise(home, password)
    process = start(home, port)
    try:
        ids = provision(Client(f"http://127.0.0.1:{port}", password), serving)
        url = f"http://127.0.0.1:{port}/superset/dashboard/{DASHBOARD_SLUG}/"
        print(f"retrieval-metrics bi: {url} (user {ADMIN}, password in {shown(home / 'admin_password')}); "
              f"charts {sorted(ids['charts'].values())} over {shown(serving)}", flush=True)  # fmt: skip
        if not provision_only:
            process.wait()
    finally:
        if provision_only or process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval_metrics.bi", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8088, help="the port on 127.0.0.1 (default 8088)")
    parser.add_argument("--provision-only", action="store_true", help="provision, then stop Superset")
    args = parser.parse_args(argv)
    try:
        run(args.port, serving_path(database_path()), args.provision_only)
    except InputError as exc:
        print(f"retrieval-metrics bi: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
