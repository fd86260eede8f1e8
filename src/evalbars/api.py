"""The Python front door: read results, compute the workflow's tables as DataFrames, check claims,
compare two models, write the report. For notebooks.

Every function calls the same package functions the workflow's rules call (the scripts under
``workflow/scripts/``), so a table computed here equals the CSV the workflow writes for the same
data and settings.

Examples
--------
>>> import evalbars.api as eb
>>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
...                       category_field="category")
>>> eb.accuracy_table(items)[["model", "n", "accuracy"]].round(3)
                  model   n  accuracy
0  evalbars/fake-strong  39     0.744
1     evalbars/fake-mid  39     0.462
2    evalbars/fake-weak  39     0.462
>>> eb.pairwise_table(items)[["model_a", "model_b", "n10", "n01", "p_holm"]].round(4)
                model_a             model_b  n10  n01  p_holm
0  evalbars/fake-strong   evalbars/fake-mid   16    5   0.028
1  evalbars/fake-strong  evalbars/fake-weak   17    6   0.028
2     evalbars/fake-mid  evalbars/fake-weak   11   11   1.000
>>> verdicts = eb.check_claims(items, ["evalbars/fake-strong > evalbars/fake-weak"])
>>> verdicts.loc[verdicts["reading"] == "paired_holm", "verdict"].item()
'supported'
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from evalbars.data.items import join_sources, read_summary, score_sources
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.scores import WideScores, wide_scores
from evalbars.errors import EvalbarsError, InputError
from evalbars.readings import claims as claims_module
from evalbars.readings import gate, ranks
from evalbars.readings.leaderboard import table as verdicts
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.accuracy import accuracy_table as _accuracy_table

__all__ = [
    "read_items",
    "read_sources",
    "scores",
    "accuracy_table",
    "pairwise_table",
    "omnibus_table",
    "mixed_contrasts",
    "rank_table",
    "check_claims",
    "compare_models",
    "leaderboard_table",
    "ReportRun",
    "report_config",
    "write_report",
    "SNAKEFILE",
]

#: The workflow that :func:`write_report` runs: the repository's Snakefile beside the package.
SNAKEFILE = Path(__file__).resolve().parents[2] / "Snakefile"

#: The targets of :func:`write_report`: every stage that reads the data (the simulation studies
#: do not, and are added by ``simulations=True``).
REPORT_TARGETS = (
    "data_all",
    "analysis_all",
    "ranks_all",
    "claims_all",
    "leaderboard_all",
    "report_landing",
)


def read_sources(paths, options: SourceOptions | None = None) -> list[pd.DataFrame]:
    """Raw rows of every path (files, or folders walked for every log), one frame per file or run.

    ``paths`` may be one path or a sequence of them; see :func:`evalbars.data.readers.read_source`.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [frame for path in paths for frame in read_source(path, options)]


def read_items(
    paths, *, missing_prediction: str = "wrong", seed: int = 12345, **options
) -> pd.DataFrame:
    """The canonical item table of prediction files or harness logs.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Files (long CSV/TSV/Parquet tables, MMLU-Pro JSON, lm-evaluation-harness samples,
        Inspect logs) or folders walked for every log they hold.
    missing_prediction : {"wrong", "random_guess", "exclude"}
        What a missing prediction counts as (the config key of the same name).
    seed : int
        Seed of the ``random_guess`` policy (``missing_prediction_seed``).
    **options
        Reader options, as the config's predictions entries and the command line's options:
        ``format, model, id_field, category_field, metric, filter, runs, scorer,
        allow_partial`` (:class:`evalbars.data.readers.SourceOptions`).

    Returns
    -------
    DataFrame
        One row per (model, question, epoch): ``model, question_id, epoch, category, src,
        answer, pred, correct, source_file, n_options`` (:data:`evalbars.data.items.ITEM_COLUMNS`).
    """
    raw = read_sources(paths, SourceOptions(**options))
    return score_sources(join_sources(raw), missing_prediction, seed)


def read_preview(paths, *, missing_prediction: str = "wrong", **options) -> pd.DataFrame:
    """Per model, what was read (the table ``evalbars read`` prints)."""
    raw = read_sources(paths, SourceOptions(**options))
    return read_summary(raw, score_sources(join_sources(raw), missing_prediction))


def scores(items) -> WideScores:
    """The question-by-model score matrix of an item table (a WideScores passes through)."""
    return items if isinstance(items, WideScores) else wide_scores(items)


def accuracy_table(items, level: float = 0.95) -> pd.DataFrame:
    """``models.csv``: per-model accuracy, naive and clustered SEs, Wilson interval."""
    return _accuracy_table(scores(items), level)


def pairwise_table(items, alpha: float = 0.05) -> pd.DataFrame:
    """``pairwise.csv``: every pair's unpaired and paired z, exact McNemar, Bonferroni, Holm."""
    return pairwise.pairwise_table(scores(items), alpha)


def omnibus_table(items) -> pd.DataFrame:
    """``omnibus.csv``: RM-ANOVA (Greenhouse-Geisser), one-way ANOVA, Friedman, Cochran's Q."""
    return omnibus.omnibus_table(scores(items))


def mixed_contrasts(items, alpha: float = 0.05, method: str = "auto") -> pd.DataFrame:
    """``mixed_contrasts.csv``: the nested linear mixed models' pairwise contrasts."""
    wide = scores(items)
    fits = [mixed.fit_lmm(wide, spec, method) for spec in mixed.model_specs(wide)]
    return pd.concat([mixed.lmm_contrasts(fit, alpha) for fit in fits], ignore_index=True)


def rank_table(
    items,
    level: float = 0.95,
    *,
    draws: int = 10_000,
    replicates: int = 10_000,
    seed: int = 2024,
    stratify: bool = True,
) -> pd.DataFrame:
    """``ranks.csv``: score intervals, gaps, tiers, P(first) and rank ranges, both readings."""
    table, _ = ranks.ranks_readings(
        scores(items), level=level, draws=draws, replicates=replicates, seed=seed, stratify=stratify
    )
    return table


def check_claims(
    items,
    claims: Sequence[str],
    alpha: float = 0.05,
    *,
    family: str = "claims",
    power: float = 0.8,
    replicates: int = 10_000,
    seed: int = 2024,
) -> pd.DataFrame:
    """``claims.csv``: each claim's verdict under every reading (see
    :func:`evalbars.readings.claims.evaluate_claims` for the claim forms and readings)."""
    return claims_module.evaluate_claims(
        scores(items),
        list(claims),
        alpha=alpha,
        family=family,
        power=power,
        replicates=replicates,
        seed=seed,
    )


def compare_models(
    items,
    baseline: str,
    candidate: str,
    *,
    margin: float = 0.0,
    alpha: float = 0.05,
    by_category: bool = False,
    sequential: bool = False,
):
    """The release gate of ``evalbars compare``: the candidate against the baseline on their
    shared questions (:func:`evalbars.readings.gate.compare_models`; ``margin`` as a proportion,
    0.01 = 1 point). Its ``summary`` holds the verdict and the exit code, ``flips`` the
    questions that changed."""
    wide = scores(items)
    for name in (baseline, candidate):
        if name not in wide.models:
            raise InputError("compare", f"unknown model {name!r}; the data hold {wide.models}")
    return gate.compare_models(
        wide.columns([baseline, candidate]),
        baseline,
        candidate,
        margin=margin,
        alpha=alpha,
        by_category=by_category,
        sequential=sequential,
    )


def leaderboard_table(
    items, alpha: float = 0.05, *, power: float = 0.8, splits: int = 50, seed: int = 2024
) -> pd.DataFrame:
    """``leaderboard.csv``: per system its letters, split-half stability and the resolution of
    the adjacent pair below it (:func:`evalbars.readings.leaderboard.table.leaderboard_table`)."""
    return verdicts.leaderboard_table(
        scores(items), alpha=alpha, power=power, splits=splits, seed=seed
    )


# --- The report: the workflow itself, on the user's files ------------------------------------


@dataclass(frozen=True)
class ReportRun:
    """What :func:`write_report` made.

    Attributes
    ----------
    directory : Path
        The run directory (its ``results/`` holds every table and figure).
    report : Path
        The self-contained HTML report.
    config : Path
        The configuration the run used (rerun or edit it with plain ``snakemake``).
    claims : DataFrame
        ``claims.csv`` (empty without claims).
    """

    directory: Path
    report: Path
    config: Path
    claims: pd.DataFrame


def report_config(
    paths, *, claims: Sequence[str] = (), missing_prediction: str = "wrong", **options
) -> dict:
    """The workflow configuration of :func:`write_report`: the given files as ``predictions``,
    no MMLU-Pro archives, settings fitted to the data (every question; no paper replication)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    # Only what differs from the readers' defaults, so the written config reads as it was meant.
    defaults = SourceOptions()
    given = {
        key: value
        for key, value in options.items()
        if value is not None and value != getattr(defaults, key, None)
    }
    entries = [dict(path=str(Path(path).resolve()), **given) for path in paths]
    return {
        "models": [],
        "predictions": entries,
        "missing_prediction": missing_prediction,
        "question_set": "all",
        "subsample": {"n": "all"},
        "claims": list(claims),
    }


def _failure_line(directory: Path, output: str) -> str:
    """The one-line reason of a failed run: the error a job logged, else Snakemake's own."""
    for log in sorted((directory / "results" / "logs").rglob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if " ERROR evalbars: " in line:
                reason = line.split(" ERROR evalbars: ", 1)[1]
                if reason.startswith("unexpected error"):
                    reason += f" (the job's log: {log})"
                return reason
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("evalbars:", "ConfigError", "Error"))]
    return (errors or lines or ["the workflow failed"])[-1]


def write_report(
    paths,
    output="evalbars-report",
    *,
    claims: Sequence[str] = (),
    missing_prediction: str = "wrong",
    simulations: bool = False,
    cores: int | str = "all",
    progress: Callable[[str], None] | None = None,
    hint_style: str = "config",
    **options,
) -> ReportRun:
    """Run the evalbars workflow on prediction files and write its HTML report.

    The same Snakemake workflow as ``snakemake`` in a clone (same rules, same outputs), in the
    run directory ``output``, with the configuration of :func:`report_config`, which is written
    to ``output/config.yaml`` first.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Prediction files or folders of harness logs.
    output : path-like
        The run directory (created if needed).
    claims : sequence of str
        Claims to test (``"A > B"``, ``"best: A"``, ...).
    simulations : bool
        Also run the simulation studies (they do not read the data).
    progress : callable, optional
        Called with each progress line of the run, and each warning a job prints (e.g.
        ``print``).
    hint_style : {"config", "cli"}
        How messages word a remedy: as a config key, or as a command-line flag.
    **options
        Reader options, as for :func:`read_items`.

    Raises
    ------
    EvalbarsError
        With the one-line reason when the run fails on bad input.
    """
    listed = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    for path in listed:
        if not Path(path).exists():  # before Snakemake, which would only say an input is missing
            raise InputError(path, "file does not exist")
    directory = Path(output).resolve()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            directory, f"cannot make the run directory: {exc.strerror or exc}"
        ) from exc
    config_path = directory / "config.yaml"
    config = report_config(listed, claims=claims, missing_prediction=missing_prediction, **options)
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    report = directory / "report.html"
    targets = [*REPORT_TARGETS, *(["simulate_all"] if simulations else [])]
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(SNAKEFILE),
        "--directory",
        str(directory),
        "--configfile",
        str(config_path),
        "--cores",
        str(cores),
        *targets,
        "--report",
        str(report),
        "--report-after-run",
    ]
    if not SNAKEFILE.is_file():
        raise EvalbarsError(
            f"{SNAKEFILE}: the workflow is not beside the package (run from a clone)"
        )
    lines = []
    env = dict(os.environ, EVALBARS_HINT_STYLE=hint_style)
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=directory,
        env=env,
    ) as run:
        for line in run.stdout:
            lines.append(line)
            # Progress, and every warning a job prints (what was dropped or re-scored).
            shown = ("steps (" in line and "done" in line) or line.startswith("evalbars: ")
            if progress is not None and shown:
                progress(line.strip().removeprefix("evalbars: "))
    if run.returncode != 0:
        raise EvalbarsError(_failure_line(directory, "".join(lines)))
    table_path = directory / "results" / "tables" / "claims.csv"
    table = claims_module.read_claims_table(table_path) if table_path.exists() else pd.DataFrame()
    return ReportRun(directory=directory, report=report, config=config_path, claims=table)
