"""The adapter between a workflow rule and its job: read the inputs, call the job, write what
it returns.

Every rule's ``script:`` is ``workflow/scripts/job.py``, which hands this module the rule's name,
its named inputs, outputs and params, and its log, as plain values. :func:`run_job` finds the
job (:data:`evalbars.jobs.registry.JOBS`), reads the inputs it declares
(:func:`evalbars.jobs.inputs.reads`), calls it with the rule's ``params:`` as keywords, and
writes every item it returns to the rule's outputs named after it (:func:`write_outputs`), all
inside :func:`evalbars.errors.script_context` (a user's error is one line and exit status 1).

With ``jobs: per_stage`` one Snakemake job makes every output of a stage's rules:
:func:`run_stage` runs their jobs one after another in this process, each with its own log, so
that a stage pays one Python start-up and its imports instead of one per rule. Snakemake still
decides what runs; nothing here does.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from pathlib import Path

from evalbars.errors import script_context
from evalbars.jobs.registry import JOBS

__all__ = ["job_function", "run_job", "run_stage", "write_outputs", "output_path"]

log = logging.getLogger("evalbars")


def job_function(rule: str) -> Callable:
    """The job of ``rule``: the function named after it in its module (:data:`JOBS`),
    imported now, so that a job loads only its own module's code.

    Examples
    --------
    >>> job = job_function("download")
    >>> job.__module__, job.__name__
    ('evalbars.jobs.download', 'download')
    """
    return getattr(importlib.import_module(JOBS[rule]), rule)


def _present(value) -> bool:
    """Whether a rule's input holds a file in this run (an empty list of shards does not)."""
    return value is not None and value != []


def run_job(rule: str, input: Mapping, output: Mapping, params: Mapping, log_path) -> None:
    """Run the job of ``rule`` on its files, in :func:`evalbars.errors.script_context`.

    Parameters
    ----------
    rule : str
        The rule's name, a key of :data:`JOBS`.
    input, output : mapping
        The rule's named inputs and outputs: a file name, or a list of them, by name.
    params : mapping
        The rule's ``params:``, passed to the job as keywords.
    log_path : str or Path
        The job's log.

    Notes
    -----
    The arguments are held here while the job runs: a job that must let go of a large input
    before its end (the mixed models drop the score matrix before the contrasts) reads it
    itself, from the file name (:func:`evalbars.jobs.inputs.file_name`).
    """
    with script_context(log_path):
        job = job_function(rule)
        readers = getattr(job, "reads", {})
        arguments = {
            name: read(input[name])
            for name, read in readers.items()
            if name in input and _present(input[name])
        }
        write_outputs(job(**arguments, **params), output)


def output_path(output: Mapping, name: str, suffix: str = "") -> str | None:
    """The path of output ``<name>_<suffix>`` (``name`` when ``suffix`` is empty), or None
    when the rule does not declare it."""
    value = output.get(f"{name}_{suffix}" if suffix else name)
    return None if value is None else str(value)


def write_outputs(result: Mapping, output: Mapping) -> None:
    """Write every item of a job's ``result`` to the outputs named after it
    (:mod:`evalbars.jobs.outputs`): a table ``models`` to ``models_csv`` and, where the rule
    declares them, ``models_md``, ``models_tex``, ``models_parquet`` and ``models_shown``; a
    figure ``claims`` to ``claims_png`` and ``claims_svg``; a one-file item ``checked`` to
    ``checked``. An item whose first output (a table's CSV, a figure's PNG) the rule does not
    declare is an error in the rule, not in the data.

    Examples
    --------
    >>> import tempfile
    >>> from evalbars.jobs.outputs import Text
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_outputs({"checked": Text("{}")}, {"checked": folder / "claims.json"})
    >>> (folder / "claims.json").read_text()
    '{}'
    """
    for name, item in result.items():
        paths = {suffix: output_path(output, name, suffix) for suffix in item.suffixes}
        first = next(iter(paths.values()))
        if first is None:
            raise KeyError(f"the rule declares no output for {name!r} ({item.suffixes[0]})")
        if "" in paths:
            item.write(first)
        else:
            item.write(**paths)


@contextmanager
def _own_logging():
    """Give the root logger back as it was: each job logs to its own file
    (:func:`evalbars.errors.script_context` replaces the root's handlers)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)


def _files(named: Mapping) -> list:
    """Every file of a rule's named inputs or outputs (a value may be a list of them)."""
    return [f for value in named.values() for f in (value if isinstance(value, list) else [value])]


def run_stage(members, log_path) -> None:
    """Run the jobs of a stage's rules in this process, in order (``jobs: per_stage``).

    ``members`` are what :func:`evalbars.pipeline.smk.stage_member` records of each rule:
    ``rule``, ``input``, ``output``, ``params`` and ``log``. Each job writes its own log; the
    stage's log says how long each took. A job that fails ends the stage as its own job would
    (exit status 1, its one-line error in its log).
    """
    with script_context(log_path):
        for member in members:
            for path in [*_files(member["output"]), *member["log"]]:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            start = time.perf_counter()
            with _own_logging():
                run_job(
                    member["rule"],
                    member["input"],
                    member["output"],
                    member["params"],
                    member["log"][0],
                )
            log.info("%s took %.2f s", member["rule"], time.perf_counter() - start)
