"""`retrieval-metrics report` on the Docent warehouse: the files, the numbers, no external resources, and a real render in
headless Chromium (skipped without Chromium unless CI is set, where a missing browser fails the test); then the judged
coverage warning, on a collection built to trigger it at one k and not at the others; then one colour per run in
every chart, and a retriever's versions over time."""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
from matplotlib.colors import to_hex
from matplotlib.dates import date2num
from matplotlib.figure import Figure

from conftest import REPO_ROOT, Warehouse
import retrieval_metrics as rm
from retrieval_metrics import report as report_module
from retrieval_metrics.cli import main as cli
from retrieval_metrics.report import coverage_warnings

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ARTIFACTS = REPO_ROOT / "test-artifacts"
# docent / keyword_overlap at k = 2, as the lesson prints them: Recall, Precision, NDCG, MRR
LESSON_AT_2 = {"Recall@2": "0.889", "Precision@2": "0.444", "NDCG@2": "0.807", "MRR": "0.800"}
WARNING = re.compile(r'<p class="coverage-warning" data-run="([^"]+)" data-k="(\d+)">Warning: (.*?)\.</p>')


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


def table_row(page: str, row_attributes: str) -> dict[str, str]:
    """The cells of the table row whose opening tag starts with `<tr {row_attributes}`, keyed by the headers of
    its table."""
    for table in re.findall(r"<table>.*?</table>", page, re.DOTALL):
        row = re.search(rf"<tr {re.escape(row_attributes)}[^>]*>(.*?)</tr>", table, re.DOTALL)
        if row is not None:
            headers = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", table)  # not <thead>
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
            assert len(headers) == len(cells), row_attributes
            return dict(zip(headers, cells))
    raise AssertionError(f"no row {row_attributes}")


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

    # the lesson's numbers, in the keyword_overlap row of the k = 2 leaderboard, and Judged@2 beside NDCG@2
    row = table_row(page, 'data-run="keyword_overlap" data-k="2"')
    assert {header: row[header] for header in LESSON_AT_2} == LESSON_AT_2
    headers = list(row)
    assert headers[headers.index("NDCG@2") + 1] == "Judged@2"
    with warehouse.connect() as con:
        judged = dict(con.execute(
            "select run_id, value from run_measures where collection_id = 'docent' and measure_name = 'Judged@2'"
        ).fetchall())
        compared = con.execute(
            "select run_id, measure_name, mean_difference, effect_size from run_comparisons "
            "where collection_id = 'docent'"
        ).fetchall()
        (names_per_run,) = con.execute(  # every compared measure, once per k (3 of them) if it takes one
            "select sum(case when takes_cutoff then 3 else 1 end) from measure_catalog where is_compared and is_default"
        ).fetchone()
        positions = con.execute(  # the runs as the scorecard lists them: the baseline first
            "select run_id from run_leaderboard where collection_id = 'docent' and k = 2 order by run_position"
        ).fetchall()
    assert row["Judged@2"] == f"{judged['keyword_overlap']:.3f}" == "0.444"  # only relevant docs are judged
    for run_id, value in judged.items():
        assert table_row(page, f'data-run="{run_id}" data-k="2"')["Judged@2"] == f"{value:.3f}"
    # every run_comparisons row, by measure name, with its effect size
    runs = [run_id for (run_id,) in positions]
    assert runs[0] == "keyword_overlap" and len(runs) >= 3  # the lexical runs; dense too when it is installed
    assert len(compared) == (len(runs) - 1) * names_per_run  # every run but the baseline, against it
    # the k = 2 leaderboard lists the runs in run_position order, as the scorecard does
    leaderboard = re.search(r"<h4>k = 2</h4>\s*<table>.*?</table>", page, re.DOTALL)
    assert leaderboard is not None
    assert re.findall(r'<tr data-run="([^"]+)" data-k="2"', leaderboard.group(0)) == runs
    for run_id, measure_name, difference, effect in compared:
        cells = table_row(page, f'data-run="{run_id}" data-measure="{html.escape(measure_name)}"')
        assert cells["measure"] == html.escape(measure_name)
        assert cells["mean difference"] == f"{difference:+.3f}"
        assert cells["effect size"] == ("n/a" if effect is None else f"{effect:+.3f}")
    # the 11-point interpolated precision-recall curve is one of the charts
    assert re.search(r'<img id="chart-docent-precision-recall" data-chart="precision-recall"', page)
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


# A collection built for the coverage warning: every question judges r (relevant) and n1..n3 (not relevant).
# The baseline ranks judged docs only; "covered" reorders them (NDCG changes, coverage does not); "sparse" puts
# an unjudged doc first for one question of five: Judged@1 0.80 against 1.00 (20 points: a warning), Judged@2
# 0.90 (10 points: none), Judged@3 0.93 (none).
SPARSE_QUESTIONS = ["s1", "s2", "s3", "s4", "s5"]
SPARSE_RUNS = {
    "keyword_overlap": {q: ["r", "n1", "n2", "n3"] for q in SPARSE_QUESTIONS},
    "covered": {q: ["n1", "r", "n2", "n3"] for q in SPARSE_QUESTIONS},
    "sparse": {q: (["u1", "r", "n1", "n2"] if q == "s1" else ["r", "n1", "n2", "n3"]) for q in SPARSE_QUESTIONS},
}


@pytest.mark.dbt
@pytest.mark.slow
def test_the_coverage_warning_fires_only_where_judged_coverage_differs(lesson: Warehouse, tmp_path: Path) -> None:
    # the lesson alone: one run, nothing compared, no warning
    assert report(["--db", str(lesson.db_path), "--out", str(tmp_path / "lesson")]) == 0
    assert "coverage-warning" not in (tmp_path / "lesson" / "index.html").read_text(encoding="utf-8")

    warehouse = lesson.copy(tmp_path / "sparse")
    db = ["--db", str(warehouse.db_path)]
    qrels = tmp_path / "qrels.txt"
    judged = ("r", "n1", "n2", "n3")
    qrels.write_text("".join(f"{q} 0 {doc} {int(doc == 'r')}\n" for q in SPARSE_QUESTIONS for doc in judged))
    assert cli(["import", "--collection", "sparse", "--qrels", str(qrels), *db]) == 0
    for run_id, rankings in SPARSE_RUNS.items():
        run = tmp_path / f"{run_id}.txt"
        run.write_text("".join(f"{q} Q0 {doc} {rank} {10 - rank} {run_id}\n"
                               for q, docs in rankings.items() for rank, doc in enumerate(docs, start=1)))
        assert cli(["import", "--collection", "sparse", "--run", str(run), "--run-id", run_id, *db]) == 0
    assert cli(["settings", "--collection", "sparse", "--set", "k_values=1,2,3", "--set",
                "baseline_run_id=keyword_overlap", *db]) == 0  # fmt: skip
    warehouse.build()
    judged = dict(warehouse.rows("select run_id || '@' || k, run_mean from run_comparisons "
                                 "where collection_id = 'sparse' and measure = 'Judged'"))
    assert judged == pytest.approx({"covered@1": 1.0, "covered@2": 1.0, "covered@3": 1.0,
                                    "sparse@1": 0.8, "sparse@2": 0.9, "sparse@3": 14 / 15}, abs=1e-12)
    ndcg = dict(warehouse.rows("select run_id, mean_difference from run_comparisons "
                               "where collection_id = 'sparse' and measure_name = 'ndcg_cut_1'"))
    assert ndcg["covered"] == pytest.approx(-1.0) and ndcg["sparse"] == pytest.approx(-0.2)

    out = tmp_path / "report"
    assert report([*db, "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert WARNING.findall(page) == [(
        "sparse", "1", "sparse and keyword_overlap differ in judged coverage at k=1 by 20 points (0.80 vs 1.00): "
        "their NDCG difference may reflect missing judgments, not retrieval",
    )]
    sparse_section = page[page.index('<section id="collection-sparse">'):]
    assert WARNING.search(sparse_section) and not WARNING.search(page[:page.index('<section id="collection-sparse">')])


def test_coverage_warning_wording_and_threshold() -> None:
    """More than 10 points warns, in words; 10 points (up to float noise) or another measure does not."""
    with duckdb.connect() as con:
        con.execute(
            "create table run_comparisons (collection_id varchar, run_id varchar, baseline_run_id varchar, "
            "measure varchar, k integer, run_mean double, baseline_mean double)"
        )
        con.execute(
            """
            insert into run_comparisons values
                ('c', 'bm25', 'keyword_overlap', 'Judged', 10, 0.62, 0.48),
                ('c', 'bm25', 'keyword_overlap', 'Judged', 5, 0.3, 0.4),
                ('c', 'dense', 'keyword_overlap', 'Judged', 10, 0.4, 0.3),
                ('c', 'dense', 'keyword_overlap', 'ndcg_cut', 10, 0.9, 0.1),
                ('other', 'bm25', 'keyword_overlap', 'Judged', 10, 0.9, 0.1)
            """
        )
        assert 0.4 - 0.3 > 0.1  # the float noise the threshold must not trip on
        warnings = coverage_warnings(con, "c")
    assert [(w["run_id"], w["k"], w["text"]) for w in warnings] == [(
        "bm25", 10, "bm25 and keyword_overlap differ in judged coverage at k=10 by 14 points (0.62 vs 0.48): "
        "their NDCG difference may reflect missing judgments, not retrieval",
    )]


@pytest.mark.dbt
@pytest.mark.slow
def test_one_colour_per_run_across_the_charts_and_a_retriever_over_time(
    lesson: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three versions of one retriever beside the lesson's run, only the second of them reporting latency: each run
    has the same colour in every chart that shows it (the latency chart shows some of the runs), and the history
    chart puts each version at its written_at and its NDCG."""
    warehouse = lesson.copy(tmp_path / "versions")
    with (REPO_ROOT / "seeds" / "golden_questions.csv").open() as questions, \
            (REPO_ROOT / "seeds" / "docs.csv").open() as docs:  # fmt: skip
        question_ids = [row["question_id"] for row in csv.DictReader(questions)]
        doc_ids = [row["doc_id"] for row in csv.DictReader(docs)]
    for version in (1, 2, 3):  # a different order of the documents per version
        rows = [(q, d, float((i * version + j) % len(doc_ids))) + ((4.0 * version,) if version == 2 else ())
                for j, q in enumerate(question_ids) for i, d in enumerate(doc_ids)]
        rm.write_run("docent", f"mine-v{version}", rows, retriever="mine", database=warehouse.db_path, wait=0)
    warehouse.build()

    drawn: list[Figure] = []
    png = report_module.png
    monkeypatch.setattr(report_module, "png", lambda fig: (drawn.append(fig), png(fig))[1])
    with duckdb.connect(str(warehouse.db_path), read_only=True) as con:
        report_module.write_report(con, "versions", tmp_path / "report")
        history = {run: (written_at, ndcg) for run, written_at, ndcg in con.execute(  # NDCG at the largest k
            "select run_id, written_at, ndcg from run_leaderboard where k = (select max(k) from run_leaderboard)"
        ).fetchall()}  # fmt: skip
        timed = {run for (run,) in con.execute(
            "select distinct run_id from run_leaderboard where latency_p95_ms is not null").fetchall()}  # fmt: skip

    colours: dict[str, set[str]] = {}
    charts: dict[str, set[str]] = {}
    for fig in drawn:
        title = fig.axes[0].get_title()
        for artist in fig.findobj(lambda a: a.get_gid() is not None):
            colour = artist.get_color() if hasattr(artist, "get_color") else artist.get_facecolor()
            colours.setdefault(artist.get_gid(), set()).add(to_hex(colour))
            charts.setdefault(title, set()).add(artist.get_gid())
    runs = {"keyword_overlap", "mine-v1", "mine-v2", "mine-v3"}
    assert set(colours) == runs
    assert all(len(found) == 1 for found in colours.values()), colours  # one colour per run in every chart
    assert len({next(iter(found)) for found in colours.values()}) == len(runs)  # and no two runs alike
    # the runs that report latency: mine-v2 (and the built-in retriever's where it records its own), not the others
    assert charts["Quality against latency, docent"] == timed and "mine-v2" in timed and "mine-v1" not in timed
    assert charts["MRR per run, docent"] == runs
    (over_time,) = [title for title in charts if title.endswith("of each retriever over time, docent")]
    assert charts[over_time] == {"mine-v1", "mine-v2", "mine-v3"}  # keyword_overlap has one run: no line

    (timeline,) = [fig for fig in drawn if fig.axes[0].get_title().endswith("over time, docent")]
    points = {line.get_gid(): (line.get_xdata()[0], line.get_ydata()[0]) for line in timeline.axes[0].get_lines()
              if line.get_gid()}  # fmt: skip
    assert set(points) == charts[over_time]
    for run_id, (x, y) in points.items():
        written_at, ndcg = history[run_id]
        assert (date2num(x) if not isinstance(x, float) else x) == pytest.approx(date2num(written_at))
        assert y == ndcg
    assert history["mine-v1"][0] < history["mine-v2"][0] < history["mine-v3"][0]
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert 'data-chart="history"' in page
