"""How a job's input files become its arguments.

A job function declares, with :func:`reads`, which of its rule's named inputs it takes and how
each is read: ``@reads(scores=read_wide_scores, checked=read_json)`` on ``claims_table(scores,
checked, *, alpha, ...)``. The adapter (:func:`evalbars.jobs.run.run_job`) reads those inputs,
and only those: a rule's other inputs (its code, the files of a predictions folder) are there
for Snakemake to order and rerun the jobs. An input the rule does not list in a run (an optional
file, an empty list of shards) is left out, so the job's default applies. The declaration sits
on the function, so that an edit of how a job reads its inputs is an edit of the job's module,
and reruns its jobs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

__all__ = [
    "reads",
    "file_name",
    "read_json",
    "read_bytes",
    "parquet",
    "parquet_files",
    "read_table",
]

#: A reader: a rule's input (one file name, or a list of them) to the job's argument.
Reader = Callable[[object], object]


def reads(**readers: Reader):
    """Declare which inputs a job takes, each with its reader (``function.reads``).

    Examples
    --------
    >>> @reads(table=parquet())
    ... def draw(table, *, level): ...
    >>> sorted(draw.reads)
    ['table']
    """

    def declare(function):
        function.reads = dict(readers)
        return function

    return declare


def file_name(value):
    """The file name (or list of them) as the rule gives it: for a job that opens the file
    itself, or reads it only if it needs it."""
    return value


def read_json(file) -> object:
    """A JSON document."""
    return json.loads(Path(file).read_text())


def read_bytes(file) -> bytes:
    """A file's bytes (a figure to embed)."""
    return Path(file).read_bytes()


def parquet(*, columns=None, filters=None, dictionary=()) -> Reader:
    """A reader of one Parquet table: every column, or ``columns`` (and the rows ``filters``
    keeps, as :func:`pandas.read_parquet`), so that a job that needs a few columns of a table
    of every pair never holds the rest. The text columns named in ``dictionary`` are read as
    categoricals (Arrow's ``read_dictionary``): a label that repeats on every row (a fit's
    name) then costs a small integer a row, not a string (0.5 GB a column at twenty million
    rows)."""
    options = {"columns": None if columns is None else list(columns)}
    if filters is not None:
        options["filters"] = filters
    if dictionary:
        options["read_dictionary"] = list(dictionary)

    def read(file) -> pd.DataFrame:
        return read_table(file, **options)

    return read


#: How a job's Parquet table becomes a DataFrame: each column its own block, and Arrow's copy
#: let go column by column. pandas would otherwise copy the float columns into one 2-D block
#: (at ten million pairs, three times the read itself: 16 s against 4.5 s for the logistic
#: contrasts at 4,500 models); the values and dtypes are the same.
TO_PANDAS = {"split_blocks": True, "self_destruct": True}


def read_table(file, **options) -> pd.DataFrame:
    """A Parquet table as :func:`pandas.read_parquet` reads it (``options`` are its keywords),
    without consolidating its columns (:data:`TO_PANDAS`)."""
    return pd.read_parquet(file, to_pandas_kwargs=TO_PANDAS, **options)


def parquet_files(files) -> list[pd.DataFrame]:
    """Each of a list of Parquet tables, in the rule's order."""
    return [read_table(file) for file in files]
