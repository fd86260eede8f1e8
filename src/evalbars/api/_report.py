"""The API's report: the evalbars workflow itself, run on the user's files
(:mod:`evalbars.api` re-exports it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalbars.api._battles import battles_report_config
from evalbars.api._best import prices_config
from evalbars.api._read import _listed, quiet_warnings, read_items
from evalbars.data.readers import SourceOptions, battles_given
from evalbars.errors import InputError
from evalbars.jobs import battles as battle_jobs
from evalbars.jobs import claims as claim_jobs
from evalbars.jobs import leaderboard
from evalbars.jobs.data import chosen_scores
from evalbars.pipeline import runner, smk
from evalbars.pipeline import storage as run_storage
from evalbars.pipeline.location import snakefile

__all__ = ["REPORT_STAGES", "ReportRun", "report_config", "write_report"]


#: The stages of :func:`write_report` (config ``run.stages``): every stage that reads the data
#: (the replication check applies to the paper's data only; the simulation studies read none,
#: and are added by ``simulations=True``; the repeats stage makes its tables only where the data
#: have repeated samples or runs).
REPORT_STAGES = ("data", "analysis", "ranks", "claims", "repeats", "leaderboard")


@dataclass(frozen=True)
class ReportRun:
    """What :func:`write_report` made.

    Attributes
    ----------
    directory : Path
        The run directory (its ``results/`` holds every table and figure).
    report : Path
        The self-contained HTML report (``report.html`` in the run directory).
    config : Path
        The configuration the run used, which records what the run makes (``run:``): rerun or
        edit it with ``evalbars run --directory DIRECTORY --configfile CONFIG``.
    claims : DataFrame
        ``claims.csv`` (empty without claims): :func:`check_claims`'s table.
    results : Path or None
        Where this machine holds the run's ``data/`` and ``results/``: the run directory, or,
        for a run in S3 storage, its copies of the bucket's files
        (:func:`evalbars.pipeline.storage.results_root`); None means the run directory.

    See Also
    --------
    write_report : What makes it.
    """

    directory: Path
    report: Path
    config: Path
    claims: pd.DataFrame
    results: Path | None = None


def report_config(
    paths,
    *,
    claims: Sequence[str] = (),
    missing_prediction: str = "wrong",
    simulations: bool = False,
    labels=None,
    storage: str | None = None,
    storage_endpoint_url: str | None = None,
    score: str = "mean",
    prices=None,
    **options,
) -> dict:
    """The workflow configuration :func:`write_report` runs, as a dict (its ``config.yaml``).

    The given files as ``predictions`` (only the reader options that differ from the
    readers' defaults), no MMLU-Pro archives (``models: []``), settings fitted to the data
    (every question, ``subsample: all``; no paper replication), one job per stage
    (``jobs: per_stage``), the labels file, if any, as ``labels``, and what the run makes
    (``run``): the stages :data:`REPORT_STAGES` (and the simulation studies with
    ``simulations``), the report at ``report.html`` in the run directory, and the item score
    ``score`` where it is not the mean. Every other key takes the schema's default
    (``workflow/schemas/config.schema.yaml``).

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Prediction files or folders of harness logs (written as absolute paths).
    claims : sequence of str, optional
        Claims to test, as for :func:`check_claims`.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as.
    simulations : bool, default False
        Also run the simulation studies.
    labels : path-like, optional
        Human labels, as for :func:`read_items`.
    storage, storage_endpoint_url : str, optional
        The S3 bucket of the run's data and results, and its server (:func:`write_report`).
    score : str, default "mean"
        The item score every reading reads (config ``score``): ``mean``, ``pass@K``,
        ``pass^K`` or ``maj@K`` (:func:`~evalbars.api.score_matrix`).
    prices : mapping or path-like, optional
        Dollars per million tokens per model, as for :func:`evalbars.api.cost_table`,
        written into the configuration as ``prices`` (a file is read into it).
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    dict
        The configuration; nothing is read or checked (:func:`write_report` does that).

    See Also
    --------
    write_report : Runs it.
    evalbars.pipeline.runner.run_workflow : The run.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> config = eb.report_config("tests/data/harness/lm_eval", runs="newest", id_field="id")
    >>> config["jobs"], config["run"]["stages"], config["run"]["report"]
    ('per_stage', ['data', 'analysis', 'ranks', 'claims', 'repeats', 'leaderboard'], 'report.html')
    >>> sorted(config["predictions"][0])
    ['id_field', 'path', 'runs']
    """
    # Only what differs from the readers' defaults, so the written config reads as it was meant.
    defaults = SourceOptions()
    given = {
        key: value
        for key, value in options.items()
        if value is not None and value != getattr(defaults, key, None)
    }
    entries = [dict(path=str(Path(path).resolve()), **given) for path in _listed(paths)]
    return (
        {
            "models": [],
            "predictions": entries,
            "missing_prediction": missing_prediction,
            "question_set": "all",
            "subsample": {"n": "all"},
            "claims": list(claims),
            # one job per stage: on the data of one report, start-ups are most of the work
            "jobs": "per_stage",
            "run": {
                "stages": [*REPORT_STAGES, *(["simulations"] if simulations else [])],
                "report": "report.html",
            }
            | (
                {"storage": storage, "storage_endpoint_url": storage_endpoint_url}
                if storage
                else {}
            ),
        }
        | ({"labels": str(Path(labels).resolve())} if labels else {})
        | ({"score": score} if score != "mean" else {})
        | prices_config(prices)
    )


def write_report(
    paths,
    output="evalbars-report",
    *,
    claims: Sequence[str] = (),
    missing_prediction: str = "wrong",
    simulations: bool = False,
    cores: int | str = "all",
    unlock: bool = False,
    progress: Callable[[str], None] | None = None,
    hint_style: str = "config",
    labels=None,
    storage: str | None = None,
    storage_endpoint_url: str | None = None,
    score: str = "mean",
    prices=None,
    **options,
) -> ReportRun:
    """Run the evalbars workflow on prediction files and write its HTML report.

    The same Snakemake workflow as ``snakemake`` in a clone (same rules, same outputs; the
    copy the wheel ships when evalbars is installed), in the run directory ``output``, with
    the configuration of :func:`report_config`.

    Before anything is written the data are read and checked in this process, as the
    workflow's item-table job checks them, and the claims against the models and categories
    they hold, so that bad input stops the run with its one-line reason and leaves nothing
    behind. The run is then :func:`evalbars.pipeline.runner.run_workflow`, the path of
    ``evalbars run`` too: the run directory is locked (a second run into it is refused, naming
    the first), the configuration is written to ``output/config.yaml``, recording what the run
    makes (its stages and its report, ``run:``), so that ``evalbars run --directory OUTPUT
    --configfile OUTPUT/config.yaml`` reruns exactly this run. A run refused before the
    workflow starts removes a run directory it made itself; once the workflow has started the
    directory stays, failed or interrupted, with its logs and the configuration that resumes it.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Prediction files or folders of harness logs.
    output : path-like, default "evalbars-report"
        The run directory (created if needed).
    claims : sequence of str, optional
        Claims to test (``"A > B"``, ``"best: A"``, ...), as for :func:`check_claims`.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as.
    simulations : bool, default False
        Also run the simulation studies (they do not read the data).
    cores : int or "all", default "all"
        Cores Snakemake may use.
    unlock : bool, default False
        First remove a Snakemake lock left in the run directory by a run that was killed.
    progress : callable, optional
        Called with each progress line of the run, and each warning a job prints (e.g.
        ``print``).
    hint_style : {"config", "cli"}, default "config"
        How messages word a remedy: as a config key, or as a command-line flag.
    labels : path-like, optional
        Human labels of judge-scored predictions, as for :func:`read_items`.
    storage : str, optional
        ``s3://BUCKET/PREFIX``: keep the run's data and results in this S3 bucket (Snakemake's
        S3 storage plugin, the ``cloud`` extra); the report and a copy of each file this
        machine made stay in ``output`` (:mod:`evalbars.pipeline.storage`).
    storage_endpoint_url : str, optional
        The URL of an S3 server other than AWS's, for ``storage``.
    score : str, default "mean"
        The item score every reading reads, as for :func:`report_config`; one the data's
        samples cannot give (``pass@5`` of three samples) is refused before anything is written.
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model, as for
        :func:`evalbars.api.cost_table`: the run then adds ``cost.csv``, ``frontier.csv`` and
        the frontier figure.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    ReportRun
        The run directory, the report, the configuration and the claims' verdicts.

    Raises
    ------
    evalbars.errors.EvalbarsError
        With the one-line reason when the run fails on bad input: a path that does not
        exist, an output that is a file, the checks of :func:`read_items` and
        :func:`check_claims`, a run directory locked by another run.
    KeyboardInterrupt
        :class:`evalbars.pipeline.runner.RunInterrupted` on Ctrl-C, whose ``resume`` is the
        command that finishes the run.

    See Also
    --------
    report_config : The configuration it runs.
    evalbars.pipeline.runner.run_workflow : The run, shared with ``evalbars run``.

    Examples
    --------
    The run starts Snakemake and takes about a minute, so this example is not run by the
    test suite (the workflow tier runs ``evalbars report``, which calls this function):

    >>> import evalbars.api as eb  # doctest: +SKIP
    >>> run = eb.write_report("tests/data/harness/lm_eval", "lm_eval-report",  # doctest: +SKIP
    ...                       runs="newest", id_field="id", category_field="category",
    ...                       claims=["evalbars/fake-strong > evalbars/fake-weak"])
    >>> run.report  # doctest: +SKIP
    PosixPath('.../lm_eval-report/report.html')
    >>> run.claims[["reading", "verdict"]].head(2)  # doctest: +SKIP
      reading    verdict
    0   naive  supported
    1  paired  supported
    """
    listed = _listed(paths)
    if storage is not None:  # in one line, before anything is read or written
        names = ("storage", "storage_endpoint_url")
        storage = run_storage.check_storage(storage, storage_endpoint_url, names=names)
    for path in [*listed, *([labels] if labels else [])]:
        if not Path(path).exists():  # before Snakemake, which would only say an input is missing
            raise InputError(path, "file does not exist")
    if battles_given(listed):  # pairwise battles: the battles stage (_write_battles_report)
        return _write_battles_report(
            listed, output, claims=claims, simulations=simulations, cores=cores, unlock=unlock,
            progress=progress, hint_style=hint_style, labels=labels, **options,
        )  # fmt: skip
    snakefile()  # a broken install says so before anything is written
    directory = Path(output).resolve()
    if directory.exists() and not directory.is_dir():
        raise InputError(directory, "is a file, not a run directory; give another --output")
    config = report_config(
        listed,
        claims=claims,
        missing_prediction=missing_prediction,
        simulations=simulations,
        labels=labels,
        storage=storage,
        storage_endpoint_url=storage_endpoint_url,
        score=score,
        prices=prices,
        **options,
    )
    smk.source_files(config["predictions"])  # a name Snakemake cannot take, in one line
    # The workflow's own checks, here first: one line, and nothing written. The item-table job
    # reads the data again (on the data of one report that costs little) and prints what it
    # drops or re-scores: this read keeps quiet, so that the console says each thing once.
    with quiet_warnings():
        table = read_items(listed, missing_prediction=missing_prediction, labels=labels, **options)
    claim_jobs.checked_claims(
        claim_jobs.model_accuracy(table),
        table["category"].unique(),
        claims=list(claims),
        notes=[],
        costed=smk.costed_run(config, config["predictions"]),
    )
    if score != "mean":  # a score the samples cannot give stops the run here, in one line
        with quiet_warnings():
            chosen_scores(table, score, "all")
    if config.get("prices"):  # the costs job's checks too: a model's usage without its price
        with quiet_warnings():
            leaderboard.costs(table, sources=config["predictions"], prices=config["prices"])
    results = run_storage.results_root(directory, storage)
    run = dict(cores=cores, unlock=unlock, progress=progress, hint_style=hint_style)
    return _run(directory, config, results, "claims", **run)


def _write_battles_report(
    paths,
    output,
    *,
    claims,
    simulations,
    cores,
    unlock,
    progress,
    hint_style,
    labels,
    **options,
) -> ReportRun:
    """:func:`write_report` on battle files: the battles are read, the graph and the claims
    checked in this process first (one line, nothing written), then the workflow's battles
    stage runs (:func:`battles_report_config`)."""
    if labels:
        raise InputError(labels, "human labels are for item-level scores, not for battles")
    settings = {k: v for k, v in options.items() if v is not None}
    config = battles_report_config(paths, claims=claims, simulations=simulations, **settings)
    smk.source_files(smk.prediction_sources(config))  # a name Snakemake cannot take: one line
    snakefile()
    directory = Path(output).resolve()
    if directory.exists() and not directory.is_dir():
        raise InputError(directory, "is a file, not a run directory; give another --output")
    checks = {k: settings.get(k) for k in ("anchor", *battle_jobs.READER_SETTINGS)}
    with quiet_warnings():  # the battles job says what it drops
        battle_jobs.checked_battles(paths, claims, **checks)
    run = dict(cores=cores, unlock=unlock, progress=progress, hint_style=hint_style)
    return _run(directory, config, directory, "battles_claims", **run)


def _run(directory: Path, config: dict, results: Path, claims: str, **run) -> ReportRun:
    """Run the workflow of ``config`` in ``directory``
    (:func:`evalbars.pipeline.runner.run_workflow`), and collect its report and its claims
    table ``results/tables/<claims>.parquet`` (empty where no claim was made) under
    ``results``, where the run's results are."""
    report = runner.run_workflow(
        directory,
        config=config,
        unlock_remedy="add --unlock (write_report(..., unlock=True))",
        **run,
    )
    assert report is not None  # None only without a report, with targets or in a dry run
    claims_path = results / "results" / "tables" / f"{claims}.parquet"
    table = pd.read_parquet(claims_path) if claims_path.exists() else pd.DataFrame()
    return ReportRun(
        directory=directory,
        report=report,
        config=directory / "config.yaml",
        claims=table,
        results=results,
    )
