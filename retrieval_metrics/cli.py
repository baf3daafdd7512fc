"""The `retrieval-metrics` command: one subcommand per job, each a thin layer over the package.

Every subcommand answers a bad argument, bad input or a database another process holds with one line on
stderr, `retrieval-metrics <command>: error: ...`, and exit code 2, writing nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import NoReturn

import duckdb

from retrieval_metrics.building import build_database, import_and_build
from retrieval_metrics.dbt_runner import dbt_lines_shown
from retrieval_metrics.warehouse import (
    MARTS,
    PROG,
    REPO_ROOT,
    CommandFailed,
    InputError,
    database_error,
    database_path,
    shown,
)
from retrieval_metrics.writer_queue import DEFAULT_WAIT

BENCHMARK = REPO_ROOT / "scripts" / "benchmark.py"


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so that the wrapper prints the one line."""

    command_names: set[str] = set()

    def error(self, message: str) -> NoReturn:
        raise InputError(message)


def rank(args: argparse.Namespace) -> str:
    from tqdm import tqdm

    from retrieval_metrics.plugins import parse_params
    from retrieval_metrics.ranking import RankRequest, rank_collection
    from retrieval_metrics.retrievers import RETRIEVER_NAMES

    request = RankRequest(
        retrievers=list(RETRIEVER_NAMES) if args.all else [args.retriever],
        collection_id=args.collection,
        run_id=args.run_id,
        every_installed=args.all,
        top_k=args.top_k,
        params=parse_params(args.param),
        chunk_rule=args.chunks,
        timeout=args.timeout,
    )
    database = database_path(args.db)
    with queued(args, database, f"rank {', '.join(request.retrievers)}"):
        rank_collection(database, request, lambda line: tqdm.write(f"{PROG} rank: {line}", file=sys.stdout))
    return ""


def queued(args: argparse.Namespace, database: Path, what: str) -> AbstractContextManager[None]:
    """The writers' queue for this command: wait up to --wait seconds for the writer ahead, saying so once."""
    from retrieval_metrics.writer_queue import queued_writer

    say = lambda line: print(f"{PROG} {args.command}: {line}", file=sys.stderr, flush=True)  # noqa: E731
    return queued_writer(database, what, args.wait, say)


def import_(args: argparse.Namespace) -> str:
    from retrieval_metrics.importing import ImportRequest, import_collection

    if args.judgments is not None or args.judge is not None:
        return import_judgments(args)
    request = ImportRequest(args.collection, args.qrels, args.beir, args.split, args.run, args.run_id, args.chunks,
                            tags=args.tags)  # fmt: skip
    desc = f"{PROG} import"
    if args.vars and not args.build:
        raise InputError("--vars goes with --build: they are the build's dbt vars")
    database = database_path(args.db)
    what = f"import run {args.run_id}" if args.run else f"import into {args.collection}"
    with queued(args, database, what + (" and build" if args.build else "")):
        if not args.build:
            return f"collection {args.collection}: {import_collection(database, request, desc)}"
        return import_and_build(request, database, desc, args.vars)


def import_judgments(args: argparse.Namespace) -> str:
    """import --judgments FILE [--judge NAME] [--build]: the collection's next qrels version."""
    from retrieval_metrics.judgments import import_judgments as append_version

    if args.judgments is None:
        raise InputError("--judge goes with --judgments: it names who made them")
    if args.qrels or args.beir or args.run or args.tags:
        raise InputError("--judgments is imported on its own: not with --qrels, --beir, --run or --tags")
    if args.vars and not args.build:
        raise InputError("--vars goes with --build: they are the build's dbt vars")
    database = database_path(args.db)
    with queued(args, database, f"import judgments into {args.collection}"):
        line = append_version(database, args.collection, args.judgments, args.judge or "human")
        dbt_args = (["--vars", args.vars] if args.vars else []) if args.build else None
        return built_on(line, database, dbt_args, args.command)


def built_on(line: str, database: Path, dbt_args: list[str] | None, command: str) -> str:
    """A new qrels version's line, then what measures on it: this build (given its dbt args), or the next."""
    if dbt_args is None:
        return f"{line}; the next build measures on it"
    return f"{line}; measured on it: {build_database(database, dbt_args, f'{PROG} {command}')}"


def build(args: argparse.Namespace) -> str:
    dbt_args, args.wait = wait_option(args.dbt_args)
    if "--verbose" in dbt_args:  # build's own: dbt's lines on stdout too (main)
        dbt_args.remove("--verbose")
    database = database_path()
    with queued(args, database, "build"):
        return build_database(database, dbt_args)


def wait_option(dbt_args: Sequence[str]) -> tuple[list[str], float]:
    """build's own --wait SECONDS, taken out of the arguments it passes to dbt."""
    rest, wait = list(dbt_args), DEFAULT_WAIT
    for i, arg in enumerate(rest):
        if arg == "--wait" or arg.startswith("--wait="):
            value = arg.partition("=")[2] if "=" in arg else (rest[i + 1] if i + 1 < len(rest) else "")
            try:
                wait = float(value)
            except ValueError:
                raise InputError(f"--wait {value!r}: give the seconds to wait for the writer ahead, e.g. --wait 60")
            del rest[i : i + (1 if "=" in arg else 2)]
            break
    return rest, wait


def fuse(args: argparse.Namespace) -> str:
    from retrieval_metrics.fusion import fuse as fuse_runs

    run_ids = [run_id.strip() for run_id in args.runs.split(",") if run_id.strip()]
    run_id = args.run_id or f"{args.method}-{'-'.join(run_ids)}"
    database = database_path(args.db)
    with queued(args, database, f"fuse run {run_id}"):
        return fuse_runs(database, args.collection, run_ids, args.method, run_id, args.rrf_k, args.top_k)


@contextmanager
def reading(args: argparse.Namespace, built: bool = True) -> Iterator[tuple[duckdb.DuckDBPyConnection, str]]:
    """A read-only connection to what a reader reads (the serving copy, unless --db names a file) and its name;
    once the reader is done, one line on stderr says which file and which build it read (an error says only
    the error)."""
    from retrieval_metrics.warehouse import open_built, open_existing, reader_path, source_line

    path = reader_path(args.db)
    with (open_built if built else open_existing)(path) as con:
        line = source_line(con, path)
        yield con, shown(path)
    print(f"{PROG} {args.command}: read {line}", file=sys.stderr, flush=True)


def remove(args: argparse.Namespace) -> str:
    from retrieval_metrics.removal import remove as remove_from

    if args.all and not args.yes:
        raise InputError(f"--all removes every run, judgment, question and document of {args.collection!r}: "
                         "add --yes to do it")  # fmt: skip
    database = database_path(args.db)
    what = f"remove {args.collection}" + (f"/{args.run_id}" if args.run_id else "")
    with queued(args, database, what):
        return remove_from(database, args.collection, args.run_id, args.judgments, args.all)


def settings(args: argparse.Namespace) -> str:
    import yaml

    from retrieval_metrics.per_collection import set_settings

    values: dict[str, object] = {}
    for assignment in args.set:
        name, equals, text = assignment.partition("=")
        if not equals or not name:
            raise InputError(f"--set {assignment!r} is not NAME=VALUE, e.g. --set k_values=10,100")
        try:  # a YAML list, [10, 100]; anything else as written (10,100; a run id)
            values[name] = yaml.safe_load(text) if text.lstrip().startswith("[") else text
        except yaml.YAMLError:
            values[name] = text
    if args.preset:
        values["preset"] = args.preset
    if args.measures:
        values["measures"] = args.measures
    database = database_path(args.db)
    if not values and not args.unset:
        return set_settings(database, args.collection)
    with queued(args, database, f"settings {args.collection}"):
        return set_settings(database, args.collection, values, args.unset)


def pool(args: argparse.Namespace) -> str:
    from retrieval_metrics.pooling import PoolRequest, parse_runs, pool_summary, record_pool
    from retrieval_metrics.warehouse import connect

    request = PoolRequest(args.collection, None if args.all else parse_runs(args.runs), args.depth, args.method)
    request.check()
    database = database_path(args.db)
    with queued(args, database, f"pool {args.collection}"):
        runs = record_pool(database, request)
        built = build_database(database, [], f"{PROG} {args.command}")
        with connect(database, read_only=True) as con:
            summary = pool_summary(con, args.collection)
    return (f"collection {args.collection}: pooled the top {args.depth} of {', '.join(runs)} by {args.method}; "
            f"{built}\n{summary}")  # fmt: skip


def judge(args: argparse.Namespace) -> str:
    """judge --collection C --judge package.module:name [--build]: an automatic judge's qrels version."""
    from retrieval_metrics.judging import JudgeRequest, judge_collection
    from retrieval_metrics.plugins import parse_params

    request = JudgeRequest(args.collection, args.judge, parse_params(args.param), args.pairs, args.limit, args.timeout)
    request.check()
    database = database_path(args.db)
    with queued(args, database, f"judge {args.collection}" + (" and build" if args.build else "")):
        return built_on(judge_collection(database, request), database, [] if args.build else None, args.command)


def scorecard(args: argparse.Namespace) -> str:
    from retrieval_metrics.scorecard import scorecard as render

    with reading(args) as (con, _):
        text = render(con)
    return text or f"no runs yet: write one with `{PROG} rank`, then `{PROG} build`"


def list_(args: argparse.Namespace) -> str:
    from retrieval_metrics.listing import list_warehouse

    return list_warehouse(database_path(args.db), args.collection, args.json)


def report(args: argparse.Namespace) -> str:
    from retrieval_metrics.report import write_report

    with reading(args) as (con, source):
        return write_report(con, source, args.out)


def export(args: argparse.Namespace) -> str:
    from retrieval_metrics.export import check_arguments
    from retrieval_metrics.export import export as run_export

    check_arguments(args.format, args.out, args.collection, args.run_id, args.digits, args.table)
    with reading(args) as (con, source):
        return run_export(con, source, args.format, args.out, args.collection, args.run_id, args.digits,
                          args.table)  # fmt: skip


def read_only_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """InputError unless `sql` is one statement that only reads: a query (SELECT, WITH, FROM, SHOW, DESCRIBE,
    SUMMARIZE), as DuckDB's parser types it. A read-only connection still lets COPY ... TO and EXPORT DATABASE
    write files, ATTACH open others and INSTALL/LOAD change the engine: those are refused, as is a second
    statement."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    if len(statements) != 1:
        raise InputError(f"query runs one statement, not {len(statements)}: run them one at a time")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise InputError(f"query only reads: {kind.name} is refused (a query is SELECT, WITH, FROM, "
                         f"SHOW, DESCRIBE or SUMMARIZE; files are written by `{PROG} export`)")  # fmt: skip


def query(args: argparse.Namespace) -> str:
    with reading(args, built=False) as (con, _):
        read_only_statement(con, args.sql)
        try:
            con.sql(args.sql).show(max_width=200, max_rows=200)
        except duckdb.Error as exc:
            raise InputError(str(exc).splitlines()[0]) from None
    return ""


def bench(args: argparse.Namespace) -> str:
    if not BENCHMARK.exists():
        raise InputError(f"the benchmark harness is the repo's {BENCHMARK.relative_to(REPO_ROOT)}: run from a clone")
    spec = importlib.util.spec_from_file_location("retrieval_metrics_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    harness = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up there
    spec.loader.exec_module(harness)
    if args.bench_args not in (["-h"], ["--help"]):
        harness.options(args.bench_args, parser_class=Parser)  # a bad option: our one line, before it starts
    # The harness runs in a process of its own: it measures its children's peak memory, which a parent that
    # had loaded this package and DuckDB would inflate.
    code = subprocess.call([sys.executable, str(BENCHMARK), *args.bench_args])
    if code != 0:
        raise CommandFailed(f"the benchmark failed (exit {code})", code)
    return ""


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="the DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo)")


def add_reader_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="the DuckDB file to read (default: the serving copy, serving.duckdb beside "
                        "$RETRIEVAL_DB, or $RETRIEVAL_SERVING_DB: a running import or build never holds it)")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", action="store_true", help="show dbt's own lines while it builds (else only "
                        "its log file has them, named as the build starts)")


def add_writer_options(parser: argparse.ArgumentParser) -> None:
    add_db(parser)
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, metavar="SECONDS",
                        help=f"wait up to SECONDS for another writer of the database (default {DEFAULT_WAIT:g}; "
                        "0: fail at once)")


def parser() -> Parser:
    """The command line: one subparser per subcommand, each with its handler as `handler`."""
    top = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    def command(name: str, handler: Callable[[argparse.Namespace], str], help_text: str) -> Parser:
        sub: Parser = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    from retrieval_metrics.plugins import SEARCH_TIMEOUT
    from retrieval_metrics.retrievers import RETRIEVER_NAMES  # light: no dense packages imported

    ranking = command("rank", rank, "rank a collection's questions with a built-in or your own retriever")
    which = ranking.add_mutually_exclusive_group(required=True)
    which.add_argument("--retriever", metavar="NAME",
                       help=f"{', '.join(RETRIEVER_NAMES)}, or your own as package.module:name (docs/plugins.md)")
    which.add_argument("--all", action="store_true", help="every installed built-in retriever, one run each")
    ranking.add_argument("--collection", default="docent", help="the collection to rank (default: docent)")
    ranking.add_argument("--run-id", help="the run to write (default: the retriever's name); not with --all")
    ranking.add_argument("--top-k", type=int, metavar="N",
                         help="keep each question's top N docs (default: every document, as the lesson's measures need)")
    ranking.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                         help="a plug-in's parameter (repeatable); JSON values are read as JSON, recorded in raw.runs")
    ranking.add_argument("--chunks", nargs="?", const="maxp", choices=["maxp", "sump"],
                         help="the plug-in returns chunks (doc#chunk): a doc scores its best chunk's score (maxp, "
                         "the default) or their sum (sump)")
    ranking.add_argument("--timeout", type=float, default=SEARCH_TIMEOUT, metavar="SECONDS",
                         help=f"how long each of a plug-in's searches may take (default {SEARCH_TIMEOUT:g}); "
                         "a search that takes longer fails the run, which writes nothing")
    add_writer_options(ranking)

    importing = command("import", import_, "import TREC qrels, a BEIR folder and/or a TREC run into a collection")
    importing.add_argument("--collection", required=True, help="collection name (a plain identifier)")
    importing.add_argument("--qrels", type=Path, help="TREC qrels file: qid iter docno rel (- reads standard input)")
    importing.add_argument("--beir", type=Path, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    importing.add_argument("--split", default="test", help="BEIR qrels split (default: test)")
    importing.add_argument("--run", type=Path, help="TREC run file: qid Q0 docno rank score tag (- reads standard "
                           "input); an ir_metadata block at its top is kept as the run's metadata")
    importing.add_argument("--run-id", help="run id for --run, required with it (a plain identifier)")
    importing.add_argument("--chunks", nargs="?", const="maxp", choices=["maxp", "sump"],
                           help="the run's ids are chunks (doc#chunk): a doc scores its best chunk's score (maxp, "
                           "the default) or their sum (sump)")
    importing.add_argument("--tags", type=Path, help="the questions' tags, the slices the marts report on: a file of "
                           "`question_id tag` lines; replaces the collection's tags")
    importing.add_argument("--judgments", type=Path, metavar="FILE",
                           help="labels as the collection's next qrels version: CSV or JSON Lines with question_id, "
                           "doc_id, grade (judge, note optional), or TREC qrels (docs/judging.md)")
    importing.add_argument("--judge", help="with --judgments: who judged (default: human), for rows that name none")
    importing.add_argument("--build", action="store_true",
                           help="then build what depends on it and publish the serving copy, in this process")
    importing.add_argument("--vars", help="with --build: dbt vars for the build, e.g. '{k_values: [1, 10]}'")
    add_verbose(importing)
    add_writer_options(importing)

    fusing = command("fuse", fuse, "fuse runs of a collection into a new run (rrf, combsum, combmnz)")
    fusing.add_argument("--collection", default="docent", help="the runs' collection (default: docent)")
    fusing.add_argument("--runs", required=True, help="the runs to fuse, comma-separated: bm25,dense")
    fusing.add_argument("--method", default="rrf", choices=["rrf", "combsum", "combmnz"],
                        help="rrf: sum of 1/(k + rank); combsum / combmnz: over min-max normalised scores")
    fusing.add_argument("--rrf-k", type=float, default=60, help="rrf's k (default 60)")
    fusing.add_argument("--run-id", help="the fused run (default: METHOD-RUN1-RUN2...)")
    fusing.add_argument("--top-k", type=int, metavar="N", help="keep each question's top N fused docs")
    add_writer_options(fusing)

    removing = command("remove", remove, "remove a run, a collection's judgments or a whole collection; the next "
                       "build drops them from the marts")
    removing.add_argument("--collection", required=True, help="the collection")
    removed = removing.add_mutually_exclusive_group(required=True)
    removed.add_argument("--run-id", help="remove this run (its rankings, chunks and latencies)")
    removed.add_argument("--judgments", action="store_true", help="remove the collection's judgments (no runs left)")
    removed.add_argument("--all", action="store_true", help="remove everything of the collection (with --yes)")
    removing.add_argument("--yes", action="store_true", help="confirm --all")
    add_writer_options(removing)

    from retrieval_metrics.presets import PRESETS
    from retrieval_metrics.setting_definitions import help_lines

    setting = command("settings", settings, "show or set a collection's own settings; the next build recomputes "
                      "that collection only")
    setting.formatter_class = argparse.RawDescriptionHelpFormatter
    setting.epilog = f"a collection's own settings (retrieval_metrics/setting_definitions.py):\n{help_lines()}"
    setting.add_argument("--collection", required=True, help="the collection")
    setting.add_argument("--preset", help=f"follow a community's conventions ({', '.join(PRESETS)}): its settings, "
                         "but for those --set gives, and its headline measures")
    setting.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                         help="give the collection its own value (repeatable): k_values=10,100, relevance_level=2")
    setting.add_argument("--measures", nargs="+", metavar="INSTANCE",
                         help="the measure instances it reports beside the defaults, as ir_measures writes them "
                         "(the setting measures): 'RBP(p=0.5)' 'AP(rel=2)' 'nDCG(gains={0:0,1:1,2:3})@10'")
    setting.add_argument("--unset", action="append", default=[], metavar="NAME",
                         help="drop the collection's own value: the seed's, else the dbt var's, applies again")
    add_writer_options(setting)

    pooling = command("pool", pool, "pool runs' top K documents that have no judgment into judging_queue, the "
                      "documents to label next (docs/judging.md), then build")
    pooling.add_argument("--collection", required=True, help="the collection")
    pooled = pooling.add_mutually_exclusive_group(required=True)
    pooled.add_argument("--runs", help="the runs to pool, comma-separated: bm25,dense")
    pooled.add_argument("--all", action="store_true", help="every run the collection has now")
    pooling.add_argument("--depth", type=int, required=True, metavar="K", help="each run's top K per question")
    pooling.add_argument("--method", default="depth", choices=["depth", "rrf", "rbp"],
                         help="the order of a question's queue: depth (best rank; the default), rrf (summed "
                         "1/(60 + rank)) or rbp (summed RBP weight at the collection's rbp_persistence)")
    add_verbose(pooling)
    add_writer_options(pooling)

    judging = command("judge", judge, "grade a collection's judging_queue (or its judged pairs) with your own "
                      "automatic judge, package.module:name, as its next qrels version (docs/judging.md)")
    judging.add_argument("--collection", required=True, help="the collection")
    judging.add_argument("--judge", required=True, metavar="NAME",
                         help="the judge plug-in, package.module:name: built once with the --param pairs, then "
                         "judge(item) per pair")
    judging.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                         help="a judge's parameter (repeatable); JSON values are read as JSON, recorded in "
                         "raw.judgment_versions")
    judging.add_argument("--timeout", type=float, default=SEARCH_TIMEOUT, metavar="SECONDS",
                         help=f"how long each judge call may take (default {SEARCH_TIMEOUT:g}); a call that takes "
                         "longer fails the command, which writes nothing")
    judging.add_argument("--pairs", default="queue", choices=["queue", "judged"],
                         help="queue: the collection's judging_queue (after `pool`; the default); judged: every pair "
                         "with a base or a person's grade, to measure the judge's agreement with people")
    judging.add_argument("--limit", type=int, metavar="N", help="judge the first N pairs only")
    judging.add_argument("--build", action="store_true",
                         help="then build what depends on it and publish the serving copy, in this process")
    add_verbose(judging)
    add_writer_options(judging)

    building = command("build", build, "dbt build on $RETRIEVAL_DB, then publish the serving copy BI tools read "
                       "(--target spark: on Spark, from $RETRIEVAL_DB's raw tables)")
    building.add_argument("dbt_args", nargs="*", metavar="DBT_ARG", help="passed to dbt build, e.g. --select x+; "
                          "build's own: --force, --wait SECONDS, --verbose (dbt's lines on stdout too)")

    listing = command("list", list_, "list the collections (documents, questions, judgments, preset, baseline) and "
                      "their runs (retriever, rows, when written, built or not): the build database, read-only")
    listing.add_argument("--collection", help="only this collection")
    listing.add_argument("--json", action="store_true", help="one JSON document instead of the tables")
    add_db(listing)

    add_reader_db(command("scorecard", scorecard, "print the lesson's table for every run, then the runs side by side"))

    reporting = command("report", report, "write a self-contained HTML report with charts")
    reporting.add_argument("--out", type=Path, default=Path("report"), help="output directory (default: report)")
    add_reader_db(reporting)

    exporting = command("export", export, "export the marts as CSV, Parquet or JSON Lines, or one run in trec_eval's "
                        "-q layout")
    exporting.add_argument("--format", required=True, choices=["csv", "parquet", "jsonl", "trec"])
    exporting.add_argument("--out", required=True, help="directory (csv, parquet, jsonl), or file or - for stdout "
                           "(trec)")
    exporting.add_argument("--table", action="append", default=[], choices=MARTS, metavar="MART",
                           help="export this mart (repeatable; default: the metrics and measures marts), e.g. "
                           "judging_queue for a labelling tool")
    exporting.add_argument("--collection", help="only this collection (required for trec)")
    exporting.add_argument("--run-id", help="only this run (required for trec)")
    exporting.add_argument("--digits", type=int, default=4, help="decimals of the trec values (default 4)")
    add_reader_db(exporting)

    querying = command("query", query, "run one read-only SQL query (SELECT, WITH, FROM, SHOW, DESCRIBE) and "
                       "print the result")
    querying.add_argument("sql", help="one query; other statements (COPY, ATTACH, INSTALL, a second one) are refused")
    add_reader_db(querying)

    benching = command("bench", bench, "benchmark against pytrec_eval, ranx and plain DuckDB SQL")
    benching.add_argument("bench_args", nargs="*", metavar="ARG", help="passed to scripts/benchmark.py")
    top.command_names = set(commands.choices)
    return top


PASS_THROUGH = {"build": "dbt_args", "bench": "bench_args"}  # the rest of their line goes to dbt / the harness


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; print its result on stdout, or one error line on stderr and return 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    top = parser()
    name = argv[0] if argv and argv[0] in top.command_names else None
    where = f"{PROG} {name}" if name else PROG
    args: argparse.Namespace | None = None
    try:
        if name in PASS_THROUGH and argv[1:] not in (["-h"], ["--help"]):
            args = top.parse_args([name])
            setattr(args, PASS_THROUGH[name], argv[1:])  # verbatim, in order: options and values alike
        else:
            args = top.parse_args(argv)
        where = f"{PROG} {args.command}"
        verbose = getattr(args, "verbose", False) or "--verbose" in getattr(args, "dbt_args", [])
        with dbt_lines_shown(verbose):
            output = args.handler(args)
    except InputError as exc:
        return fail(where, str(exc))
    except CommandFailed as exc:
        fail(where, str(exc))
        return exc.code
    except duckdb.IOException as exc:
        db = getattr(args, "db", None) if args is not None else None
        return fail(where, database_error(database_path(db), exc))
    except duckdb.Error as exc:
        return fail(where, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except OSError as exc:
        return fail(where, str(exc))
    except KeyboardInterrupt:
        fail(where, "interrupted; nothing more was written")
        return 130
    if output:
        print(output if args.command in {"scorecard", "export", "list"} else f"{where}: {output}")
    return 0


def fail(where: str, message: str) -> int:
    """Print the one error line; the exit code for bad input."""
    print(f"{where}: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
