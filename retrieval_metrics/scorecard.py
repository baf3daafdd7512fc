"""Print the scorecard: for every run, its collection's headline measures when the collection follows a preset
(retrieval_metrics/presets.py) other than the lesson's, then the lesson's per-k table (Recall@k, Precision@k,
NDCG@k) and MRR, each mean with its 95% bootstrap interval, each label marked with the relevance level it was
measured at where that is not 1 (Recall(rel=2)@10, as ir_measures writes it), the baseline runs first and then the
others by the collection's headline measure (run_leaderboard.run_position), then, for each collection with
several runs, the runs side by side with wins/ties/losses, effect sizes and p-values against each baseline, a block
per baseline (or one line saying the collection has none and how to set it), and last, per such collection, its
letter groups on NDCG@k (runs sharing a letter cannot be told apart) and how many questions it needs (topic set size design, measure_anova and
measure_questions_needed), in one line. Columns line up whatever the cutoffs and run ids.

    retrieval-metrics scorecard [--db PATH]
"""

from __future__ import annotations

import json

import duckdb

from retrieval_metrics.presets import PRESETS, preset_name
from retrieval_metrics.warehouse import PROG

# The lesson's table: its labels and the registry's measures they are (measure_catalog.measure)
LESSON_AT_K = {"Recall": "recall", "Precision": "P", "NDCG": "ndcg_cut"}
LESSON_MRR = "recip_rank"


def with_interval(value: float, low: float | None, high: float | None) -> str:
    """A mean and its 95% interval, compactly: 0.889 [0.667, 1.000] (the mean alone when there is none)."""
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def level_marks(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], str]:
    """Per (collection, measure family): the mark its values carry for the relevance level they were measured at,
    as run_measures.measure_label adds it to the name ("(rel=2)"); no entry where there is none (level 1, or a
    measure the level does not change)."""
    return {(collection_id, measure): mark for collection_id, measure, mark in con.execute(
        "select distinct collection_id, measure, substr(measure_label, length(measure_name) + 1) "
        "from main.run_measures where measure_label <> measure_name").fetchall()}  # fmt: skip


def marked(label: str, mark: str) -> str:
    """A label with the level's mark before its cutoff, as ir_measures writes it: Recall(rel=2)@10, MRR(rel=2)."""
    name, at, k = label.partition("@")
    return f"{name}{mark}{at}{k}"


def aligned(rows: list[list[str]], separator: str = "   ") -> list[str]:
    """Rows of cells, each column padded to its widest cell (the last left as it is)."""
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(map(len, rows), default=0))]
    return [separator.join([cell.ljust(width) for cell, width in zip(row[:-1], widths)] + row[-1:]) for row in rows]


def run_blocks(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The lesson's table, one block per run, every mean with its interval from run_measures."""
    runs = con.execute(
        """
        select collection_id, run_id, any_value(retriever), any_value(n_questions), list(distinct k order by k)
        from main.run_leaderboard
        group by collection_id, run_id
        order by collection_id, any_value(run_position)
        """
    ).fetchall()
    measured = {
        (collection_id, run_id, measure, k): with_interval(value, low, high)
        for collection_id, run_id, measure, k, value, low, high in con.execute(
            """
            select collection_id, run_id, measure, k, value, ci_low, ci_high
            from main.run_measures where list_contains(?, measure)
            """,
            [[*LESSON_AT_K.values(), LESSON_MRR]],
        ).fetchall()
    }
    blocks: list[list[str]] = []
    headlines = headline_lines(con)
    marks = level_marks(con)
    for collection_id, run_id, retriever, n_questions, ks in runs:
        block = [f"{collection_id} / {run_id}  (retriever {retriever}, {n_questions} questions)"]
        block += headlines.get((collection_id, run_id), [])
        rows = [[f"{marked(f'{label}@{k}', marks.get((collection_id, measure), ''))}="
                 f"{measured[(collection_id, run_id, measure, k)]}"
                 for label, measure in LESSON_AT_K.items()] for k in ks]  # fmt: skip
        k_width = max(3, *(len(str(k)) for k in ks))
        block += [f"k={k:<{k_width}} {line}" for k, line in zip(ks, aligned(rows))]
        mrr = marked("MRR", marks.get((collection_id, LESSON_MRR), ""))
        block.append(f"{mrr} (rank-independent) = {measured[(collection_id, run_id, LESSON_MRR, None)]}")
        blocks.append(block)
    return [line for i, block in enumerate(blocks) for line in ([""] if i else []) + block]


Headline = tuple[str, list[tuple[str, float, float | None, float | None]]]  # preset, (label, mean, ci_low, ci_high)


def headlines(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], Headline]:
    """Per run of a collection that follows a preset (but the lesson's, whose headline is the lesson's table):
    the preset and its headline measures' means and intervals, each under its measure_label (map(rel=2) at
    relevance level 2)."""
    rows = con.execute("select collection_id, run_id, measure_name, measure_label, value, ci_low, ci_high, "
                       "evaluation_settings from main.run_measures order by all").fetchall()  # fmt: skip
    values = {(c, r, name): (label, value, low, high) for c, r, name, label, value, low, high, _ in rows}
    found: dict[tuple[str, str], Headline] = {}
    for collection_id, run_id, settings_json in sorted({(c, r, settings) for c, r, *_, settings in rows}):
        preset = json.loads(settings_json).get("preset")  # its name, and the settings overridden since
        if preset_name(preset) not in PRESETS or preset_name(preset) == "lesson":
            continue
        found[(collection_id, run_id)] = (preset, [
            values[(collection_id, run_id, name)]
            for name in PRESETS[preset_name(preset)].headline if (collection_id, run_id, name) in values
        ])  # fmt: skip
    return found


def headline_lines(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[str]]:
    """The headline of each run that has one, as one line."""
    return {
        run: [f"headline ({preset}): " + "   ".join(f"{name}={with_interval(*mean)}" for name, *mean in cells)]
        for run, (preset, cells) in headlines(con).items()
    }


def baselines(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]] | None:
    """Each collection's baseline runs (int_collection_evaluation_settings), by run id, none for none; None for all
    where the warehouse has no such table."""
    has_table = con.execute("select count(*) from duckdb_tables() where schema_name = 'intermediate' "
                            "and table_name = 'int_collection_evaluation_settings'").fetchall()[0][0]  # fmt: skip
    if not has_table:
        return None
    query = "select collection_id, baseline_run_ids from intermediate.int_collection_evaluation_settings"
    return {collection_id: runs.split(", ") if runs else [] for collection_id, runs in con.execute(query).fetchall()}


def not_compared(collection_id: str, set_baselines: dict[str, list[str]] | None, run_ids: list[str]) -> str:
    """One line: why the collection's runs are not compared (no baseline, or none of its baselines is among its
    runs), and the command that sets one."""
    named = [] if set_baselines is None else set_baselines.get(collection_id, [])
    runs = "runs" if len(named) > 1 else "run"
    if set(named) & set(run_ids):
        return (f"{collection_id}: its runs and its baseline {runs} {', '.join(named)} share no measured question: "
                "not compared")
    why = ("no baseline run among its runs" if set_baselines is None else
           f"its baseline {runs} {', '.join(named)} {'are' if len(named) > 1 else 'is'} not among its runs"
           if named else "no baseline run")  # fmt: skip
    command = f"{PROG} settings --collection {collection_id} --set baseline_run_id={run_ids[0]}"
    return (f"{collection_id}: {why}, so its runs are not compared: set one with `{command}` (its runs: "
            f"{', '.join(run_ids)}), then `{PROG} build`")


def side_by_side(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Per collection with 2+ runs: every run's means at every k, then NDCG@k against each baseline (a block
    each, the baselines as run_position orders them)."""
    lines: list[str] = []
    set_baselines = baselines(con)
    collections = con.execute(
        "select collection_id from main.run_metrics group by 1 having count(distinct run_id) > 1 order by 1"
    ).fetchall()
    for (collection_id,) in collections:
        ks = [k for (k,) in con.execute(
            "select distinct k from main.run_leaderboard where collection_id = ? order by k", [collection_id]
        ).fetchall()]
        runs = con.execute(
            """
            select run_id, list(recall order by k), list(precision order by k), list(ndcg order by k), any_value(mrr)
            from main.run_leaderboard where collection_id = ? group by run_id order by any_value(run_position)
            """,
            [collection_id],
        ).fetchall()
        run_width = max(20, *(len(run_id) for run_id, *_ in runs))
        names = [f"{m}@{k}" for m in ("R", "P", "NDCG") for k in ks]
        widths = [max(8, len(name)) for name in names]
        header = ["run".ljust(run_width), *(name.rjust(w) for name, w in zip(names, widths)), "MRR".rjust(7)]
        lines += ["", f"{collection_id}: runs side by side", " ".join(header)]
        for run_id, recalls, precisions, ndcgs, mrr in runs:
            values = [f"{v:.3f}".rjust(w) for v, w in zip([*recalls, *precisions, *ndcgs], widths)]
            lines.append(" ".join([run_id.ljust(run_width), *values, f"{mrr:7.3f}"]))
        comparisons = con.execute(
            """
            select comparisons.run_id, comparisons.baseline_run_id, comparisons.k, wins, ties, losses, mean_difference,
                   effect_size, t_p_value, randomization_p_value, randomization_p_value_holm
            from main.run_comparisons as comparisons
            inner join main.run_leaderboard as leaderboard using (collection_id, run_id, k)
            inner join (select distinct collection_id, run_id, run_position from main.run_leaderboard) as baselines
                on comparisons.collection_id = baselines.collection_id
                and comparisons.baseline_run_id = baselines.run_id
            where comparisons.collection_id = ? and measure_name = 'ndcg_cut_' || comparisons.k
            order by baselines.run_position, leaderboard.run_position, comparisons.k
            """,
            [collection_id],
        ).fetchall()
        if not comparisons:
            lines += ["", not_compared(collection_id, set_baselines, sorted(r for r, *_ in runs))]
            continue
        k_width, wins_width, ties_width, losses_width = (
            max(minimum, *(len(str(row[column])) for row in comparisons))
            for column, minimum in ((2, 3), (3, 3), (4, 1), (5, 3))  # k, wins, ties, losses
        )
        for position, (run_id, baseline, k, wins, ties, losses, difference, effect, t_p, random_p,
                       random_p_holm) in enumerate(comparisons):  # fmt: skip
            if position == 0:
                lines += ["", f"NDCG@k against the baseline {baseline} (wins/ties/losses over questions, "
                              "mean difference, effect size d_z = mean / sd of the differences, paired t-test p, "
                              "randomization p, randomization p Holm-adjusted across runs)"]
            elif baseline != comparisons[position - 1][1]:  # the next baseline's block, its columns as above
                lines += ["", f"NDCG@k against the baseline {baseline} (as above; Holm across the runs compared "
                              "with it)"]
            t_text = "   n/a" if t_p is None else f"{t_p:6.3f}"
            effect_text = "   n/a" if effect is None else f"{effect:+6.2f}"
            lines.append(
                f"{run_id:<{run_width}} k={k:<{k_width}} "
                f"{wins:>{wins_width}}/{ties:>{ties_width}}/{losses:<{losses_width}} diff {difference:+.3f}   "
                f"d_z {effect_text}   t p {t_text}   rand p {random_p:6.3f}   Holm {random_p_holm:6.3f}"
            )
    return lines


def has_tables(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    found = con.execute("select count(distinct table_name) from duckdb_tables() where schema_name = 'main' "
                        "and list_contains(?, table_name)", [list(names)]).fetchall()[0][0]  # fmt: skip
    return bool(found == len(names))


def many_runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Per collection with 2+ runs: each run's letter groups on NDCG@k (run_letter_groups), then one line saying
    the smallest NDCG difference its questions detect (paired t-test) and the questions each target difference
    needs, at the collection's largest k (measure_anova, measure_questions_needed)."""
    if not has_tables(con, "run_letter_groups", "measure_anova", "measure_questions_needed"):
        return []  # a warehouse built before them
    lines: list[str] = []
    collections = con.execute("select distinct collection_id, alpha from main.run_letter_groups order by 1").fetchall()
    for collection_id, alpha in collections:
        letters = con.execute(
            """
            select groups.run_id, groups.k, groups.letters
            from main.run_letter_groups as groups
            inner join main.run_leaderboard as leaderboard using (collection_id, run_id, k)
            where groups.collection_id = ? and groups.measure = 'ndcg_cut'
            order by leaderboard.run_position, groups.k
            """,
            [collection_id],
        ).fetchall()
        if not letters:
            continue
        ks = sorted({k for _, k, _ in letters})
        by_run: dict[str, dict[int, str]] = {}
        for run_id, k, run_letters in letters:
            by_run.setdefault(run_id, {})[k] = run_letters
        rows = [["run", *(f"NDCG@{k}" for k in ks)]]
        rows += [[run_id, *(groups.get(k, "") for k in ks)] for run_id, groups in by_run.items()]
        lines += ["", f"{collection_id}: groups by NDCG@k (runs sharing a letter cannot be told apart: randomized "
                      f"Tukey HSD over every pair of runs, alpha {alpha:g})", *aligned(rows)]  # fmt: skip
        lines.append(questions_line(con, collection_id, max(ks)))
    return lines


def questions_line(con: duckdb.DuckDBPyConnection, collection_id: str, k: int) -> str:
    """One line: the smallest difference in NDCG@k the collection's questions detect, and the questions each
    target difference needs (paired t-test, the collection's alpha and power)."""
    found = con.execute(
        "select n_questions, n_runs, detectable_difference_t, alpha, power from main.measure_anova "
        "where collection_id = ? and measure_name = ?", [collection_id, f"ndcg_cut_{k}"]).fetchall()  # fmt: skip
    if not found or found[0][2] is None:
        return f"{collection_id}: NDCG@{k} does not vary across its runs: no topic set size design"
    n_questions, n_runs, detectable, alpha, power = found[0]
    needed = con.execute(
        "select target_difference, questions_needed_t from main.measure_questions_needed "
        "where collection_id = ? and measure_name = ? order by target_difference",
        [collection_id, f"ndcg_cut_{k}"]).fetchall()  # fmt: skip
    needs = ", ".join(f"{difference:g} needs {count}" for difference, count in needed)
    return (f"{collection_id}: {n_questions} questions detect a difference of {detectable:.3f} in NDCG@{k} at "
            f"power {power:g} (paired t-test, alpha {alpha:g}, residual variance of {n_runs} runs); a difference "
            f"of {needs} questions")


def scorecard(con: duckdb.DuckDBPyConnection) -> str:
    """The whole scorecard: the lesson's table for every run, the side-by-side comparisons, then the groups and
    the questions needed."""
    return "\n".join(run_blocks(con) + side_by_side(con) + many_runs(con))
