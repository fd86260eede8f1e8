"""The command line's arguments: every command's, the checked numbers they take, the reader
options every command that reads prediction files shares, and the claims.

This is the parser side of the command line: it imports the standard library,
:mod:`evalbars.defaults` and :mod:`evalbars.cli.choices` only, so that ``evalbars --help`` and
``evalbars COMMAND --help`` load no pandas, numpy or scipy (``tests/unit/cli/test_cli.py`` checks
it). What a command does once its arguments are parsed is in :mod:`evalbars.cli.commands`,
:mod:`evalbars.cli.workflow` and :mod:`evalbars.cli.labels`, imported when it runs.
"""

from __future__ import annotations

import argparse
import re

from evalbars.cli.choices import (
    ADJUSTMENTS,
    CLUSTERINGS,
    FAMILIES,
    FORMATS,
    MISSING_POLICIES,
    PROCEDURES,
    RUN_POLICIES,
    SCORE_SPELLING,
    SE_UNITS,
    TESTS,
    TIE_MODELS,
)
from evalbars.defaults import (
    ALPHA,
    DRAWS,
    LEVEL,
    MAX_DRAWS,
    MAX_SPLITS,
    MIN_DRAWS,
    POWER,
    SEED,
    SPLITS,
    TOP_K,
)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: Output formats of every command that prints a table; md is short for markdown.
TABLE_FORMATS = ["markdown", "md", "csv", "json"]
FORMAT_HELP = "output format (default: markdown; md is the same)"

# --- Checked numbers ------------------------------------------------------------------------------


def between_0_and_1(text: str, example: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1 (e.g. {example})")
    return value


def level_type(text: str) -> float:
    """A confidence level or a power, e.g. 0.95."""
    return between_0_and_1(text, "0.95")


def disagreement_type(text: str) -> float:
    """A disagreement rate, e.g. 0.25."""
    return between_0_and_1(text, "0.25")


def alpha_type(text: str) -> float:
    """A significance level, e.g. 0.05."""
    return between_0_and_1(text, "0.05")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def draws_type(text: str) -> int:
    value = positive_int(text)
    if value < MIN_DRAWS:
        raise argparse.ArgumentTypeError(
            f"{value} is too few; at least {MIN_DRAWS} (the Monte Carlo error of a probability "
            f"from {value} draws can be {0.5 / value**0.5:.2f})"
        )
    if value > MAX_DRAWS:
        raise argparse.ArgumentTypeError(
            f"{value:,} is too many; at most {MAX_DRAWS:,} ({value:,} would take "
            f"{value / DRAWS:,.0f} times as long as the default {DRAWS:,}, and "
            f"{MAX_DRAWS:,} already give a Monte Carlo error under {0.5 / MAX_DRAWS**0.5:.4f})"
        )
    return value


def splits_type(text: str) -> int:
    value = positive_int(text)
    if value > MAX_SPLITS:
        # the memory the splits would take, from the module that allocates them (loaded only
        # for this refusal: the parser side imports no pandas)
        from evalbars.readings.leaderboard.stability import SPLIT_BYTES  # noqa: PLC0415

        per_1000 = SPLIT_BYTES * value * 1000 / 2**30
        raise argparse.ArgumentTypeError(
            f"{value:,} is too many; at most {MAX_SPLITS:,} ({value:,} splits would hold "
            f"{per_1000:,.0f} GiB per 1,000 questions)"
        )
    return value


def margin_type(text: str) -> float:
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


def seed_type(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; seeds are whole numbers >= 0")
    return value


# --- Reader options, shared by every command that reads prediction files -----------------------


def add_reader_arguments(parser: argparse.ArgumentParser) -> None:
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
        help="lm-eval, lighteval: a task to read (repeatable; an lm-eval group or a lighteval "
        "superset stands for its subtasks; default: all)",
    )
    group.add_argument(
        "--runs",
        choices=RUN_POLICIES,
        default="only",
        help="two runs of one model and task: refuse them (only, default), keep the newest, or "
        "keep all (each a run: run-to-run noise; two files of one model are two runs)",
    )
    group.add_argument("--scorer", help="Inspect: the scorer to read (default: the only one)")
    group.add_argument(
        "--allow-partial", action="store_true", help="Inspect: read error/cancelled logs too"
    )
    group.add_argument("--split", help="HELM: the split to read (default: test)")
    group.add_argument("--perturbation", help="HELM: read this perturbation's copies instead")
    group.add_argument("--instances", help="SWE-bench: file of the split's instance ids")
    group.add_argument(
        "--labels",
        metavar="FILE",
        help="human labels of judge-scored predictions: a CSV of model, question_id, human "
        "(or question_id, human for every model), joined onto the data (config key labels)",
    )
    group.add_argument(
        "--missing-prediction",
        choices=MISSING_POLICIES,
        default="wrong",
        help="what a missing prediction counts as (default: wrong)",
    )


SCORE_HELP = (
    "the item score every reading reads, from each question's samples pooled over runs: mean "
    "(default), pass@K (one of K samples right), pass^K (all K right) or maj@K (a majority of K, "
    "K odd); questions with fewer than K samples are left out"
)


def score_type(text: str) -> str:
    """An item score as ``--score`` takes it (the config key ``score``): ``mean``, ``pass@K``,
    ``pass^K`` or ``maj@K`` (``majority@K`` the same), written canonically.

    >>> score_type("Pass@5"), score_type("majority@3")
    ('pass@5', 'maj@3')
    """
    spelled = text.strip().lower()
    if not re.fullmatch(SCORE_SPELLING, spelled):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an item score: use mean, pass@K, pass^K or maj@K (K a positive "
            "whole number, odd for maj@K)"
        )
    spelled = spelled.replace("majority@", "maj@")
    if spelled.startswith("maj@") and int(spelled[4:]) % 2 == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: maj@K needs an odd K (no ties)")
    return spelled


def add_score_argument(parser: argparse.ArgumentParser) -> None:
    """``--score``: the item score of every reading (the config key ``score``)."""
    parser.add_argument("--score", type=score_type, default="mean", help=SCORE_HELP)


PATHS_HELP = (
    "prediction files or folders: lm-evaluation-harness output folders (samples_*.jsonl with "
    "results_*.json), Inspect logs (.eval, .json), long CSV/TSV/Parquet tables (model, "
    "question_id, correct), MMLU-Pro JSON; folders are walked for every log. Or files of "
    "pairwise battles (model_a, model_b, winner: LMArena's, Arena-Hard-Auto's judgments, a "
    "table), recognised by content (see the battles options)"
)


def add_paths(parser: argparse.ArgumentParser, name: str = "paths") -> None:
    parser.add_argument(name, nargs="+", metavar="PATH", help=PATHS_HELP)


# --- Claims, as every command that takes them reads them ----------------------------------------

CLAIM_SYNTAX = """claim syntax (margins d in accuracy points; spaces around the operators; names as in
the data, and a close spelling is suggested when a name is unknown):
  "A > B"            A beats B (one-sided paired test of the gap)
  "A > B + d"        A beats B by more than d points (superiority by a margin)
  "A >= B - d"       A is at most d points worse than B (non-inferiority)
  "|A - B| < d"      A and B within d points (equivalence, two one-sided tests)
  "best: A"          A beats every other analysed model (supported only when the
                     confidence set for the best is {A})
  "top k: A"         A is among the best k
  "A >= B - d at <= x cost"  A is at most d points worse than B at no more than x times
                     B's cost (with --prices, or a cost column)
  "A on frontier"    A is on the cost-accuracy frontier (with --prices, or a cost column)
  "... at pass@K"    any of the above on pass@K of the samples (pass^K, maj@K too)
  "... in CATEGORY"  any of the above on that category's questions
on pairwise battles (model_a, model_b, winner) margins are Elo points, e.g. "A > B + 50"."""


def add_claim_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--claim", action="append", default=[], help='a claim, e.g. "A > B in math" (repeatable)'
    )
    parser.add_argument("--claims-file", help="a text file of claims, one a line ('#' comments)")


# --- Each command's arguments ------------------------------------------------------------------


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    add_claim_arguments(parser)
    parser.add_argument(
        "--output",
        default="evalbars-report",
        help="the run directory: report.html, config.yaml and results/ (default: ./evalbars-report)",
    )
    parser.add_argument(
        "--simulations", action="store_true", help="also run the simulation studies (slower)"
    )
    parser.add_argument("--cores", default="all", help="cores to use (default: all)")
    parser.add_argument(
        "--unlock",
        action="store_true",
        help="first remove a Snakemake lock left in the run directory by a run that was killed",
    )
    parser.add_argument(
        "--storage",
        metavar="s3://BUCKET/PREFIX",
        help="keep the run's data and results in this S3 bucket, for executors without a shared "
        "file system (needs evalbars[cloud]; credentials from the environment); the report and "
        "the config stay in --output (docs/guides/cloud.md)",
    )
    parser.add_argument(
        "--storage-endpoint-url",
        metavar="URL",
        help="the URL of an S3 server other than AWS's (MinIO, Ceph), for --storage",
    )
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="dollars per million input and output tokens per model (CSV: model,input,output): "
        "the report adds each model's cost per question and the cost-accuracy frontier",
    )
    add_reader_arguments(parser)
    add_battle_arguments(parser)
    add_score_argument(parser)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--directory",
        default=".",
        help="the run directory: data/ and results/ are written there (default: here)",
    )
    parser.add_argument(
        "--configfile",
        action="append",
        default=[],
        metavar="FILE",
        help="a configuration (repeatable; default: DIRECTORY/config.yaml if it exists, else "
        "the shipped one, which reproduces the paper)",
    )
    parser.add_argument("--cores", default="all", help="cores to use (default: all)")
    parser.add_argument(
        "--unlock",
        action="store_true",
        help="first remove a Snakemake lock left in the run directory by a run that was killed",
    )
    parser.add_argument(
        "--no-report",
        action="store_true",
        help="do not write the report (the config's run.report: report.html in a report's run "
        "directory, else results/report.html)",
    )
    parser.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help="rules or files to make, and no report (default: the stages the config records, "
        "run.stages, and the report); anything after -- goes to Snakemake",
    )


def add_example_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        nargs="?",
        default="lm_eval-example",
        help="where to copy the logs (default: ./lm_eval-example; must not exist)",
    )


def add_read_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    add_reader_arguments(parser)
    add_score_argument(parser)
    parser.add_argument(
        "-o",
        "--output",
        help="also write the item table here: .parquet (or .pq), .csv or .tsv, by the suffix",
    )
    parser.add_argument(
        "--audit-stderr",
        action="store_true",
        help="also recompute every standard error the harness published (lm-eval *_stderr, "
        "Inspect stderr, HELM stddev) from the items, and flag a zero or a mismatch",
    )
    add_battle_arguments(parser)


def add_claims_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths(parser, "items")
    add_claim_arguments(parser)
    parser.add_argument("--alpha", type=alpha_type, default=ALPHA, help=f"level (default: {ALPHA})")
    parser.add_argument("--family", choices=FAMILIES, default="claims", help="the family")
    parser.add_argument(
        "--adjust",
        choices=ADJUSTMENTS,
        default="holm",
        help="how the family is adjusted: holm, bonferroni or bh (Benjamini-Hochberg)",
    )
    parser.add_argument(
        "--power", type=level_type, default=POWER, help=f"for questions needed ({POWER})"
    )
    parser.add_argument("--seed", type=seed_type, default=SEED, help="bootstrap seed")
    parser.add_argument("--replicates", type=draws_type, default=DRAWS)
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    add_reader_arguments(parser)
    add_battle_arguments(parser)
    add_score_argument(parser)


def add_ranks_arguments(parser: argparse.ArgumentParser) -> None:
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
        type=seed_type,
        default=SEED,
        help=f"seed of the plausible-world draws (default: {SEED})",
    )
    parser.add_argument(
        "--draws",
        type=draws_type,
        default=DRAWS,
        help=f"plausible worlds to draw, at least {MIN_DRAWS} (default: {DRAWS})",
    )
    parser.add_argument(
        "--level",
        type=level_type,
        default=LEVEL,
        help=f"confidence level of intervals and rank ranges (default: {LEVEL})",
    )
    parser.add_argument(
        "--se-units",
        choices=SE_UNITS,
        default="auto",
        help="units of the se column: points (0.5 for half a point) or proportion (0.005); "
        "default auto: the scores', checked (an se of 0.012 beside 65.3 points is refused as "
        "a likely proportion)",
    )


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", type=positive_int, required=True, help="K models compared")
    parser.add_argument("--gap", type=float, help="target gap in accuracy points")
    parser.add_argument("--questions", type=positive_int, help="questions: find the gap instead")
    parser.add_argument(
        "--disagreement",
        type=disagreement_type,
        required=True,
        help="the share of shared questions on which two models' scores differ, (n10 + n01) / n; "
        "for your data, read it per pair from results/tables/pairwise.csv (columns n10, n01, n)",
    )
    parser.add_argument("--alpha", type=alpha_type, default=ALPHA, help=f"level (default: {ALPHA})")
    parser.add_argument("--power", type=level_type, default=POWER, help=f"power (default: {POWER})")
    parser.add_argument("--procedure", choices=PROCEDURES, default="holm")
    parser.add_argument("--tests", type=positive_int, help="family size (default: all pairs)")
    parser.add_argument("--test", choices=TESTS, default="wald", help="test statistic")
    parser.add_argument("--simulate", action="store_true", help="Holm over all pairs, simulated")
    parser.add_argument(
        "--judge-correlation",
        type=float,
        metavar="RHO",
        help="for a judge-scored eval: the correlation of the judge's and people's scores of a "
        "pair's per-question differences; the answer adds the human labels PPI++ needs",
    )
    parser.add_argument(
        "--judged-questions",
        type=positive_int,
        metavar="N",
        help="with --judge-correlation: the questions the judge scores (default: many more "
        "than the labels)",
    )
    parser.add_argument(
        "--small-gap",
        action="store_true",
        help="plan for a gap under 1 point (without it, --gap 0.02 is refused as a likely "
        "proportion meant as 2 points)",
    )
    parser.add_argument(
        "--format", choices=["markdown", "md", "json"], default="markdown", help=FORMAT_HELP
    )


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "items", metavar="FILE", nargs="+", help="item tables, prediction files or harness logs"
    )
    parser.add_argument("--alpha", type=alpha_type, default=ALPHA, help=f"level (default: {ALPHA})")
    parser.add_argument("--power", type=level_type, default=POWER, help=f"for resolution ({POWER})")
    parser.add_argument("--level", type=level_type, default=LEVEL, help="interval level")
    parser.add_argument(
        "--splits",
        type=splits_type,
        default=SPLITS,
        help=f"split-half splits, at most {MAX_SPLITS:,} ({SPLITS})",
    )
    parser.add_argument("--seed", type=seed_type, default=SEED, help="seed of the splits")
    parser.add_argument(
        "--top-k",
        type=positive_int,
        default=TOP_K,
        metavar="K",
        help=f"k of the confidence set for the top k (default: {TOP_K})",
    )
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="dollars per million input and output tokens per model (CSV: model,input,output): "
        "adds each model's cost per question and the cost-accuracy frontier, from the token "
        "usage the logs record",
    )
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    add_reader_arguments(parser)
    add_battle_arguments(parser)
    add_score_argument(parser)


COMPARE_EPILOG = """exit status:
  0  no regression shown: the candidate is non-inferior at the margin, or better
  1  regression: the candidate is worse than the baseline by more than the margin,
     significantly (the interval lies below -margin)
  3  inconclusive: the interval straddles -margin, or nothing bounds it (2 to 5
     categories: no category-clustered test can reject at 5%; a zero SE on 1 or 2 questions)
  2  bad input or usage (one line on stderr)
"""


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
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
        type=margin_type,
        default=0.0,
        metavar="POINTS",
        help="non-inferiority margin in accuracy points (default: 0)",
    )
    parser.add_argument(
        "--better-by",
        type=margin_type,
        default=0.0,
        metavar="POINTS",
        help="superiority margin: 'better' means better by more than this (default: 0)",
    )
    parser.add_argument(
        "--alpha", type=alpha_type, default=ALPHA, help=f"1 - interval level ({ALPHA})"
    )
    parser.add_argument(
        "--power",
        type=level_type,
        default=POWER,
        help="power at which an inconclusive result says how many questions would decide it "
        f"({POWER})",
    )
    parser.add_argument("--by-category", action="store_true", help="add a per-category table")
    parser.add_argument(
        "--categories",
        choices=("sampled", "fixed"),
        default="sampled",
        help="sampled (default): the verdict is about categories like these, read clustered "
        "(with 2 to 5 categories no clustered test can reject at 5%%); fixed: about these "
        "categories' questions, read paired",
    )
    parser.add_argument("--format", choices=TABLE_FORMATS, default="markdown", help=FORMAT_HELP)
    parser.add_argument("--flips", metavar="FILE", help="write the flipped questions (CSV)")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="decide by an anytime-valid confidence sequence over the questions in the order "
        "the candidate's source lists them (valid at every look while questions are appended)",
    )
    add_reader_arguments(parser)
    add_score_argument(parser)


def add_labels_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["sample"],
        help="sample: draw the questions to label (uniformly at random, the same for every model)",
    )
    add_paths(parser)
    parser.add_argument("--n", type=positive_int, required=True, help="questions to draw")
    parser.add_argument("--seed", type=seed_type, required=True, help="seed of the draw")
    parser.add_argument(
        "--stratify",
        action="store_true",
        help="allocate the questions to categories in proportion to their sizes",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the list here (CSV) instead of stdout"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite an existing -o FILE (by default it is refused: it may hold labels "
        "people filled in)",
    )
    add_reader_arguments(parser)


def add_battle_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of pairwise battles files (config ``battles:``)."""
    group = parser.add_argument_group(
        "battles options",
        "for files of pairwise battles (model_a, model_b, winner: LMArena, Arena-Hard-Auto, a "
        "table), recognised by content (the keys of `battles:` in the config)",
    )
    group.add_argument(
        "--ties",
        choices=TIE_MODELS,
        default=None,
        help="how ties enter the Bradley-Terry fit (default: half, half a win and half a loss)",
    )
    group.add_argument(
        "--cluster-by",
        choices=CLUSTERINGS,
        default=None,
        help="what the clustered intervals cluster by (default: auto, the voter on LMArena's "
        "files, whose question_id is unique per battle, the prompt otherwise)",
    )
    group.add_argument(
        "--anchor",
        metavar="MODEL",
        help="the model rated 1000 (default: the mean rating is 1000)",
    )
    group.add_argument(
        "--style",
        action="store_true",
        default=None,
        help="LMArena's style control: length and markdown counts fitted beside the ratings",
    )
    group.add_argument(
        "--baseline",
        metavar="MODEL",
        help="Arena-Hard-Auto v0.1 judgments: the baseline they do not name",
    )
