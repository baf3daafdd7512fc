"""`make bi`'s refusals (retrieval_metrics.bi), each one line and exit 2, before anything starts: Superset not
installed, no serving copy yet, the port taken. No Superset needed: these run in `make test-fast`."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO_ROOT
from retrieval_metrics import bi


@pytest.fixture
def serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A warehouse folder whose serving copy exists (an empty file: nothing here opens it)."""
    monkeypatch.setenv("RETRIEVAL_DB", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.delenv("RETRIEVAL_SERVING_DB", raising=False)
    monkeypatch.setenv("RETRIEVAL_BI_HOME", str(tmp_path / "home"))
    (tmp_path / "serving.duckdb").touch()
    monkeypatch.setattr(bi, "SUPERSET", Path(sys.executable))  # "installed"
    return tmp_path / "serving.duckdb"


def error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    return captured.err


def test_superset_not_installed(serving: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setattr(bi, "SUPERSET", Path("/nonexistent/superset"))
    assert bi.main(["--port", "8088"]) == 2
    assert error(capsys) == ("retrieval-metrics bi: error: Superset is not installed: run `make install-bi` "
                             "(it goes into .venv/superset)\n")  # fmt: skip


def test_no_serving_copy(serving: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serving.unlink()
    assert bi.main(["--port", "8088"]) == 2
    assert "serving.duckdb does not exist: run `make run`" in error(capsys)


def test_the_port_taken(serving: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert bi.main(["--port", str(port)]) == 2
    assert error(capsys) == (f"retrieval-metrics bi: error: port {port} on 127.0.0.1 is taken: stop what holds it "
                             "or pass --port (make bi BI_PORT=...)\n")  # fmt: skip
    assert not (serving.parent / "home").exists()  # refused before writing anything


def test_secrets_are_made_once_and_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    password = bi.prepare_home(home)
    assert len(password) >= 40 and bi.prepare_home(home) == password
    for name in ("secret_key", "admin_password"):
        assert (home / name).stat().st_mode & 0o077 == 0, name
    assert (home / "secret_key").read_text() != password
    config = (home / "superset_config.py").read_text()
    assert password not in config and "superset.db" in config


def test_the_dashboards_exposure_lists_every_mart_its_charts_read() -> None:
    exposures = yaml.safe_load((REPO_ROOT / "models" / "marts" / "_marts__exposures.yml").read_text())["exposures"]
    (dashboard,) = [exposure for exposure in exposures if exposure["type"] == "dashboard"]
    assert set(dashboard["depends_on"]) == {f"ref('{chart.table}')" for chart in bi.CHARTS}
    assert dashboard["url"].endswith(f"/superset/dashboard/{bi.DASHBOARD_SLUG}/")
