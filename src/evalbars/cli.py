"""The ``evalbars`` command line.

Each subcommand has a function that adds its arguments and a function that runs
it and returns the exit status; :func:`build_parser` wires them up.

Exit status: 0 on success; 1 on bad input (the reason is printed as one line on
stderr, no traceback); 2 on a bad command line (also one line).

Example::

    evalbars report lm_eval_output/ --claim "A > B" --output my-report
    evalbars read lm_eval_output/ inspect_logs/ -o items.parquet
    evalbars claims data/subsample/items.parquet --claim "best: A" --claim "A > B in math"
    evalbars ranks leaderboard.csv
    evalbars ranks leaderboard.tsv --format json --seed 7 --draws 20000 --level 0.9
    evalbars plan --models 6 --gap 2 --disagreement 0.25 --procedure holm

Every command that reads prediction files takes the same reader options
(:func:`_add_reader_arguments`), the options of a ``predictions:`` entry in the config.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import pandas as pd

from evalbars import __version__, api
from evalbars.data.items import MISSING_POLICIES
from evalbars.data.readers import FORMATS, set_hint_style
from evalbars.data.scores import wide_scores
from evalbars.errors import EvalbarsError, InputError
from evalbars.readings import claims, gate, planner, ranks
from evalbars.readings.leaderboard import table as verdicts
from evalbars.readings.leaderboard.stability import MAX_SPLITS, SPLIT_BYTES
from evalbars.readings.ranks import DEFAULT_DRAWS, DEFAULT_LEVEL, DEFAULT_SEED
from evalbars.readings.ranks.defaults import MAX_DRAWS, MIN_DRAWS
from evalbars.readings.ranks.leaderboard import SE_UNITS
from evalbars.render.landing import separation_sentence
from evalbars.stats import holm_power, planning
from evalbars.tables import format_p, to_markdown

__all__ = ["build_parser", "main"]


class _OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: Output formats of every command that prints a table; md is short for markdown.
TABLE_FORMATS = ["markdown", "md", "csv", "json"]
FORMAT_HELP = "output format (default: markdown; md is the same)"

# --- evalbars ranks ------------------------------------------------------------------------------


def _between_0_and_1(text: str, example: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1 (e.g. {example})")
    return value


def _level(text: str) -> float:
    """A confidence level or a power, e.g. 0.95."""
    return _between_0_and_1(text, "0.95")


def _disagreement(text: str) -> float:
    """A disagreement rate, e.g. 0.25."""
    return _between_0_and_1(text, "0.25")


def _alpha(text: str) -> float:
    """A significance level, e.g. 0.05."""
    return _between_0_and_1(text, "0.05")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def _draws(text: str) -> int:
    value = _positive_int(text)
    if value < MIN_DRAWS:
        raise argparse.ArgumentTypeError(
            f"{value} is too few; at least {MIN_DRAWS} (the Monte Carlo error of a probability "
            f"from {value} draws can be {0.5 / value**0.5:.2f})"
        )
    if value > MAX_DRAWS:
        raise argparse.ArgumentTypeError(
            f"{value:,} is too many; at most {MAX_DRAWS:,} ({value:,} would take "
            f"{value / DEFAULT_DRAWS:,.0f} times as long as the default {DEFAULT_DRAWS:,}, and "
            f"{MAX_DRAWS:,} already give a Monte Carlo error under {0.5 / MAX_DRAWS**0.5:.4f})"
        )
    return value


def _splits(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_SPLITS:
        per_1000 = SPLIT_BYTES * value * 1000 / 2**30
        raise argparse.ArgumentTypeError(
            f"{value:,} is too many; at most {MAX_SPLITS:,} ({value:,} splits would hold "
            f"{per_1000:,.0f} GiB per 1,000 questions)"
        )
    return value


def _margin(text: str) -> float:
    """A non-inferiority margin in accuracy points: finite, within [0, 100]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 100:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(
            f"{text} is not between 0 and 100 accuracy points (e.g. 1 for one point)"
        )
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; seeds are whole numbers >= 0")
    return value


def _add_ranks_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help="CSV or TSV leaderboard ('-' reads stdin): a name column (name, system or model) and, "
        "per row, correct+total, score+n or score+se; scores as proportions or percentages",
    )
    parser.add_argument(
        "--format",
        choices=TABLE_FORMATS,
        default="markdown",
        help="output format (default: markdown, with the headline above the table; "
        "csv writes the headline to stderr)",
    )
    parser.add_argument(
        "--seed",
        type=_seed,
        default=DEFAULT_SEED,
        help=f"seed of the plausible-world draws (default: {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--draws",
        type=_draws,
        default=DEFAULT_DRAWS,
        help=f"plausible worlds to draw, at least {MIN_DRAWS} (default: {DEFAULT_DRAWS})",
    )
    parser.add_argument(
        "--level",
        type=_level,
        default=DEFAULT_LEVEL,
        help=f"confidence level of intervals and rank ranges (default: {DEFAULT_LEVEL})",
    )
    parser.add_argument(
        "--se-units",
        choices=SE_UNITS,
        default="auto",
        help="units of the se column: points (0.5 for half a point) or proportion (0.005); "
        "default auto: the scores', checked (an se of 0.012 beside 65.3 points is refused as "
        "a likely proportion)",
    )


def _run_ranks(args: argparse.Namespace) -> int:
    board = ranks.read_leaderboard(args.file, se_units=args.se_units)
    report = ranks.rank_table(board, level=args.level, draws=args.draws, seed=args.seed)
    if args.format in ("markdown", "md"):
        sys.stdout.write(ranks.report_markdown(report))
    elif args.format == "json":
        sys.stdout.write(ranks.report_json(report))
    else:
        report.table.to_csv(sys.stdout, index=False, lineterminator="\n")
        print(report.headline, file=sys.stderr)
    return 0


# --- Reader options, shared by every command that reads prediction files -----------------------


def _add_reader_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a ``predictions:`` entry, one set for every command that reads files."""
    group = parser.add_argument_group(
        "reader options", "how the files are read (the keys of a predictions entry in the config)"
    )
    group.add_argument(
        "--input-format",
        choices=FORMATS,
        default="auto",
        help="the files' format (default: auto, recognised by content)",
    )
    group.add_argument("--model", help="model name of an MMLU-Pro-style JSON file")
    group.add_argument("--id-field", help="lm-eval: doc field that identifies a question")
    group.add_argument(
        "--category-field", help="lm-eval: doc field of the category; Inspect: metadata key"
    )
    group.add_argument("--metric", help="lm-eval: per-sample metric (default acc / exact_match)")
    group.add_argument("--filter", help="lm-eval: filter to read when a task logs several")
    group.add_argument(
        "--task",
        action="append",
        dest="tasks",
        metavar="TASK",
        help="lm-eval: a task to read (repeatable; a group stands for its subtasks; default: all)",
    )
    group.add_argument(
        "--runs",
        choices=["only", "newest"],
        default="only",
        help="two runs of one model and task: refuse them (only, default) or keep the newest",
    )
    group.add_argument("--scorer", help="Inspect: the scorer to read (default: the only one)")
    group.add_argument(
        "--allow-partial", action="store_true", help="Inspect: read error/cancelled logs too"
    )
    group.add_argument("--split", help="HELM: the split to read (default: test)")
    group.add_argument("--perturbation", help="HELM: read this perturbation's copies instead")
    group.add_argument("--instances", help="SWE-bench: file of the split's instance ids")
    group.add_argument(
        "--missing-prediction",
        choices=MISSING_POLICIES,
        default="wrong",
        help="what a missing prediction counts as (default: wrong)",
    )


def _reader_options(args: argparse.Namespace) -> dict:
    """Keyword arguments of :func:`evalbars.api.read_items` from the reader options."""
    return {
        "format": args.input_format,
        "model": args.model,
        "id_field": args.id_field,
        "category_field": args.category_field,
        "metric": args.metric,
        "filter": args.filter,
        "tasks": args.tasks,
        "runs": args.runs,
        "scorer": args.scorer,
        "allow_partial": args.allow_partial,
        "split": args.split,
        "perturbation": args.perturbation,
        "instances": args.instances,
    }


_PATHS_HELP = (
    "prediction files or folders: lm-evaluation-harness output folders (samples_*.jsonl with "
    "results_*.json), Inspect logs (.eval, .json), long CSV/TSV/Parquet tables (model, "
    "question_id, correct), MMLU-Pro JSON; folders are walked for every log"
)


def _add_paths(parser: argparse.ArgumentParser, name: str = "paths") -> None:
    parser.add_argument(name, nargs="+", metavar="PATH", help=_PATHS_HELP)


def _refuse_output_over_inputs(output, inputs, option: str, *, folder: bool = False) -> None:
    """Refuse an output path that is one of the inputs, before anything is read or written.

    ``output`` (the value of ``option``) is refused when it resolves to an input (a symlink or a
    hard link to it included), or when it exists inside an input folder (the folder's next read
    would read it, and writing it would replace a file of the input). With ``folder`` (the run
    directory of ``evalbars report``), an input inside ``output`` is refused too: the run
    rewrites that directory. The inputs are never modified.
    """
    target = Path(output).resolve()
    for given in inputs:
        if given is None or str(given) == "-":
            continue
        source = Path(given).resolve()
        same = target == source or (target.exists() and source.exists() and target.samefile(source))
        inside_input = target.exists() and source.is_dir() and source in target.parents
        inside_output = folder and target in source.parents
        if same or inside_input or inside_output:
            where = "is" if same else "lies inside" if inside_input else "holds"
            raise InputError(
                output, f"{option} {where} the input {str(given)!r}; write the output elsewhere"
            )


# --- evalbars read --------------------------------------------------------------------------------

#: Item-table formats ``read -o`` writes, by suffix.
_OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv")


def _add_read_arguments(parser: argparse.ArgumentParser) -> None:
    _add_paths(parser)
    _add_reader_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        help="also write the item table here: .parquet (or .pq), .csv or .tsv, by the suffix",
    )


def _write_items(items, output: str) -> None:
    """The item table to ``output`` in the format its suffix names, whole or not at all."""
    path = Path(output)
    suffix = path.suffix.lower()
    if suffix not in _OUTPUT_SUFFIXES:
        raise InputError(
            path, f"unknown suffix {suffix or '(none)'!r}; use one of {_OUTPUT_SUFFIXES}"
        )
    if not path.parent.is_dir():
        raise InputError(path, f"folder {str(path.parent)!r} does not exist; create it first")
    if path.exists() and not path.is_file():  # e.g. a device: never replaced by a file
        raise InputError(path, "is not a regular file")
    partial = path.with_name(f".{path.name}.partial")
    try:
        if suffix in (".parquet", ".pq"):
            items.to_parquet(partial, index=False)
        else:
            items.to_csv(partial, index=False, sep="\t" if suffix == ".tsv" else ",")
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from exc


def _run_read(args: argparse.Namespace) -> int:
    options = _reader_options(args)
    if args.output:
        _refuse_output_over_inputs(args.output, [*args.paths, args.instances], "-o")
    summary = api.read_preview(args.paths, missing_prediction=args.missing_prediction, **options)
    sys.stdout.write(to_markdown(summary, formats={"accuracy": ".4f"}))
    if args.output:
        items = api.read_items(args.paths, missing_prediction=args.missing_prediction, **options)
        _write_items(items, args.output)
        print(f"wrote {len(items):,} rows to {args.output}", file=sys.stderr)
    return 0


# --- evalbars claims and evalbars plan ------------------------------------------------------------

CLAIM_SYNTAX = """claim syntax (margins d in accuracy points; spaces around the operators; names as in
the data, and a close spelling is suggested when a name is unknown):
  "A > B"            A beats B (one-sided paired test of the gap)
  "A >= B - d"       A is at most d points worse than B (non-inferiority)
  "|A - B| < d"      A and B within d points (equivalence, two one-sided tests)
  "best: A"          A beats every other analysed model
  "top k: A"         A is among the best k
  "... in CATEGORY"  any of the above on that category's questions"""


def _claim_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--claim", action="append", default=[], help='a claim, e.g. "A > B in math" (repeatable)'
    )
    parser.add_argument("--claims-file", help="a text file of claims, one a line ('#' comments)")


def _claim_texts(args: argparse.Namespace) -> list:
    return list(args.claim) + (
        claims.read_claims_file(args.claims_file) if args.claims_file else []
    )


def _add_claims_arguments(parser: argparse.ArgumentParser) -> None:
    _add_paths(parser, "items")
    _claim_arguments(parser)
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="level (default: 0.05)")
    parser.add_argument("--family", choices=claims.FAMILIES, default="claims", help="Holm family")
    parser.add_argument("--power", type=_level, default=0.8, help="for questions needed (0.8)")
    parser.add_argument("--seed", type=_seed, default=DEFAULT_SEED, help="bootstrap seed")
    parser.add_argument("--replicates", type=_draws, default=DEFAULT_DRAWS)
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    _add_reader_arguments(parser)


def _load_wide(paths, args: argparse.Namespace, needs: str = "claims compare models"):
    """The score matrix of the files a command was given, read with its reader options; one
    line saying what ``needs`` two or more models when the files hold fewer."""
    items = api.read_items(
        paths, missing_prediction=args.missing_prediction, **_reader_options(args)
    )
    if items["model"].nunique() < 2:
        raise InputError(
            ", ".join(str(p) for p in paths),
            f"{needs}, but the data hold {items['model'].nunique()}",
        )
    return wide_scores(items.astype({"model": str}))


def _run_claims(args: argparse.Namespace) -> int:
    texts = _claim_texts(args)
    if not texts:
        raise InputError("--claim", "no claims given; use --claim or --claims-file")
    wide = _load_wide(args.items, args)
    table = claims.evaluate_claims(
        wide,
        texts,
        alpha=args.alpha,
        family=args.family,
        power=args.power,
        replicates=args.replicates,
        seed=args.seed,
    )
    if args.format in ("markdown", "md"):
        sys.stdout.write(claims.claims_markdown(table, args.alpha, args.family))
    elif args.format == "json":
        sys.stdout.write(claims.claims_json(table, args.alpha, args.family))
    else:
        table.to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


def _add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", type=_positive_int, required=True, help="K models compared")
    parser.add_argument("--gap", type=float, help="target gap in accuracy points")
    parser.add_argument("--questions", type=_positive_int, help="questions: find the gap instead")
    parser.add_argument(
        "--disagreement",
        type=_disagreement,
        required=True,
        help="the share of shared questions on which two models' scores differ, (n10 + n01) / n; "
        "for your data, read it per pair from results/tables/pairwise.csv (columns n10, n01, n)",
    )
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="level (default: 0.05)")
    parser.add_argument("--power", type=_level, default=0.8, help="power (default: 0.8)")
    parser.add_argument("--procedure", choices=planning.PROCEDURES, default="holm")
    parser.add_argument("--tests", type=_positive_int, help="family size (default: all pairs)")
    parser.add_argument("--test", choices=planning.TESTS, default="wald", help="test statistic")
    parser.add_argument("--simulate", action="store_true", help="Holm over all pairs, simulated")
    parser.add_argument(
        "--small-gap",
        action="store_true",
        help="plan for a gap under 1 point (without it, --gap 0.02 is refused as a likely "
        "proportion meant as 2 points)",
    )
    parser.add_argument(
        "--format", choices=["markdown", "md", "json"], default="markdown", help=FORMAT_HELP
    )


#: Exit status of `evalbars plan` when its arguments cannot be planned for: the status of an
#: argument error, as argparse gives for the arguments it checks itself.
PLAN_BAD_ARGUMENTS = 2


def _run_plan(args: argparse.Namespace) -> int:
    try:
        return _plan(args)
    except EvalbarsError as exc:  # plan reads no file: every error is one of its arguments
        reason = " ".join(str(exc).split())
        print(f"evalbars plan: error: {reason} (see evalbars plan --help)", file=sys.stderr)
        return PLAN_BAD_ARGUMENTS


def _plan(args: argparse.Namespace) -> int:
    planner.check_plan_request(
        args.models, args.gap, args.questions, args.disagreement, small_gap=args.small_gap
    )
    gap = None if args.gap is None else args.gap / 100
    result = planner.plan(
        args.models,
        gap,
        args.disagreement,
        alpha=args.alpha,
        power=args.power,
        procedure=args.procedure,
        tests=args.tests,
        questions=args.questions,
        test=args.test,
    )
    simulated = None
    if args.simulate and gap is not None and args.procedure == "holm" and args.tests is None:
        try:
            simulated = holm_power.holm_questions(
                args.models, gap, args.disagreement, alpha=args.alpha, power=args.power
            )
        except ValueError as exc:
            raise InputError("--simulate", str(exc)) from exc
        result["questions_simulated"] = simulated
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        sys.stdout.write(planner.plan_text(result, simulated))
    return 0


# --- evalbars report ------------------------------------------------------------------------------


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    _add_paths(parser)
    _claim_arguments(parser)
    parser.add_argument(
        "--output",
        default="evalbars-report",
        help="the run directory: report.html, config.yaml and results/ (default: ./evalbars-report)",
    )
    parser.add_argument(
        "--simulations", action="store_true", help="also run the simulation studies (slower)"
    )
    parser.add_argument("--cores", default="all", help="cores to use (default: all)")
    _add_reader_arguments(parser)


def _verdict_line(rows) -> str:
    """One line per claim: its verdict under each reading, with the (adjusted) p."""
    readings = [
        f"{row.reading.replace('_', ' ')} {row.verdict} (p {format_p(row.p_adjusted)})"
        for row in rows.itertuples()
        if row.verdict != "n/a"
    ]
    return f"  {rows['claim'].iloc[0]}: " + "; ".join(readings)


def _run_report(args: argparse.Namespace) -> int:
    _refuse_output_over_inputs(
        args.output,
        [*args.paths, args.instances, args.claims_file],
        "--output",
        folder=True,
    )
    texts = _claim_texts(args)
    held = []  # a job's line, shown once the run goes on: a failed job's error is printed once

    def progress(line: str) -> None:
        if held:
            print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
        if "steps (" in line:
            print(f"evalbars report: {line}", file=sys.stderr, flush=True)
        else:
            held.append(line)

    try:
        run = api.write_report(
            args.paths,
            args.output,
            claims=texts,
            missing_prediction=args.missing_prediction,
            simulations=args.simulations,
            cores=args.cores,
            progress=progress,
            hint_style="cli",
            **_reader_options(args),
        )
    except EvalbarsError as exc:  # main prints the reason; a held line that says it goes
        if held and " ".join(held[0].split()) != " ".join(str(exc).split()):
            print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
        raise
    if held:
        print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
    print(f"report: {run.report}")
    if len(run.claims):
        print(claims.claims_headline(run.claims))
        for _, rows in run.claims.groupby("claim", sort=False):
            print(_verdict_line(rows))
    else:
        pairwise_path = run.directory / "results" / "tables" / "pairwise.parquet"
        print(f"no claims given. {separation_sentence(pd.read_parquet(pairwise_path))}")
    print(
        f"rerun or edit: snakemake --snakefile {api.SNAKEFILE} --directory {run.directory} "
        f"--configfile {run.config}"
    )
    return 0


# --- evalbars leaderboard and evalbars compare ----------------------------------------------------

#: Exit status of `evalbars compare` on bad input or usage (argparse's convention); 0, 1 and 3
#: are verdicts (gate.EXIT_CODES).
COMPARE_BAD_INPUT = 2

COMPARE_EPILOG = """exit status:
  0  no regression shown: the candidate is non-inferior at the margin, or better
  1  regression: the candidate is worse than the baseline by more than the margin,
     significantly (the interval lies below -margin)
  3  inconclusive: the interval straddles -margin
  2  bad input or usage (one line on stderr)
"""


def _add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "items", metavar="FILE", nargs="+", help="item tables, prediction files or harness logs"
    )
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="level (default: 0.05)")
    parser.add_argument("--power", type=_level, default=0.8, help="for resolution (0.8)")
    parser.add_argument("--level", type=_level, default=DEFAULT_LEVEL, help="interval level")
    parser.add_argument(
        "--splits", type=_splits, default=50, help=f"split-half splits, at most {MAX_SPLITS:,} (50)"
    )
    parser.add_argument("--seed", type=_seed, default=DEFAULT_SEED, help="seed of the splits")
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    _add_reader_arguments(parser)


def _run_leaderboard(args: argparse.Namespace) -> int:
    wide = _load_wide(args.items, args, needs="a leaderboard ranks 2 or more models")
    table = verdicts.leaderboard_table(
        wide,
        alpha=args.alpha,
        power=args.power,
        splits=args.splits,
        seed=args.seed,
        level=args.level,
    )
    headline = verdicts.leaderboard_headline(table, args.splits)
    if args.format in ("markdown", "md"):
        shown = table.assign(
            accuracy=100 * table["accuracy"],
            ci_low=100 * table["ci_low"],
            ci_high=100 * table["ci_high"],
            gap_to_next=100 * table["gap_to_next"],
        )[
            [
                "position",
                "model",
                "accuracy",
                "ci_low",
                "ci_high",
                "letters",
                "rank_kept_share",
                "first_share",
                "gap_to_next",
                "questions_needed",
                "questions_needed_clustered",
                "resolution_ratio",
                "resolution_ratio_clustered",
                "unresolved",
            ]
        ]
        formats = {c: ".1f" for c in ("accuracy", "ci_low", "ci_high", "gap_to_next")}
        formats |= {"rank_kept_share": ".2f", "first_share": ".2f"}
        formats |= {"questions_needed": ",.0f", "questions_needed_clustered": ",.0f"}
        formats |= {"resolution_ratio": ".2f", "resolution_ratio_clustered": ".2f"}
        sys.stdout.write(headline + "\n\n" + to_markdown(shown, formats=formats))
    elif args.format == "json":
        rows = json.loads(table.to_json(orient="records", double_precision=15))
        sys.stdout.write(json.dumps({"headline": headline, "rows": rows}, indent=2) + "\n")
    else:
        table.to_csv(sys.stdout, index=False, lineterminator="\n")
        print(headline, file=sys.stderr)
    return 0


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        metavar="SOURCE",
        nargs="+",
        help="BASELINE CANDIDATE (two files or harness folders, one model each), or one item "
        "table with --baseline NAME --candidate NAME",
    )
    parser.add_argument("--baseline", metavar="NAME", help="the baseline model's name")
    parser.add_argument("--candidate", metavar="NAME", help="the candidate model's name")
    parser.add_argument(
        "--margin",
        type=_margin,
        default=0.0,
        metavar="POINTS",
        help="non-inferiority margin in accuracy points (default: 0)",
    )
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="1 - interval level (0.05)")
    parser.add_argument("--by-category", action="store_true", help="add a per-category table")
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    parser.add_argument("--flips", metavar="FILE", help="write the flipped questions (CSV)")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="decide by an anytime-valid confidence sequence over the questions in the order "
        "the candidate's source lists them (valid at every look while questions are appended)",
    )
    _add_reader_arguments(parser)


def _one_model(items, path: str, name: str | None, role: str) -> str:
    models = sorted(items["model"].unique())
    if name is not None:
        if name not in models:
            raise InputError(path, f"--{role} {name!r} is not a model here; models: {models}")
        return name
    if len(models) != 1:
        raise InputError(path, f"holds {len(models)} models {models}; name one with --{role}")
    return models[0]


def _compare_inputs(args: argparse.Namespace):
    """The score matrix and the (baseline, candidate) column names of `evalbars compare`."""
    if len(args.sources) > 2:
        raise InputError(
            " ".join(args.sources),
            f"{len(args.sources)} sources; give BASELINE CANDIDATE, or one table with "
            "--baseline NAME --candidate NAME",
        )
    tables = [
        api.read_items(path, missing_prediction=args.missing_prediction, **_reader_options(args))
        for path in args.sources
    ]
    if len(tables) == 1:
        if args.baseline is None or args.candidate is None:
            raise InputError(args.sources[0], "one source needs --baseline NAME --candidate NAME")
        baseline = _one_model(tables[0], args.sources[0], args.baseline, "baseline")
        candidate = _one_model(tables[0], args.sources[0], args.candidate, "candidate")
        if baseline == candidate:
            raise InputError(args.sources[0], "the baseline and the candidate are one model")
        items = tables[0][tables[0]["model"].isin([baseline, candidate])]
    else:
        baseline = _one_model(tables[0], args.sources[0], args.baseline, "baseline")
        candidate = _one_model(tables[1], args.sources[1], args.candidate, "candidate")
        base = tables[0][tables[0]["model"] == baseline].astype({"model": str})
        cand = tables[1][tables[1]["model"] == candidate].astype({"model": str})
        if Path(args.sources[0]).resolve() == Path(args.sources[1]).resolve():
            raise InputError(args.sources[1], "is the baseline's source too: a model with itself")
        if baseline == candidate:  # as the one-table form: one name is one model
            raise InputError(
                args.sources[1],
                f"the baseline and the candidate are one model ({baseline!r} in both sources); "
                "give two models (rename one run's model to compare two runs)",
            )
        items = pd.concat([base, cand], ignore_index=True)  # the baseline's categories win
    # The order the candidate's questions were written in: the sequential mode's arrival order.
    arrival = items.loc[items["model"] == candidate, "question_id"].to_numpy()
    wide = wide_scores(items.astype({"model": str}), [baseline, candidate])
    return wide, baseline, candidate, arrival


def _run_compare(args: argparse.Namespace) -> int:
    try:
        if args.flips:
            _refuse_output_over_inputs(args.flips, [*args.sources, args.instances], "--flips")
        if args.flips and not Path(args.flips).parent.is_dir():
            raise InputError(
                args.flips, f"folder '{Path(args.flips).parent}' does not exist; create it first"
            )
        wide, baseline, candidate, arrival = _compare_inputs(args)
        try:
            result = gate.compare_models(
                wide,
                baseline,
                candidate,
                margin=args.margin / 100,
                alpha=args.alpha,
                by_category=args.by_category,
                sequential=args.sequential,
                arrival=arrival,
            )
        except ValueError as exc:
            raise InputError(", ".join(args.sources), str(exc)) from exc
        if args.flips:
            flips = Path(args.flips)
            try:
                result.flips.to_csv(flips, index=False, lineterminator="\n")
            except OSError as exc:  # never delete what the user named: it may be a device
                raise InputError(flips, f"cannot write the flips: {exc.strerror or exc}") from exc
    except EvalbarsError as exc:
        reason = " ".join(str(exc).split())
        print(f"evalbars compare: error: {reason}", file=sys.stderr)
        return COMPARE_BAD_INPUT
    if args.format in ("markdown", "md"):
        sys.stdout.write(gate.compare_markdown(result))
    elif args.format == "json":
        sys.stdout.write(gate.compare_json(result))
    else:
        gate.compare_csv_table(result).to_csv(sys.stdout, index=False, lineterminator="\n")
    s = result.summary
    if s["left_out"]:
        print(f"{s['left_out']:,} questions not answered by both were left out", file=sys.stderr)
    return s["exit_code"]


# --- Entry point ----------------------------------------------------------------------------------

#: What each command's input must hold (the first lines of its --help).
DESCRIPTIONS = {
    "report": "Each PATH is a prediction file or a folder of harness logs (see `evalbars read "
    "--help`). The report, the config it used and every table land in --output.",
    "read": "A file must hold, per (model, question), one score: lm-evaluation-harness output "
    "(samples_<task>_<ts>.jsonl with the results_<ts>.json beside it), Inspect logs (.eval or "
    ".json), a long CSV/TSV/Parquet table with columns model, question_id and correct (0/1, "
    "true/false or a fraction; empty = no prediction), optional category and epoch, or "
    "MMLU-Pro-style JSON records (question_id, category, answer, pred).",
    "claims": "ITEMS are files `evalbars read` reads (e.g. the workflow's "
    "data/subsample/items.parquet). Give claims with --claim or --claims-file.",
    "ranks": "FILE is a leaderboard, one system per row: a name column (name, system or model) "
    "and correct+total, score+n or score+se; scores as proportions or percentages, one scale "
    "per column.",
    "plan": "Give --gap (points) to get the questions needed, or --questions to get the "
    "detectable gap; --disagreement is the share of questions on which two models differ.",
    "leaderboard": "FILE... are files `evalbars read` reads, holding two or more models: one row "
    "per system with its letters, split-half stability and adjacent-pair resolution.",
    "compare": "BASELINE and CANDIDATE are files or harness folders `evalbars read` reads, one "
    "model each (or one item table with --baseline NAME --candidate NAME).",
}

#: One example per command, and the claim syntax where claims are given.
EPILOGS = {
    "report": "example:\n  evalbars report tests/data/harness/lm_eval --runs newest --id-field id "
    "--category-field category --output lm_eval-report\n\n" + CLAIM_SYNTAX,
    "read": "example:\n  evalbars read tests/data/harness/lm_eval --runs newest --id-field id",
    "claims": "example:\n  evalbars claims data/subsample/items.parquet --claim "
    '"Mistral-7B-v0.1 > Yi-6B in math"\n\n' + CLAIM_SYNTAX,
    "ranks": "example:\n  evalbars ranks tests/data/calculator_example.csv",
    "leaderboard": "example:\n  evalbars leaderboard data/subsample/items.parquet",
    "compare": "example:\n  evalbars compare data/subsample/items.parquet --baseline "
    "Mistral-7B-v0.1 --candidate Mistral-7B-Instruct-v0.2\n\n" + COMPARE_EPILOG,
    "plan": "example:\n  evalbars plan --models 6 --gap 2 --disagreement 0.25 --procedure holm\n\n"
    "the disagreement rate of a pair of your models is (n10 + n01) / n in "
    "results/tables/pairwise.csv: n10 and n01 count the questions on which one model is right "
    "and the other wrong, n the questions both answered.",
}


def build_parser() -> argparse.ArgumentParser:
    """The ``evalbars`` parser and its subcommands."""
    parser = _OneLineParser(
        prog="evalbars",
        description="Which ranking claims do benchmark results support?",
    )
    parser.add_argument("--version", action="version", version=f"evalbars {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    commands.required = True
    subcommands = (
        (
            "report",
            "run the whole workflow on your prediction files and write its HTML report",
            _add_report_arguments,
            _run_report,
        ),
        (
            "read",
            "read prediction files and harness logs; print per model what was read",
            _add_read_arguments,
            _run_read,
        ),
        (
            "claims",
            "verdicts of ranking claims ('A > B', 'best: A', ...) on item-level data",
            _add_claims_arguments,
            _run_claims,
        ),
        (
            "ranks",
            "score intervals, separated neighbours, tiers and plausible ranks of a leaderboard",
            _add_ranks_arguments,
            _run_ranks,
        ),
        (
            "plan",
            "questions needed for a gap, or the gap a number of questions can find",
            _add_plan_arguments,
            _run_plan,
        ),
        (
            "leaderboard",
            "letters, split-half stability and adjacent-pair resolution of a leaderboard",
            _add_leaderboard_arguments,
            _run_leaderboard,
        ),
        (
            "compare",
            "release gate: is the candidate worse than the baseline? (exit 0/1/3, 2 bad input)",
            _add_compare_arguments,
            _run_compare,
        ),
    )
    for name, help_text, add_arguments, run in subcommands:
        subparser = commands.add_parser(
            name,
            help=help_text,
            description=f"{help_text}. {DESCRIPTIONS[name]}",
            epilog=EPILOGS[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_arguments(subparser)
        subparser.set_defaults(run=run, parser=subparser)
    return parser


def main(argv=None) -> int:
    """Run ``evalbars``; returns the exit status (0 ok, 1 bad input, 2 bad command line)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # name the subcommand's --help, not the top level's
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    # Readers log what they chose or skipped (a filter, a run, stray entries): show it, with
    # remedies worded as this command line's flags.
    logging.basicConfig(level=logging.WARNING, format="evalbars: %(message)s", force=True)
    previous = set_hint_style("cli")
    try:
        return args.run(args)
    except EvalbarsError as exc:  # bad input; anything else is a bug and keeps its traceback
        reason = " ".join(str(exc).split())
        print(f"evalbars {args.command}: error: {reason}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    finally:
        set_hint_style(previous)


if __name__ == "__main__":
    sys.exit(main())
