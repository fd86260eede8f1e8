"""What the commands share once their arguments are parsed: the reader options as keyword
arguments of :func:`evalbars.api.read_items`, the claims given, and the refusal of an output
that would overwrite an input.

The counterpart of :mod:`evalbars.cli.arguments`, on the side that runs: it may import what the
commands need (:mod:`evalbars.readings.claims`, :mod:`evalbars.errors`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalbars.errors import InputError
from evalbars.readings import claims

__all__ = ["reader_options", "claim_texts", "refuse_output_over_inputs"]


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


def claim_texts(args: argparse.Namespace) -> list:
    """The claims given with ``--claim``, then those of ``--claims-file``."""
    return list(args.claim) + (
        claims.read_claims_file(args.claims_file) if args.claims_file else []
    )
