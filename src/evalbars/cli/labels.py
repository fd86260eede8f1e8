"""``evalbars labels sample``: the questions to give people to label, drawn at random (its
arguments: :mod:`evalbars.cli.arguments`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalbars import api
from evalbars.cli.inputs import reader_options, refuse_output_over_inputs
from evalbars.data.labels import questions_to_label
from evalbars.errors import InputError
from evalbars.render.tables import neutralised_table

__all__ = ["run_labels"]


def run_labels(args: argparse.Namespace) -> int:
    if args.output:
        refuse_output_over_inputs(args.output, [*args.paths, args.instances], "-o")
        if not str(args.output).lower().endswith(".csv"):
            raise InputError(args.output, "the list is written as CSV: name it *.csv")
        if Path(args.output).exists() and not args.force:
            raise InputError(
                args.output,
                "already exists (it may hold labels people filled in): not overwritten; "
                "name another file, or pass --force to replace it",
            )
    items = api.read_items(
        args.paths, missing_prediction=args.missing_prediction, **reader_options(args)
    )
    drawn = questions_to_label(items, args.n, args.seed, stratify=args.stratify)
    table = neutralised_table(drawn)
    if args.output:
        table.to_csv(args.output, index=False, lineterminator="\n")
        print(
            f"wrote {len(drawn):,} questions to {args.output}: fill in the human column "
            "(0/1 or a score in [0, 1]) and pass the file as --labels",
            file=sys.stderr,
        )
    else:
        table.to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0
