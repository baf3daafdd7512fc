"""`retrieval-metrics report` on the Docent warehouse: the files, the numbers, no external resources, and a real render in
headless Chromium (skipped without Chromium unless CI is set, where a missing browser fails the test)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics.cli import main as cli

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ARTIFACTS = REPO_ROOT / "test-artifacts"
# docent / keyword_overlap at k = 2, as the lesson prints them: Recall, Precision, NDCG, MRR
LESSON_AT_2 = ["0.889", "0.444", "0.807", "0.800"]


def chromium_binary() -> str:
    """The Chromium executable; skip without one, but fail under CI so that a skip never passes for coverage."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        message = "Chromium not found (chromium or chromium-browser on PATH, /usr/bin/chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI must install it (.ci/run does)")
        pytest.skip(message)
    return found


def headless(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless Chromium process, offline-minded, with its own throwaway profile."""
    command = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def report(args: list[str]) -> int:
    return cli(["report", *args])


@pytest.mark.dbt
@pytest.mark.slow
def test_report_files_numbers_and_rendering(every_retriever: Warehouse, tmp_path: Path) -> None:
    warehouse = every_retriever  # read only
    report_dir = tmp_path / "report"
    assert report(["--db", str(warehouse.db_path), "--out", str(report_dir)]) == 0

    page = (report_dir / "index.html").read_text(encoding="utf-8")
    pngs = sorted(report_dir.glob("*.png"))
    images = re.findall(r"<img\b[^>]*>", page)
    assert len(images) == len(pngs) >= 5
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000, png.name
    for tag in images:
        assert re.search(r'\balt="[^"]+"', tag) and re.search(r'\bdata-chart="[^"]+"', tag), tag
        assert 'src="data:image/png;base64,' in tag, tag[:120]
    assert f'data-charts-total="{len(pngs)}"' in page

    # the lesson's numbers, in the keyword_overlap row of the k = 2 leaderboard
    row = re.search(r'<tr data-run="keyword_overlap" data-k="2"[^>]*>(.*?)</tr>', page, re.DOTALL)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[3:7] == LESSON_AT_2  # Recall@2, Precision@2, NDCG@2, MRR
    assert "plans (rank 5) [free, meridian] was outranked by errors" in page
    # self-contained: no reference to anything on the network
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?!data:|#)[a-z]+:""", page, re.IGNORECASE)

    # deterministic apart from the generation time: the same PNG bytes, the same page
    again = tmp_path / "again"
    assert report(["--db", str(warehouse.db_path), "--out", str(again)]) == 0
    assert [p.read_bytes() for p in pngs] == [(again / p.name).read_bytes() for p in pngs]
    stamp = re.compile(r"generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    assert stamp.sub("", page) == stamp.sub("", (again / "index.html").read_text(encoding="utf-8"))

    binary = chromium_binary()
    url = (report_dir / "index.html").as_uri()
    dumped = headless(binary, tmp_path / "profile-dom", "--dump-dom", "--virtual-time-budget=5000", url)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    body = re.search(r"<body\b[^>]*>", dumped.stdout)
    assert body is not None, dumped.stdout[:500]
    assert f'data-charts-loaded="{len(pngs)}"' in body.group(0), body.group(0)
    assert "0.889" in dumped.stdout

    screenshot = tmp_path / "screenshot.png"
    shot = headless(binary, tmp_path / "profile-shot", f"--screenshot={screenshot}", "--window-size=1280,2400",
                    "--virtual-time-budget=5000", url)
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE) and screenshot.stat().st_size > 50_000
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(screenshot, ARTIFACTS / "report-screenshot.png")


def test_report_refuses_a_missing_database_or_marts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert report(["--db", str(tmp_path / "absent.duckdb"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    assert report(["--db", str(empty), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "run_metrics" in error and "make build" in error
    assert not out.exists()
