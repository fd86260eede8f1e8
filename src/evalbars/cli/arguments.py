"""The command line's arguments: checked numbers, the reader options every command that reads
prediction files shares, and the claims."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalbars.data.items import MISSING_POLICIES
from evalbars.data.readers import FORMATS
from evalbars.data.readers.common import RUN_POLICIES
from evalbars.errors import InputError
from evalbars.readings import claims
from evalbars.readings.leaderboard.stability import MAX_SPLITS, SPLIT_BYTES
from evalbars.readings.ranks import DEFAULT_DRAWS
from evalbars.readings.ranks.defaults import MAX_DRAWS, MIN_DRAWS
from evalbars.stats.repeats.pass_at_k import parse_item_score
from evalbars.stats.repeats.score_matrix import score_label


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: Output formats of every command that prints a table; md is short for markdown.
TABLE_FORMATS = ["markdown", "md", "csv", "json"]
FORMAT_HELP = "output format (default: markdown; md is the same)"

# --- evalbars ranks ------------------------------------------------------------------------------


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
            f"{value / DEFAULT_DRAWS:,.0f} times as long as the default {DEFAULT_DRAWS:,}, and "
            f"{MAX_DRAWS:,} already give a Monte Carlo error under {0.5 / MAX_DRAWS**0.5:.4f})"
        )
    return value


def splits_type(text: str) -> int:
    value = positive_int(text)
    if value > MAX_SPLITS:
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


#: The item scores ``--score`` takes (the config key ``score``).
SCORE_HELP = (
    "the item score every reading reads, from each question's samples pooled over runs: mean "
    "(default), pass@K (one of K samples right), pass^K (all K right) or maj@K (a majority of K, "
    "K odd); questions with fewer than K samples are left out"
)


def score_type(text: str) -> str:
    """An item score as ``--score`` takes it: ``mean``, ``pass@K``, ``pass^K``, ``maj@K``."""
    try:
        return score_label(*parse_item_score(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_score_argument(parser: argparse.ArgumentParser) -> None:
    """``--score``: the item score of every reading (the config key ``score``)."""
    parser.add_argument("--score", type=score_type, default="mean", help=SCORE_HELP)


def reader_options(args: argparse.Namespace) -> dict:
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


PATHS_HELP = (
    "prediction files or folders: lm-evaluation-harness output folders (samples_*.jsonl with "
    "results_*.json), Inspect logs (.eval, .json), long CSV/TSV/Parquet tables (model, "
    "question_id, correct), MMLU-Pro JSON; folders are walked for every log"
)


def add_paths(parser: argparse.ArgumentParser, name: str = "paths") -> None:
    parser.add_argument(name, nargs="+", metavar="PATH", help=PATHS_HELP)


def refuse_output_over_inputs(output, inputs, option: str, *, folder: bool = False) -> None:
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


# --- Claims, as every command that takes them reads them ----------------------------------------

CLAIM_SYNTAX = """claim syntax (margins d in accuracy points; spaces around the operators; names as in
the data, and a close spelling is suggested when a name is unknown):
  "A > B"            A beats B (one-sided paired test of the gap)
  "A > B + d"        A beats B by more than d points (superiority by a margin)
  "A >= B - d"       A is at most d points worse than B (non-inferiority)
  "|A - B| < d"      A and B within d points (equivalence, two one-sided tests)
  "best: A"          A beats every other analysed model
  "top k: A"         A is among the best k
  "... in CATEGORY"  any of the above on that category's questions"""


def add_claim_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--claim", action="append", default=[], help='a claim, e.g. "A > B in math" (repeatable)'
    )
    parser.add_argument("--claims-file", help="a text file of claims, one a line ('#' comments)")


def claim_texts(args: argparse.Namespace) -> list:
    return list(args.claim) + (
        claims.read_claims_file(args.claims_file) if args.claims_file else []
    )
