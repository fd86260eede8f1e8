"""The ``evalbars`` command line.

Each subcommand (:data:`COMMANDS`) has a function that adds its arguments
(:mod:`evalbars.cli.arguments`) and a function that runs it and returns the exit status
(:mod:`evalbars.cli.commands`, :mod:`evalbars.cli.workflow`, :mod:`evalbars.cli.labels`);
:func:`build_parser` wires them up. The running side is imported only when a command runs, so
that ``evalbars --help`` loads no pandas or scipy.

Exit status: 0 on success; 1 on bad input (the reason is printed as one line on
stderr, no traceback); 2 on a bad command line (also one line); 130 on Ctrl-C (one line: for
``report`` and ``run``, the command that resumes the run).

Example::

    evalbars report lm_eval_output/ --claim "A > B" --output my-report
    evalbars read lm_eval_output/ inspect_logs/ -o items.parquet
    evalbars claims data/subsample/items.parquet --claim "best: A" --claim "A > B in math"
    evalbars ranks leaderboard.csv
    evalbars ranks leaderboard.tsv --format json --seed 7 --draws 20000 --level 0.9
    evalbars plan --models 6 --gap 2 --disagreement 0.25 --procedure holm

Every command that reads prediction files takes the same reader options
(:func:`evalbars.cli.arguments.add_reader_arguments`), the options of a ``predictions:`` entry in the config.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass

from evalbars import __version__
from evalbars.cli import arguments
from evalbars.cli.arguments import CLAIM_SYNTAX, COMPARE_EPILOG, OneLineParser

__all__ = ["Command", "COMMANDS", "build_parser", "main"]


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
    "run": "The workflow evalbars ships (the Snakefile of a clone, or the copy in the installed "
    "package), in --directory. Without --configfile it reruns DIRECTORY/config.yaml (a report's "
    "run directory) or, where there is none, reproduces the paper (downloading MMLU-Pro's "
    "archives, or from $EVALBARS_MIRROR). The configuration's run: key says what it makes (the "
    "stages) and where the report goes. Ctrl-C prints the command that resumes the run.",
    "example": "The lm-evaluation-harness logs of three fake models that evalbars ships, to try "
    "`evalbars report` on a real harness's output.",
    "labels": "PATH... are files `evalbars read` reads. The list (question_id, category, an empty "
    "human column) is a labels file once people fill in the human column: pass it as --labels "
    "to every command. Labels chosen by outcome (the judge's mistakes, flagged answers) "
    "invalidate the judge-corrected readings; label the drawn questions, all of them.",
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
    "run": "examples:\n  evalbars run --directory lm_eval-report            # rerun a report's run\n"
    "  EVALBARS_MIRROR=/path/to/eval_results evalbars run --directory paper\n"
    "  evalbars run --directory paper -- --dry-run         # Snakemake options after --",
    "example": "example:\n  evalbars example lm_eval-example",
    "labels": "example:\n  evalbars labels sample tests/data/harness/lm_eval --runs newest "
    "--id-field id --n 10 --seed 1 -o to_label.csv",
    "plan": "example:\n  evalbars plan --models 6 --gap 2 --disagreement 0.25 --procedure holm\n\n"
    "the disagreement rate of a pair of your models is (n10 + n01) / n in "
    "results/tables/pairwise.csv: n10 and n01 count the questions on which one model is right "
    "and the other wrong, n the questions both answered.",
}


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its one-line help, the function that adds its arguments (the
    parser side, :mod:`evalbars.cli.arguments`), and the function that runs it, as
    ``"module:function"``.

    The running side is imported only when the command runs, so that ``evalbars --help``,
    ``evalbars COMMAND --help`` and a bad command line load no pandas or scipy. Called with the
    parsed arguments, a command runs and returns the exit status.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: str

    def __call__(self, args: argparse.Namespace) -> int:
        module, function = self.run.split(":")
        return getattr(importlib.import_module(module), function)(args)


#: Every subcommand, in the order ``evalbars --help`` lists them.
COMMANDS = (
    Command(
        "report",
        "run the whole workflow on your prediction files and write its HTML report",
        arguments.add_report_arguments,
        "evalbars.cli.workflow:run_report",
    ),
    Command(
        "run",
        "run the shipped workflow in a directory (reproduce the paper, or rerun a report)",
        arguments.add_run_arguments,
        "evalbars.cli.workflow:run_run",
    ),
    Command(
        "example",
        "copy the shipped example logs into a folder, to report on them",
        arguments.add_example_arguments,
        "evalbars.cli.workflow:run_example",
    ),
    Command(
        "read",
        "read prediction files and harness logs; print per model what was read",
        arguments.add_read_arguments,
        "evalbars.cli.commands:run_read",
    ),
    Command(
        "claims",
        "verdicts of ranking claims ('A > B', 'best: A', ...) on item-level data",
        arguments.add_claims_arguments,
        "evalbars.cli.commands:run_claims",
    ),
    Command(
        "ranks",
        "score intervals, separated neighbours, tiers and plausible ranks of a leaderboard",
        arguments.add_ranks_arguments,
        "evalbars.cli.commands:run_ranks",
    ),
    Command(
        "plan",
        "questions needed for a gap, or the gap a number of questions can find",
        arguments.add_plan_arguments,
        "evalbars.cli.commands:run_plan",
    ),
    Command(
        "leaderboard",
        "letters, split-half stability and adjacent-pair resolution of a leaderboard",
        arguments.add_leaderboard_arguments,
        "evalbars.cli.commands:run_leaderboard",
    ),
    Command(
        "compare",
        "release gate: is the candidate worse than the baseline? (exit 0/1/3, 2 bad input)",
        arguments.add_compare_arguments,
        "evalbars.cli.commands:run_compare",
    ),
    Command(
        "labels",
        "draw the questions people should label to correct a judge's scores",
        arguments.add_labels_arguments,
        "evalbars.cli.labels:run_labels",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """The ``evalbars`` parser and its subcommands (each subparser's ``run`` default is its
    :class:`Command`)."""
    parser = OneLineParser(
        prog="evalbars",
        description="Which ranking claims do benchmark results support?",
    )
    parser.add_argument("--version", action="version", version=f"evalbars {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    for command in COMMANDS:
        subparser = commands.add_parser(
            command.name,
            help=command.help,
            description=f"{command.help}. {DESCRIPTIONS[command.name]}",
            epilog=EPILOGS[command.name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(subparser)
        subparser.set_defaults(run=command, parser=subparser)
    return parser


def main(argv=None) -> int:
    """Run ``evalbars``; returns the exit status (0 ok, 1 bad input, 2 bad command line, 130
    interrupted)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `evalbars run ... -- OPTIONS` hands OPTIONS to Snakemake as they are.
    passed = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args, extra = parser.parse_known_args(argv)
    if passed and args.command != "run":
        args.parser.error("only `evalbars run` takes options after --")
    args.snakemake = passed
    if extra:  # name the subcommand's --help, not the top level's
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    # Only now, the arguments parsed, what runs the command loads (pandas, scipy): --help and a
    # bad command line do without it.
    from evalbars.data.readers import set_hint_style  # noqa: PLC0415
    from evalbars.errors import EvalbarsError  # noqa: PLC0415

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
    except KeyboardInterrupt as exc:  # Ctrl-C: one line, and how to resume a run
        resume = getattr(exc, "resume", None)
        line = f"interrupted; resume with: {resume}" if resume else "interrupted"
        print(f"evalbars {args.command}: {line}", file=sys.stderr, flush=True)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    finally:
        set_hint_style(previous)


if __name__ == "__main__":
    sys.exit(main())
