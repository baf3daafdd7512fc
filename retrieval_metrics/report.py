"""Write a self-contained HTML report of the warehouse: charts (matplotlib PNGs) and tables, per collection.

    retrieval-metrics report [--out report] [--db PATH]          # or: make report

Writes <out>/index.html with every chart embedded as a base64 data URI (it opens offline: inline CSS, no
external resources), and the same charts as <out>/<collection>-<chart>.png. Per collection: Recall@k,
Precision@k (with its ceiling given the judgments) and NDCG@k curves, MRR per run, the first relevant rank of
every question for every run, the comparison with each baseline run (a chart and a table each), the leaderboard
at each k and the missed relevant documents, runs listed as the scorecard lists them (run_leaderboard.run_position:
the baselines first).
A measure's label carries the relevance level it was measured at where the level changes it and is not 1
(Recall(rel=2)@10, MRR(rel=2)), as the scorecard's do.
Also per collection: the 11-point interpolated precision-recall curve of every run
(trec_eval's iprec_at_recall_0.00 ... _1.00), Judged@k (judged coverage) beside NDCG@k in the leaderboard, and
a warning in words when a compared run and the baseline differ in judged coverage by more than COVERAGE_GAP at
some k. The comparison table lists every compared measure of measure_catalog, in its order. A retriever with
several runs (one run id per version) gets a history chart: its headline NDCG by when each run was written.
Each run has one colour, marker and line style in every chart of its collection (run_styles). Reads the marts
through a read-only connection; SQL does the data work, Python plots and formats. The output is the same for
the same warehouse, apart from the generation time.
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from retrieval_metrics.presets import PRESETS, preset_name
from retrieval_metrics.scorecard import has_tables, headlines, level_marks, marked, questions_line
from retrieval_metrics.warehouse import PROG, InputError

CURVES = {"recall": "Recall@k", "precision": "Precision@k", "ndcg": "NDCG@k"}
# the registry's measure (measure_catalog.measure) behind each label that a relevance level may mark
LABELLED = {"Recall": "recall", "Precision": "P", "MRR": "recip_rank", "MAP": "map", "R-precision": "Rprec",
            "Hit": "success"}


def level_label(marks: dict[tuple[str, str], str], collection_id: str, label: str) -> str:
    """The label with the relevance level its values were measured at, where that is not 1: Recall(rel=2)@10."""
    measure = LABELLED.get(label.partition("@")[0])
    return marked(label, marks.get((collection_id, measure), "")) if measure else label
NDCG = "ndcg_cut"  # measure_catalog.measure of NDCG@k: the wins/losses chart
JUDGED = "Judged"  # ... and of Judged@k, the share of the top k with a judgment (ir_measures')
IPREC_PREFIX = "iprec_at_recall_"  # trec_eval's interpolated precision at recall level 0.00 ... 1.00
COVERAGE_GAP = 0.10  # warn when a run's and the baseline's Judged@k differ by more than this (10 points)
MAX_HEATMAP_QUESTIONS = 50  # beyond this, the questions where the runs' first relevant ranks differ most
MAX_MISSED_ROWS = 100
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":"]

matplotlib.rcParams.update({"svg.hashsalt": "retrieval-metrics", "figure.dpi": 100, "font.size": 10})

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1240px;
       padding: 16px 24px; color: #1f2328; line-height: 1.4; }
h1 { margin-bottom: 0; } h2 { border-bottom: 2px solid #d0d7de; padding-bottom: 4px; margin-top: 40px; }
.meta { color: #57606a; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 16px; }
figure { margin: 0; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; background: #fff; }
figure.wide { grid-column: 1 / -1; }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; }
figcaption { color: #57606a; font-size: 0.9em; margin-top: 4px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: right; }
th { background: #f6f8fa; } td.text, th.text { text-align: left; }
tr.baseline td { background: #fff8c5; }
.warnings { margin-bottom: 16px; }
.warnings p { background: #fff1e5; border-left: 4px solid #bc4c00; padding: 6px 10px; margin: 6px 0; }
ul.missed li { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.85em; margin-bottom: 4px; }
"""

# On load, count the images the browser decoded: a headless browser test reads body[data-charts-loaded].
LOAD_SCRIPT = """
window.addEventListener("load", function () {
  var loaded = Array.prototype.filter.call(document.images, function (img) {
    return img.complete && img.naturalWidth > 0;
  });
  document.body.dataset.chartsLoaded = String(loaded.length);
});
"""


@dataclass(frozen=True)
class Chart:
    collection_id: str
    name: str
    alt: str
    caption: str
    png: bytes
    wide: bool = False  # spans the whole row of the page's chart grid

    @property
    def filename(self) -> str:
        return f"{self.collection_id}-{self.name}.png"


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | dict[str, object]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def new_figure(width: float, height: float, ncols: int = 1, sharey: bool = False) -> tuple[Figure, list[Axes]]:
    """A figure on the Agg canvas (no pyplot, no global figure state) and its row of axes."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, list(fig.subplots(1, ncols, sharey=sharey, squeeze=False)[0])


def png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})  # no software/time stamp: same bytes each time
    return buffer.getvalue()


Styles = dict[str, dict[str, Any]]  # run id -> its colour, marker, line style and marker size, in every chart


def run_styles(run_ids: list[str]) -> Styles:
    """One colour, marker and line style per run, by its place among the collection's runs in run id order;
    markers shrink so that identical curves stay visible. Computed once per collection and passed to each of
    its charts, so that a run keeps its colour from one chart to the next, even in a chart that shows only
    some of the runs (latency, the history)."""
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    return {
        run_id: {"color": colors[i % len(colors)], "marker": MARKERS[i % len(MARKERS)],
                 "linestyle": LINESTYLES[i % len(LINESTYLES)], "markersize": max(13 - 3 * i, 4)}
        for i, run_id in enumerate(sorted(run_ids))
    }


def curve_charts(con: duckdb.DuckDBPyConnection, collection_id: str, styles: Styles) -> list[Chart]:
    """Recall@k, Precision@k (with the ceiling min(n_relevant, k) / k) and NDCG@k, one line per run."""
    runs = rows(con, """
        select run_id, list(k order by k) as ks, list(recall order by k) as recall,
               list(precision order by k) as precision, list(ndcg order by k) as ndcg
        from main.run_metrics where collection_id = ? group by run_id order by run_id
        """, [collection_id])
    ceiling = rows(con, """
        select k, avg(least(n_relevant, k) / k) as ceiling
        from (select distinct k, question_id, n_relevant from main.question_metrics
              where collection_id = ? and is_averaged)
        group by k order by k
        """, [collection_id])
    ks = sorted({k for r in runs for k in r["ks"]})
    charts = []
    marks = level_marks(con)
    for metric, label in CURVES.items():
        label = level_label(marks, collection_id, label)
        fig, (ax,) = new_figure(6.4, 4.6)
        for run in runs:
            ax.plot(run["ks"], run[metric], label=run["run_id"], linewidth=2, gid=run["run_id"], **styles[run["run_id"]])
        if metric == "precision":
            ax.plot([c["k"] for c in ceiling], [c["ceiling"] for c in ceiling], label="ceiling", color="black",
                    linestyle=(0, (4, 3)), linewidth=1.5, marker="_", markersize=14)
        if ks and ks[-1] / ks[0] > 20:
            ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("k (cutoff)")
        ax.set_ylabel(label.replace("@k", ""))
        ax.set_title(f"{label} by cutoff, {collection_id}")
        ax.grid(alpha=0.3)
        fig.legend(loc="outside lower center", ncol=min(len(runs) + 1, 3), frameon=False)
        note = " The dashed black line is the ceiling: the mean over questions of min(n_relevant, k) / k." \
            if metric == "precision" else ""
        title = f"{label} for every run of {collection_id} at k = {', '.join(map(str, ks))}"
        caption = f"{label}: one line per run; identical runs overlap (concentric markers).{note}"
        charts.append(Chart(collection_id, metric, title, caption, png(fig)))
    return charts


def mrr_chart(con: duckdb.DuckDBPyConnection, collection_id: str, styles: Styles) -> Chart:
    runs = rows(con, """
        select run_id, any_value(mrr) as mrr from main.run_metrics where collection_id = ?
        group by run_id order by run_id desc
        """, [collection_id])
    fig, (ax,) = new_figure(6.4, 1.4 + 0.45 * len(runs))
    bars = ax.barh([r["run_id"] for r in runs], [r["mrr"] for r in runs],
                   color=[styles[r["run_id"]]["color"] for r in runs])
    for bar, run in zip(bars, runs):
        bar.set_gid(run["run_id"])
    ax.bar_label(bars, fmt="%.3f", padding=3)
    ax.set_xlim(0, 1.12)
    mrr = level_label(level_marks(con), collection_id, "MRR")
    ax.set_xlabel(f"{mrr} (mean reciprocal rank of the first relevant doc, whole ranking)")
    ax.set_title(f"{mrr} per run, {collection_id}")
    ax.grid(axis="x", alpha=0.3)
    return Chart(collection_id, "mrr", f"Bar chart of {mrr} per run of {collection_id}", f"{mrr} per run.", png(fig))


def precision_recall_chart(con: duckdb.DuckDBPyConnection, collection_id: str, styles: Styles) -> Chart | None:
    """The 11-point interpolated precision-recall curve, one line per run: trec_eval's iprec_at_recall_<level>
    means from run_measures, the level read from the measure's name."""
    runs = rows(con, """
        select run_id, list(level order by level) as levels, list(value order by level) as values
        from (select run_id, cast(substr(measure, length(?) + 1) as double) as level, value
              from main.run_measures where collection_id = ? and starts_with(measure, ?))
        group by run_id order by run_id
        """, [IPREC_PREFIX, collection_id, IPREC_PREFIX])
    if not runs:
        return None
    fig, (ax,) = new_figure(6.4, 4.6)
    for run in runs:
        ax.plot(run["levels"], run["values"], label=run["run_id"], linewidth=2, gid=run["run_id"],
                **styles[run["run_id"]])
    ax.set_xticks([level / 10 for level in range(11)])
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("recall level")
    ax.set_ylabel("interpolated precision")
    ax.set_title(f"11-point interpolated precision-recall, {collection_id}")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=min(len(runs), 3), frameon=False)
    return Chart(collection_id, "precision-recall",
                 f"11-point interpolated precision-recall curve of every run of {collection_id}",
                 "Interpolated precision (the highest precision at any rank whose recall reaches the level, "
                 "trec_eval's iprec_at_recall) at recall 0.0, 0.1, ..., 1.0, averaged over questions; one line "
                 "per run, identical runs overlap.", png(fig))


def latency_chart(leaderboard: list[dict[str, Any]], collection_id: str, styles: Styles) -> Chart | None:
    """Quality against p95 search latency, one point per run that reports latency, at the largest k."""
    k = max(r["k"] for r in leaderboard)
    runs = [r for r in leaderboard if r["k"] == k and r["latency_p95_ms"] is not None]
    if not runs:
        return None
    fig, (ax,) = new_figure(6.4, 4.6)
    for run in sorted(runs, key=lambda r: r["run_id"]):
        style = styles[run["run_id"]]
        ax.plot([run["latency_p95_ms"]], [run["ndcg"]], linestyle="none", marker=style["marker"],
                color=style["color"], markersize=9, label=run["run_id"], gid=run["run_id"])
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("p95 search latency per question, ms (log scale)")
    ax.set_ylabel(f"NDCG@{k}")
    ax.set_title(f"Quality against latency, {collection_id}")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=min(len(runs), 3), frameon=False)
    return Chart(collection_id, "latency",
                 f"NDCG@{k} against p95 search latency of each run of {collection_id} that reports latency",
                 f"NDCG@{k} against the 95th percentile of the time the retriever took per question; runs without "
                 "a recorded latency (imported run files, fusion) are not shown. Up and to the left "
                 "is better.", png(fig))


def history_chart(con: duckdb.DuckDBPyConnection, collection_id: str, styles: Styles) -> Chart | None:
    """A retriever over time: the collection's headline (run_leaderboard.headline_ndcg, NDCG at its largest k) of
    the retriever's runs by when each was written (written_at), one line per retriever with more than one run,
    each run a point in its own colour, labelled with its run id. None when no retriever has two runs."""
    runs = rows(con, """
        with runs as (
            select distinct run_id, retriever, written_at, headline_ndcg, max(k) over () as largest
            from main.run_leaderboard where collection_id = ?
        )
        select * from runs
        where retriever in (select retriever from runs group by retriever having count(*) > 1)
        order by retriever, written_at, run_id
        """, [collection_id])  # fmt: skip
    if not runs:
        return None
    label = f"NDCG@{runs[0]['largest']}"
    retrievers = list(dict.fromkeys(r["retriever"] for r in runs))
    fig, (ax,) = new_figure(6.4, 4.6)
    for i, retriever in enumerate(retrievers):
        own = [r for r in runs if r["retriever"] == retriever]
        ax.plot([r["written_at"] for r in own], [r["headline_ndcg"] for r in own], color="#8c959f", linewidth=1.5,
                linestyle=LINESTYLES[i % len(LINESTYLES)], label=retriever, zorder=1)
        for run in own:
            style = styles[run["run_id"]]
            ax.plot([run["written_at"]], [run["headline_ndcg"]], linestyle="none", marker=style["marker"],
                    color=style["color"], markersize=9, gid=run["run_id"], zorder=2)
            ax.annotate(run["run_id"], (run["written_at"], run["headline_ndcg"]), textcoords="offset points",
                        xytext=(6, 6), fontsize=8)
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("written at (UTC)")
    ax.set_ylabel(label)
    ax.set_title(f"{label} of each retriever over time, {collection_id}")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=min(len(retrievers), 3), frameon=False)
    return Chart(collection_id, "history",
                 f"{label} of the runs of each retriever of {collection_id} by when each run was written",
                 f"{label}, the collection's headline, of each run by when it was written (run_leaderboard."
                 "written_at), one line per retriever with more than one run (a run id per version: "
                 "docs/comparing.md); each point in its run's colour.", png(fig))


def no_baseline(collection_id: str) -> str:
    """What the report says of a collection none of whose runs is its baseline: how to set one."""
    return f"none (set one: {PROG} settings --collection {collection_id} --set baseline_run_id=RUN, then build)"


def coverage_warnings(con: duckdb.DuckDBPyConnection, collection_id: str) -> list[dict[str, Any]]:
    """Each (run, baseline, k) whose judged coverage (Judged@k, over the questions paired with the baseline)
    differs from the baseline's by more than COVERAGE_GAP, with the warning in words; two baselines compared
    both ways, once."""
    gaps = rows(con, """
        select run_id, baseline_run_id, k, run_mean, baseline_mean
        from main.run_comparisons as compared
        where collection_id = ? and measure = ? and abs(run_mean - baseline_mean) > ?
            and not (run_id > baseline_run_id and exists (
                select 1 from main.run_comparisons as reverse
                where reverse.collection_id = compared.collection_id and reverse.run_id = compared.baseline_run_id
                    and reverse.baseline_run_id = compared.run_id and reverse.measure = compared.measure
                    and reverse.k = compared.k))
        order by k, run_id, baseline_run_id
        """, [collection_id, JUDGED, COVERAGE_GAP + 1e-9])  # a float's breath: exactly 10 points does not warn
    return [{**gap, "text": (
        f"{gap['run_id']} and {gap['baseline_run_id']} differ in judged coverage at k={gap['k']} by "
        f"{100 * abs(gap['run_mean'] - gap['baseline_mean']):.0f} points ({gap['run_mean']:.2f} vs "
        f"{gap['baseline_mean']:.2f}): their NDCG difference may reflect missing judgments, not retrieval"
    )} for gap in gaps]


def rank_heatmap(con: duckdb.DuckDBPyConnection, collection_id: str) -> Chart:
    """Questions x runs, the rank of the first relevant doc (k-independent, so read at the smallest k)."""
    run_ids = [r for (r,) in con.execute(
        "select distinct run_id from main.question_metrics where collection_id = ? order by run_id", [collection_id]
    ).fetchall()]
    questions = rows(con, """
        with ranks as (
            select question_id, list(first_relevant_rank order by run_id) as ranks,
                   count(*) - count(first_relevant_rank) as n_missing,
                   coalesce(max(first_relevant_rank) - min(first_relevant_rank), 0) as spread,
                   count(*) over () as n_questions
            from main.question_metrics
            where collection_id = ? and k = (select min(k) from main.question_metrics where collection_id = ?)
            group by question_id
        )
        select * from ranks
        qualify row_number() over (order by n_missing desc, spread desc, question_id) <= ?
        order by question_id
        """, [collection_id, collection_id, MAX_HEATMAP_QUESTIONS])
    values = np.ma.masked_invalid(np.array([[np.nan if v is None else v for v in q["ranks"]] for q in questions],
                                           dtype=float).reshape(len(questions), len(run_ids)))
    cmap = matplotlib.colormaps["YlOrRd"].with_extremes(bad="#d0d0d0")
    vmax = max(float(values.max()) if values.count() else 1.0, 2.0)
    fig, (ax,) = new_figure(3.2 + 1.5 * len(run_ids), 1.9 + 0.36 * len(questions))
    image = ax.imshow(values, cmap=cmap, vmin=1, vmax=vmax, aspect="auto")
    for (i, j), value in np.ndenumerate(values.filled(np.nan)):
        text = "n/r" if np.isnan(value) else str(int(value))
        dark = not np.isnan(value) and value > 1 + 0.55 * (vmax - 1)
        ax.text(j, i, text, ha="center", va="center", fontsize=9, color="white" if dark else "black",
                style="italic" if np.isnan(value) else "normal")
    ax.set_xticks(range(len(run_ids)), run_ids, rotation=20, ha="right")
    ax.set_yticks(range(len(questions)), [q["question_id"] for q in questions])
    ax.set_xlabel("run")
    ax.set_title(f"First relevant rank per question, {collection_id}")
    ax.set_xticks(np.arange(len(run_ids) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(questions) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    colorbar = fig.colorbar(image, ax=ax, label="rank of the first relevant doc", shrink=0.8)
    colorbar.locator = MaxNLocator(integer=True)
    colorbar.update_ticks()
    fig.legend(handles=[Patch(facecolor="#d0d0d0", label="n/r: no relevant doc retrieved")],
               loc="outside lower center", frameon=False)
    total = questions[0]["n_questions"] if questions else 0
    showing = "" if total <= MAX_HEATMAP_QUESTIONS else \
        f" Showing the {MAX_HEATMAP_QUESTIONS} of {total} questions where the runs differ most."
    return Chart(collection_id, "first-relevant-rank",
                 f"Heatmap of the first relevant rank of each question for each run of {collection_id}",
                 f"Rank of the first relevant doc (1 = top; n/r = none retrieved), the same at every k.{showing}",
                 png(fig), wide=True)


def comparison_chart(comparisons: list[dict[str, Any]], collection_id: str, name: str = "ndcg-vs-baseline"
                     ) -> Chart | None:  # fmt: skip
    """Per k, a diverging bar per run: questions won (right) and lost (left) on NDCG@k against the baseline (that
    of `comparisons`, one)."""
    ndcg = [c for c in comparisons if c["measure"] == NDCG]
    if not ndcg:
        return None
    ks = sorted({c["k"] for c in ndcg})
    run_ids = sorted({c["run_id"] for c in ndcg}, reverse=True)
    limit = max(c["n_questions"] for c in ndcg)
    fig, axes = new_figure(2.0 + 2.6 * len(ks), 1.9 + 0.45 * len(run_ids), ncols=len(ks), sharey=True)
    for ax, k in zip(axes, ks):
        at_k = {c["run_id"]: c for c in ndcg if c["k"] == k}
        wins = [at_k[r]["wins"] if r in at_k else 0 for r in run_ids]
        losses = [-at_k[r]["losses"] if r in at_k else 0 for r in run_ids]
        ax.barh(run_ids, wins, color="#2da44e", label="wins")
        ax.barh(run_ids, losses, color="#cf222e", label="losses")
        for y, r in enumerate(run_ids):
            if r in at_k:
                ax.text(max(wins[y], 0) + limit * 0.04, y, f"{at_k[r]['wins']}/{at_k[r]['ties']}/{at_k[r]['losses']}",
                        va="center", ha="left", fontsize=9)
        ax.axvline(0, color="black", linewidth=0.8)
        ticks = MaxNLocator(nbins=6, integer=True, symmetric=True).tick_values(-limit, limit)
        ax.set_xticks([t for t in ticks if abs(t) <= limit])
        ax.set_xlim(-limit * 1.05, limit * 1.45)  # room on the right for the wins/ties/losses labels
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{abs(value):g}"))
        ax.set_title(f"NDCG@{k}")
        ax.set_xlabel("questions lost | won")
        ax.grid(axis="x", alpha=0.3)
    baseline = ndcg[0]["baseline_run_id"]
    fig.suptitle(f"NDCG@k against the baseline {baseline}, {collection_id} (labels: wins/ties/losses)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return Chart(collection_id, name,
                 f"Diverging bar chart of questions won and lost on NDCG@k against {baseline} in {collection_id}",
                 f"Questions where each run beats (green) or trails (red) the baseline {baseline} on NDCG@k.",
                 png(fig), wide=True)


def discriminative_power_chart(powers: list[dict[str, Any]], collection_id: str) -> Chart | None:
    """A bar per compared measure (measure_catalog's order): the share of the collection's run pairs the
    randomized Tukey HSD finds different at its alpha (measure_anova.discriminative_power)."""
    shown = [p for p in powers if p["discriminative_power"] is not None]
    if not shown:
        return None
    fig, (ax,) = new_figure(7.5, 1.4 + 0.22 * len(shown))
    names = [p["measure_name"] for p in shown][::-1]
    values = [p["discriminative_power"] for p in shown][::-1]
    ax.barh(names, values, color="#0969da")
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of the {shown[0]['n_pairs']} run pairs significantly different")
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Discriminative power, {collection_id} (randomized Tukey HSD, alpha {shown[0]['alpha']:g}, "
                 f"{shown[0]['n_questions']} questions)")  # fmt: skip
    return Chart(collection_id, "discriminative-power",
                 f"Bar chart of each measure's discriminative power over the run pairs of {collection_id}",
                 "Per measure: the share of run pairs the randomized Tukey HSD tells apart. A measure with more "
                 "tells runs apart with these questions.", png(fig), wide=True)


def many_runs_section(con: duckdb.DuckDBPyConnection, collection_id: str,
                      leaderboard: list[dict[str, Any]]) -> tuple[str, list[Chart]]:  # fmt: skip
    """Many runs at once: each run's letter groups on NDCG@k, the questions needed, and the discriminative power
    chart (run_letter_groups, measure_anova, measure_questions_needed). Empty for a collection of one run."""
    if not has_tables(con, "run_letter_groups", "measure_anova", "measure_questions_needed"):
        return "", []
    letters = rows(con, "select run_id, k, letters, alpha from main.run_letter_groups "
                        "where collection_id = ? and measure = ?", [collection_id, NDCG])  # fmt: skip
    if not letters:
        return "", []
    powers = rows(con, """
        select anova.measure_name, anova.discriminative_power, anova.n_pairs, anova.alpha, anova.n_questions
        from main.measure_anova as anova
        inner join main.measure_catalog as catalog on anova.measure = catalog.measure
        where anova.collection_id = ?
        order by catalog.measure_position, anova.k
        """, [collection_id])  # fmt: skip
    ks = sorted({row["k"] for row in letters})
    by_run = {(row["run_id"], row["k"]): row["letters"] for row in letters}
    runs = list(dict.fromkeys(r["run_id"] for r in sorted(leaderboard, key=lambda r: r["run_position"])))
    parts = ["<h3>Groups of runs</h3>",
             f"<p>Runs that share a letter cannot be told apart on NDCG@k: the randomized Tukey HSD over every pair of "
             f"runs, alpha {letters[0]['alpha']:g} (run_letter_groups; every pair in run_pair_tests).</p>",
             table(["run", *(f"NDCG@{k}" for k in ks)], [[fmt(run), *(fmt(by_run.get((run, k))) for k in ks)]
                                                         for run in runs],
                   [f' class="letters" data-run="{html.escape(run)}"' for run in runs]),
             f'<p class="questions-needed">{html.escape(questions_line(con, collection_id, max(ks)))}.</p>']  # fmt: skip
    chart = discriminative_power_chart(powers, collection_id)
    return "\n".join(parts), [chart] if chart else []


def fmt(value: object, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:+.3f}" if signed else f"{value:.3f}"
    return html.escape(str(value))


def table(headers: list[str], body: list[list[str]], row_attrs: list[str] | None = None, text_columns: int = 1) -> str:
    head = "".join(f'<th class="text">{h}</th>' if i < text_columns else f"<th>{h}</th>" for i, h in enumerate(headers))
    lines = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for n, cells in enumerate(body):
        tds = "".join(f'<td class="text">{c}</td>' if i < text_columns else f"<td>{c}</td>" for i, c in enumerate(cells))
        lines.append(f"<tr{row_attrs[n] if row_attrs else ''}>{tds}</tr>")
    return "\n".join([*lines, "</tbody></table>"])


def figure(chart: Chart) -> str:
    data = base64.b64encode(chart.png).decode("ascii")
    name = html.escape(f"{chart.collection_id}-{chart.name}")
    wide = ' class="wide"' if chart.wide else ""
    return (f'<figure{wide}><img id="chart-{name}" data-chart="{html.escape(chart.name)}" '
            f'data-collection="{html.escape(chart.collection_id)}" alt="{html.escape(chart.alt)}" '
            f'src="data:image/png;base64,{data}"><figcaption>{html.escape(chart.caption)}</figcaption></figure>')


def interval(value: object, low: object, high: object) -> str:
    return fmt(value) + (f" [{fmt(low)}, {fmt(high)}]" if low is not None else "")


def difference_interval(compared: dict[str, Any]) -> str:
    """A comparison's 95% interval of the mean difference, signed: [-0.120, +0.310] (n/a for one question)."""
    low, high = compared["difference_ci_low"], compared["difference_ci_high"]
    return "n/a" if low is None or high is None else f"[{fmt(low, signed=True)}, {fmt(high, signed=True)}]"


def slice_measures(means: list[dict[str, Any]]) -> list[str]:
    """The measures the question slices show, of a collection's run_tag_measures rows: its preset's headline, else
    MRR and NDCG at its largest k (those the collection has)."""
    preset = PRESETS.get(preset_name(json.loads(means[0]["evaluation_settings"]).get("preset")))
    names = list(preset.headline) if preset else []
    if not names:
        largest = max((m["k"] for m in means if m["measure"] == NDCG), default=None)
        names = ["recip_rank", f"{NDCG}_{largest}"]
    present = {m["measure_name"] for m in means}
    return [name for name in names if name in present]


def slices_section(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """Question slices: each run's means over each tag's questions, with their 95% intervals, and against the
    baseline on the first NDCG of those measures, else the first (run_tag_measures, run_tag_comparisons). Empty
    without tags."""
    means = rows(con, """
        select tag, run_id, measure, k, measure_name, measure_label, n_questions, value, ci_low, ci_high,
            evaluation_settings
        from main.run_tag_measures where collection_id = ? order by tag, run_id, measure_name
        """, [collection_id])  # fmt: skip
    if not means:
        return ""
    names = slice_measures(means)
    labels = {m["measure_name"]: m["measure_label"] for m in means}
    cells = {(m["tag"], m["run_id"], m["measure_name"]): m for m in means}
    compared = next((name for name in names if name.startswith(NDCG)), names[0] if names else "")  # NDCG, as above
    baselines = [b for (b,) in con.execute(
        "select distinct baseline_run_id from main.run_tag_comparisons where collection_id = ? order by 1",
        [collection_id]).fetchall()]  # fmt: skip
    versus = {(c["tag"], c["run_id"]): c for c in rows(con, """
        select * from main.run_tag_comparisons where collection_id = ? and measure_name = ? and baseline_run_id = ?
        """, [collection_id, compared, baselines[0] if baselines else None])}  # fmt: skip
    several = (f" (the first of its baselines, {', '.join(map(html.escape, baselines))}; run_tag_comparisons holds "
               "each)") if len(baselines) > 1 else ""
    order = {run: position for run, position in con.execute(
        "select distinct run_id, run_position from main.run_leaderboard where collection_id = ?",
        [collection_id]).fetchall()}  # fmt: skip
    n_questions = {(m["tag"], m["run_id"]): m["n_questions"] for m in means}  # the same for each of its measures
    keys = sorted(n_questions, key=lambda key: (key[0], order.get(key[1], 0), key[1]))
    first = html.escape(labels.get(compared, ""))

    def mean(cell: dict[str, Any] | None) -> str:
        return "n/a" if cell is None else interval(cell["value"], cell["ci_low"], cell["ci_high"])

    body, attrs = [], []
    for tag, run in keys:
        against = versus.get((tag, run))
        outcome = (f"{against['wins']} / {against['ties']} / {against['losses']}", fmt(against["mean_difference"],
                   signed=True), fmt(against["randomization_p_value_holm"])) if against else ("", "", "")  # fmt: skip
        body.append([fmt(tag), fmt(run), fmt(n_questions[tag, run]), *(mean(cells.get((tag, run, name))) for name in names),
                     *outcome])  # fmt: skip
        attrs.append(f' class="slice" data-tag="{html.escape(tag)}" data-run="{html.escape(run)}"')
    return "\n".join([
        "<h3>Question slices</h3>",
        "<p>Each run over the questions of one tag (a question may carry several): the mean and its 95% bootstrap "
        f"interval over the tag's questions, then against the baseline{several} on {first}: wins / ties / "
        "losses, the mean difference and the paired randomization test's p-value, Holm-adjusted across the runs compared on that "
        "tag (run_tag_measures, run_tag_comparisons). Few questions give wide intervals.</p>",
        table(["tag", "run", "questions", *(html.escape(labels[name]) for name in names),
               f"W / T / L ({first})", "mean difference", "randomization p (Holm)"], body, attrs, text_columns=2),
    ])


def judging_section(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """What each new version of the judgments changed (qrels_version_leaderboard_changes between consecutive
    versions measured, on MRR, the largest-k NDCG and Judged; qrels_version_changes' run values on those), and
    each automatic judge's agreement with people beside its cost (judge_agreement), and whether it orders the runs
    as people do (judge_leaderboard_agreement on MRR and the largest-k NDCG). Empty without either."""
    largest = con.execute("select max(k) from main.qrels_version_changes where collection_id = ? and measure = ?",
                          [collection_id, NDCG]).fetchall()[0][0]  # fmt: skip
    names = ["recip_rank", f"{NDCG}_{largest}", f"{JUDGED}@{largest}"]
    consecutive = """
        with versions as (select distinct from_qrels_version, to_qrels_version from main.qrels_version_changes
                          where collection_id = $c),
        steps as (select from_qrels_version, min(to_qrels_version) as to_qrels_version from versions group by 1)
    """
    leaderboards = rows(con, consecutive + """
        select changes.* from main.qrels_version_leaderboard_changes as changes
        inner join steps using (from_qrels_version, to_qrels_version)
        where changes.collection_id = $c and list_contains($names, changes.measure_name)
        order by changes.from_qrels_version, list_position($names, changes.measure_name)
        """, {"c": collection_id, "names": names})  # fmt: skip
    moves = rows(con, consecutive + """
        select changes.* from main.qrels_version_changes as changes
        inner join steps using (from_qrels_version, to_qrels_version)
        where changes.collection_id = $c and list_contains($names, changes.measure_name)
        order by changes.from_qrels_version, list_position($names, changes.measure_name), changes.rank_to
        """, {"c": collection_id, "names": names})  # fmt: skip
    judges = rows(con, "select * from main.judge_agreement where collection_id = ? order by qrels_version",
                  [collection_id])  # fmt: skip
    judged_largest = con.execute("select max(k) from main.judge_leaderboard_agreement where collection_id = ? "
                                 "and measure = ?", [collection_id, NDCG]).fetchall()[0][0]  # fmt: skip
    judged_names = ["recip_rank", f"{NDCG}_{judged_largest}"]
    orders = rows(con, """
        select * from main.judge_leaderboard_agreement
        where collection_id = $c and list_contains($names, measure_name)
        order by qrels_version, list_position($names, measure_name)
        """, {"c": collection_id, "names": judged_names})  # fmt: skip
    parts = []
    if leaderboards:
        parts += ["<h3>What new judgments changed</h3>",
                  "<p>Between each qrels version and the next one measured: whether the runs' order moved "
                  "(Kendall's tau-b, tau_AP where swaps near the top cost more, rank-biased overlap; 1 is the same "
                  "order) and the pairs of runs that swapped, then each run's value before and after "
                  "(qrels_version_leaderboard_changes, qrels_version_changes).</p>",
                  table(["versions", "measure", "runs", "Kendall's tau", "tau_AP", "RBO", "swapped pairs"],
                        [[f"{c['from_qrels_version']} &rarr; {c['to_qrels_version']}", fmt(c["measure_name"]),
                          fmt(c["n_runs"]), fmt(c["kendall_tau"]), fmt(c["tau_ap"]), fmt(c["rbo"]),
                          fmt(c["swapped_pairs"] or "none")] for c in leaderboards],
                        [f' class="version-change" data-from="{c["from_qrels_version"]}" '
                         f'data-to="{c["to_qrels_version"]}" data-measure="{html.escape(c["measure_name"])}"'
                         for c in leaderboards], text_columns=2),  # fmt: skip
                  table(["versions", "measure", "run", "before", "after", "change", "place before", "place after"],
                        [[f"{m['from_qrels_version']} &rarr; {m['to_qrels_version']}", fmt(m["measure_name"]),
                          fmt(m["run_id"]), fmt(m["value_from"]), fmt(m["value_to"]),
                          fmt(m["value_change"], signed=True), fmt(m["rank_from"]), fmt(m["rank_to"])]
                         for m in moves], text_columns=3)]  # fmt: skip
    if judges:
        parts += ["<h3>Automatic judges</h3>",
                  "<p>Each automatic judge's agreement with people on the pairs both graded, with its 95% bootstrap "
                  "interval over questions, beside its cost: Cohen's kappa on relevant or not, then the linear and "
                  "quadratic weighted kappas on the grades (judge_agreement; the confusion matrix is "
                  "judge_confusion). A judge below the collection's min_judge_kappa fails the build.</p>",
                  table(["version", "judge", "judgments", "mean ms", "p95 ms", "pairs with people", "kappa",
                         "weighted kappa (linear)", "weighted kappa (quadratic)", "gate"],
                        [[fmt(j["qrels_version"]), fmt(j["judge"] + (f" {j['judge_version']}" if j["judge_version"] else "")),
                          fmt(j["n_judgments"]), fmt(j["mean_latency_ms"]), fmt(j["p95_latency_ms"]), fmt(j["n_pairs"]),
                          interval(j["kappa"], j["kappa_ci_low"], j["kappa_ci_high"]),
                          interval(j["weighted_kappa_linear"], j["weighted_kappa_linear_ci_low"],
                                   j["weighted_kappa_linear_ci_high"]),
                          interval(j["weighted_kappa_quadratic"], j["weighted_kappa_quadratic_ci_low"],
                                   j["weighted_kappa_quadratic_ci_high"]),
                          "none" if j["min_judge_kappa"] is None else
                          f"{'passes' if j['passes_gate'] else 'fails'} (kappa &ge; {fmt(j['min_judge_kappa'])})"]
                         for j in judges],
                        [f' class="judge" data-version="{j["qrels_version"]}"' for j in judges],
                        text_columns=2)]  # fmt: skip
    if orders:
        parts += ["<p>Whether each judge orders the runs as people do: the runs measured on the pairs both graded, "
                  "with the judge's grades and with people's, and the two leaderboards compared, each statistic with "
                  "its 95% bootstrap interval over questions (judge_leaderboard_agreement).</p>",
                  table(["version", "measure", "runs", "Kendall's tau", "tau_AP", "RBO", "swapped pairs"],
                        [[fmt(o["qrels_version"]), fmt(o["measure_name"]), fmt(o["n_runs"]),
                          *(interval(o[s], o[f"{s}_ci_low"], o[f"{s}_ci_high"]) for s in ("kendall_tau", "tau_ap", "rbo")),
                          fmt(o["swapped_pairs"] or "none")] for o in orders],
                        [f' class="judge-order" data-version="{o["qrels_version"]}" '
                         f'data-measure="{html.escape(o["measure_name"])}"' for o in orders], text_columns=2)]  # fmt: skip
    return "\n".join(parts)


def collection_section(con: duckdb.DuckDBPyConnection, collection_id: str) -> tuple[str, list[Chart]]:
    leaderboard = rows(con, """
        select leaderboard.*, judged.value as judged
        from main.run_leaderboard as leaderboard
        left join main.run_measures as judged
            on leaderboard.collection_id = judged.collection_id and leaderboard.run_id = judged.run_id
            and leaderboard.k = judged.k and judged.measure = ?
        where leaderboard.collection_id = ?
        order by leaderboard.k, leaderboard.run_position
        """, [JUDGED, collection_id])
    comparisons = rows(con, """
        select comparisons.*
        from main.run_comparisons as comparisons
        inner join main.measure_catalog as catalog on comparisons.measure = catalog.measure
        inner join (select distinct collection_id, run_id, run_position from main.run_leaderboard) as positions
            on comparisons.collection_id = positions.collection_id and comparisons.run_id = positions.run_id
        where comparisons.collection_id = ?
        order by catalog.measure_position, comparisons.k, positions.run_position
        """, [collection_id])
    missed = rows(con, """
        select run_id, k, question_id, doc_id, recall_cost, explanation, count(*) over () as n_missed
        from main.missed_relevant_docs where collection_id = ? order by run_id, k, question_id, doc_id limit ?
        """, [collection_id, MAX_MISSED_ROWS])
    warnings = coverage_warnings(con, collection_id)
    styles = run_styles(sorted({r["run_id"] for r in leaderboard}))  # once: every chart colours a run alike
    marks = level_marks(con)
    charts = [*curve_charts(con, collection_id, styles), mrr_chart(con, collection_id, styles)]
    charts += [chart for chart in (precision_recall_chart(con, collection_id, styles),) if chart]
    charts.append(rank_heatmap(con, collection_id))
    first = leaderboard[0]
    baseline = first["baseline_run_id"]  # the leaderboard's differences are against it (the first baseline)
    baselines = [r["run_id"] for r in leaderboard if r["k"] == first["k"] and r["is_baseline"]]
    against = {b: [c for c in comparisons if c["baseline_run_id"] == b] for b in baselines}
    against = {b: found for b, found in against.items() if found}  # the baselines some run is compared with
    charts += [chart for b, found in against.items() if (chart := comparison_chart(
        found, collection_id, "ndcg-vs-baseline" if len(against) == 1 else f"ndcg-vs-baseline-{b}"))]
    charts += [chart for chart in (latency_chart(leaderboard, collection_id, styles),
                                   history_chart(con, collection_id, styles)) if chart]

    named = ", ".join(baselines) or no_baseline(collection_id)
    parts = [f'<section id="collection-{html.escape(collection_id)}"><h2>Collection {html.escape(collection_id)}</h2>',
             (f'<p class="meta">{len({r["run_id"] for r in leaderboard})} runs, {first["n_questions"]} questions '
              f'averaged; baseline run{"s" * (len(baselines) > 1)}: {html.escape(named)}.</p>')]
    runs_headlines = {run: found for (collection, run), found in headlines(con).items() if collection == collection_id}
    if runs_headlines:  # the collection's preset leads: its headline measures, as the community reports them
        preset = next(iter(runs_headlines.values()))[0]
        names = [name for name, *_ in next(iter(runs_headlines.values()))[1]]
        order = {r["run_id"]: r["run_position"] for r in leaderboard}
        ranked = sorted(runs_headlines, key=lambda run: order.get(run, 0))
        parts.append(f'<h3>Headline ({html.escape(preset)} preset)</h3>')
        parts.append(table(
            ["run", *names],
            [[fmt(run), *(fmt(mean) for _, mean, _, _ in runs_headlines[run][1])] for run in ranked],
            [f' class="headline" data-run="{html.escape(run)}"' for run in ranked],
        ))
    if warnings:
        parts.append('<div class="warnings">' + "".join(
            f'<p class="coverage-warning" data-run="{html.escape(w["run_id"])}" data-k="{w["k"]}">'
            f"Warning: {html.escape(w['text'])}.</p>" for w in warnings) + "</div>")
    parts += ['<div class="charts">', *map(figure, charts), "</div>", "<h3>Leaderboard at each k</h3>",
              f"<p>Judged@k is the share of each run's top k documents that have a judgment (any grade): where two "
              f"runs' Judged@k differ by more than {100 * COVERAGE_GAP:.0f} points, their NDCG@k difference may come "
              "from missing judgments rather than from retrieval.</p>"]
    for k in sorted({r["k"] for r in leaderboard}):
        at_k = [r for r in leaderboard if r["k"] == k]
        parts.append(f"<h4>k = {k}</h4>")
        measured = [f"Recall@{k}", f"Precision@{k}", f"NDCG@{k}", f"Judged@{k}", "MRR", "MAP", "R-precision",
                    f"Hit@{k}"]
        parts.append(table(
            ["run", "retriever", "questions", *(level_label(marks, collection_id, label) for label in measured),
             "NDCG rank", f"NDCG vs {html.escape(baseline)}" if len(baselines) > 1 else "NDCG vs baseline",
             "latency mean ms", "p50 ms", "p95 ms"],
            [[fmt(r["run_id"]), fmt(r["retriever"]), fmt(r["n_questions"]), fmt(r["recall"]), fmt(r["precision"]),
              fmt(r["ndcg"]), fmt(r["judged"]), fmt(r["mrr"]), fmt(r["mean_average_precision"]), fmt(r["r_precision"]),
              fmt(r["hit_rate"]), fmt(r["ndcg_rank"]), fmt(r["ndcg_vs_baseline"], signed=True),
              fmt(r["latency_mean_ms"]), fmt(r["latency_p50_ms"]), fmt(r["latency_p95_ms"])] for r in at_k],
            [f' data-run="{html.escape(r["run_id"])}" data-k="{k}"'
             + (' class="baseline"' if r["is_baseline"] else "") for r in at_k],
            text_columns=2,
        ))
    for position, (compared_with, found) in enumerate(against.items()):
        parts.append(f"<h3>Against the baseline {html.escape(compared_with)}</h3>")
        if position == 0:
            parts.append("<p>Per compared measure (named as trec_eval or ir_measures prints it, in "
                         "measure_catalog's order): questions won, tied and lost against the baseline, the mean "
                         "difference with its 95% paired t interval, the effect size (mean / standard deviation of "
                         "the per-question differences, Cohen's d<sub>z</sub>), the paired t-test and paired "
                         "randomization test p-values, and both Holm-adjusted across the runs compared with the "
                         "same baseline on the same measure.</p>")
        parts.append(table(
            ["measure", "run", "wins", "ties", "losses", "mean difference", "95% interval", "effect size",
             "t-test p", "randomization p", "t-test p (Holm)", "randomization p (Holm)"],
            [[fmt(c["measure_name"]), fmt(c["run_id"]), fmt(c["wins"]), fmt(c["ties"]), fmt(c["losses"]),
              fmt(c["mean_difference"], signed=True), difference_interval(c), fmt(c["effect_size"], signed=True),
              fmt(c["t_p_value"]), fmt(c["randomization_p_value"]), fmt(c["t_p_value_holm"]),
              fmt(c["randomization_p_value_holm"])]
             for c in found],
            [f' data-run="{html.escape(c["run_id"])}" data-measure="{html.escape(c["measure_name"])}" '
             f'data-baseline="{html.escape(c["baseline_run_id"])}"' for c in found],
            text_columns=2,
        ))
    if not against:
        parts.append(f"<h3>Against the baseline {html.escape(baseline or '')}</h3>")
        parts.append("<p>No comparison: the collection needs the baseline run and at least one other run.</p>")
    many, many_charts = many_runs_section(con, collection_id, leaderboard)
    parts += [many, *(f'<div class="charts">{figure(chart)}</div>' for chart in many_charts)]
    charts += many_charts
    parts.append(slices_section(con, collection_id))
    parts.append(judging_section(con, collection_id))
    parts.append("<h3>Missed relevant documents</h3>")
    if missed:
        more = missed[0]["n_missed"] - len(missed)
        parts.append('<ul class="missed">' + "".join(
            f'<li data-run="{html.escape(m["run_id"])}" data-k="{m["k"]}">{fmt(m["run_id"])} @ k={m["k"]}, '
            f'{fmt(m["question_id"])} (recall cost {fmt(m["recall_cost"])}): {fmt(m["explanation"])}</li>'
            for m in missed) + "</ul>")
        parts.append(f"<p>... and {more} more (query main.missed_relevant_docs).</p>" if more > 0 else "")
    else:
        parts.append("<p>None: every relevant document is in every run's top k.</p>")
    parts.append("</section>")
    return "\n".join(parts), charts


def report(con: duckdb.DuckDBPyConnection, source: str, generated_at: str) -> tuple[str, list[Chart]]:
    collections = [c for (c,) in con.execute(
        "select distinct collection_id from main.run_leaderboard order by 1").fetchall()]
    sections, charts = [], []
    for collection_id in collections:
        section, collection_charts = collection_section(con, collection_id)
        sections.append(section)
        charts += collection_charts
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Retrieval metrics report</title><style>{STYLE}</style></head>
<body data-charts-total="{len(charts)}">
<h1>Retrieval metrics report</h1>
<p class="meta">From {html.escape(source)}; generated {generated_at}. Every number is trec_eval's (see the README).</p>
{"".join(sections)}
<script>{LOAD_SCRIPT}</script>
</body></html>
"""
    return page, charts


def write_report(con: duckdb.DuckDBPyConnection, source: str, out: Path) -> str:
    """Write <out>/index.html and the charts as PNGs from a built warehouse's marts (`source` names it on the
    page); returns the one-line summary. InputError, naming the source, when it has no runs yet."""
    if not con.execute("select count(*) from main.run_leaderboard").fetchall()[0][0]:
        raise InputError(f"no runs in {source}: run `make run` first")
    generated_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    page, charts = report(con, source, generated_at)
    out.mkdir(parents=True, exist_ok=True)
    for chart in charts:
        (out / chart.filename).write_bytes(chart.png)
    (out / "index.html").write_text(page, encoding="utf-8")
    return f"wrote {out / 'index.html'} and {len(charts)} charts"
