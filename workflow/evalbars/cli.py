"""The ``evalbars`` command line.

Each subcommand has a function that adds its arguments and a function that runs
it and returns the exit status; :func:`build_parser` wires them up.

Exit status: 0 on success; 1 on bad input (the reason is printed as one line on
stderr, no traceback); 2 on a bad command line (also one line).

Example::

    evalbars ranks leaderboard.csv
    evalbars ranks leaderboard.tsv --format json --seed 7 --draws 20000 --level 0.9
    evalbars read lm_eval_output/ inspect_logs/ -o items.parquet
    evalbars claims data/subsample/items.parquet --claim "best: A" --claim "A > B in math"
    evalbars plan --models 6 --gap 2 --disagreement 0.25 --procedure holm
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from . import __version__, claims, planning, ranks
from .errors import EvalbarsError, InputError
from .items import MISSING_POLICIES, join_sources, read_summary, score_sources
from .ranks import DEFAULT_DRAWS, DEFAULT_LEVEL, DEFAULT_SEED
from .readers import FORMATS, SourceOptions, read_source
from .tables import to_markdown

__all__ = ["build_parser", "main"]


class _OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# --- evalbars ranks ------------------------------------------------------------------------------


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1 (e.g. 0.95)")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
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
        choices=["markdown", "csv", "json"],
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
        type=_positive_int,
        default=DEFAULT_DRAWS,
        help=f"plausible worlds to draw (default: {DEFAULT_DRAWS})",
    )
    parser.add_argument(
        "--level",
        type=_level,
        default=DEFAULT_LEVEL,
        help=f"confidence level of intervals and rank ranges (default: {DEFAULT_LEVEL})",
    )


def _run_ranks(args: argparse.Namespace) -> int:
    board = ranks.read_leaderboard(args.file)
    report = ranks.rank_table(board, level=args.level, draws=args.draws, seed=args.seed)
    if args.format == "markdown":
        sys.stdout.write(ranks.report_markdown(report))
    elif args.format == "json":
        sys.stdout.write(ranks.report_json(report))
    else:
        report.table.to_csv(sys.stdout, index=False, lineterminator="\n")
        print(report.headline, file=sys.stderr)
    return 0


# --- evalbars read ---------------------------------------------------------------------------------


def _add_read_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="prediction files or folders of harness logs (lm-eval output folders, Inspect logs)",
    )
    parser.add_argument("--format", choices=FORMATS, default="auto", help="(default: auto)")
    parser.add_argument("--model", help="model name of an MMLU-Pro-style JSON file")
    parser.add_argument("--id-field", help="lm-eval: doc field that identifies a question")
    parser.add_argument("--category-field", help="lm-eval doc field / Inspect metadata key")
    parser.add_argument("--metric", help="lm-eval: per-sample metric (default acc / exact_match)")
    parser.add_argument("--filter", help="lm-eval: filter to read when a task logs several")
    parser.add_argument("--runs", choices=["only", "newest"], default="only")
    parser.add_argument("--scorer", help="Inspect: the scorer to read (default: the only one)")
    parser.add_argument(
        "--allow-partial", action="store_true", help="Inspect: read error/cancelled logs too"
    )
    parser.add_argument("--split", help="HELM: the split to read (default: test)")
    parser.add_argument("--perturbation", help="HELM: read this perturbation's copies instead")
    parser.add_argument("--instances", help="SWE-bench: file of the split's instance ids")
    parser.add_argument(
        "--missing-prediction",
        choices=MISSING_POLICIES,
        default="wrong",
        help="what a missing prediction counts as (default: wrong)",
    )
    parser.add_argument("-o", "--output", help="write the item table to this Parquet file")


def _run_read(args: argparse.Namespace) -> int:
    options = SourceOptions(
        format=args.format,
        model=args.model,
        id_field=args.id_field,
        category_field=args.category_field,
        metric=args.metric,
        filter=args.filter,
        runs=args.runs,
        scorer=args.scorer,
        allow_partial=args.allow_partial,
        split=args.split,
        perturbation=args.perturbation,
        instances=args.instances,
    )
    raw = [frame for path in args.paths for frame in read_source(path, options)]
    items = score_sources(join_sources(raw), args.missing_prediction)
    summary = read_summary(raw, items)
    sys.stdout.write(to_markdown(summary, formats={"accuracy": ".4f"}))
    if args.output:
        items.to_parquet(args.output, index=False)
        print(f"wrote {len(items):,} rows to {args.output}", file=sys.stderr)
    return 0


# --- evalbars claims and evalbars plan -------------------------------------------------------------


def _add_claims_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", metavar="ITEMS", nargs="+", help="item tables or prediction files")
    parser.add_argument(
        "--claim", action="append", default=[], help='a claim, e.g. "A > B in math"'
    )
    parser.add_argument("--claims-file", help="a text file of claims, one a line ('#' comments)")
    parser.add_argument("--alpha", type=_level, default=0.05, help="level (default: 0.05)")
    parser.add_argument("--family", choices=claims.FAMILIES, default="claims", help="Holm family")
    parser.add_argument("--power", type=_level, default=0.8, help="for questions needed (0.8)")
    parser.add_argument("--seed", type=_seed, default=DEFAULT_SEED, help="bootstrap seed")
    parser.add_argument("--replicates", type=_positive_int, default=DEFAULT_DRAWS)
    parser.add_argument("--format", choices=["markdown", "csv", "json"], default="markdown")


def _run_claims(args: argparse.Namespace) -> int:
    texts = list(args.claim) + (
        claims.read_claims_file(args.claims_file) if args.claims_file else []
    )
    if not texts:
        raise InputError("evalbars claims", "no claims given; use --claim or --claims-file")
    wide = claims.load_scores(args.items)
    table = claims.evaluate_claims(
        wide, texts, args.alpha, args.family, args.power, args.replicates, args.seed
    )
    if args.format == "markdown":
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
    parser.add_argument("--disagreement", type=_level, required=True, help="share of disagreement")
    parser.add_argument("--alpha", type=_level, default=0.05, help="level (default: 0.05)")
    parser.add_argument("--power", type=_level, default=0.8, help="power (default: 0.8)")
    parser.add_argument("--procedure", choices=planning.PROCEDURES, default="holm")
    parser.add_argument("--tests", type=_positive_int, help="family size (default: all pairs)")
    parser.add_argument("--test", choices=planning.TESTS, default="wald", help="test statistic")
    parser.add_argument("--simulate", action="store_true", help="Holm over all pairs, simulated")
    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")


def _run_plan(args: argparse.Namespace) -> int:
    if (args.gap is None) == (args.questions is None):
        raise InputError("evalbars plan", "give exactly one of --gap (points) or --questions")
    if args.gap is not None and not 0 < args.gap / 100 <= args.disagreement:
        raise InputError(
            f"--gap {args.gap:g}",
            f"must be above 0 and at most the disagreement rate ({100 * args.disagreement:g} points)",
        )
    if args.models < 2:
        raise InputError(f"--models {args.models}", "a comparison needs at least 2 models")
    gap = None if args.gap is None else args.gap / 100
    result = planning.plan(
        args.models,
        gap,
        args.disagreement,
        args.alpha,
        args.power,
        args.procedure,
        args.tests,
        args.questions,
        args.test,
    )
    simulated = None
    if args.simulate and gap is not None and args.procedure == "holm" and args.tests is None:
        try:
            simulated = planning.holm_questions(
                args.models, gap, args.disagreement, args.alpha, args.power
            )
        except ValueError as exc:
            raise InputError("evalbars plan --simulate", str(exc)) from exc
        result["questions_simulated"] = simulated
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        sys.stdout.write(planning.plan_text(result, simulated))
    return 0


# --- Entry point -----------------------------------------------------------------------------------


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
            "ranks",
            "score intervals, separated neighbours, tiers and plausible ranks of a leaderboard",
            _add_ranks_arguments,
            _run_ranks,
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
            "plan",
            "questions needed for a gap, or the gap a number of questions can find",
            _add_plan_arguments,
            _run_plan,
        ),
    )
    for name, help_text, add_arguments, run in subcommands:
        subparser = commands.add_parser(name, help=help_text, description=help_text)
        add_arguments(subparser)
        subparser.set_defaults(run=run)
    return parser


def main(argv=None) -> int:
    """Run ``evalbars``; returns the exit status (0 ok, 1 bad input, 2 bad command line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # Readers log what they chose or skipped (a filter, a run, stray entries): show it.
    logging.basicConfig(level=logging.WARNING, format="evalbars: %(message)s", force=True)
    try:
        return args.run(args)
    except EvalbarsError as exc:  # bad input; anything else is a bug and keeps its traceback
        reason = " ".join(str(exc).split())
        print(f"evalbars {args.command}: error: {reason}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
