"""The benchmark command: time each analysis stage on the default subsample and on all questions.

A development tool, not part of the evalbars package. Run from the repository root::

    uv run python -m tests.benchmark                # every analysis stage, ~1 minute
    uv run python -m tests.benchmark --simulations  # the workflow's simulation stage

It reads the configured models' MMLU-Pro archives from where the tests read them
(:func:`tests.conftest.mirror_location`: ``$EVALBARS_MIRROR``, the config's ``mirror``, the
development mirror beside the repository, else upstream), fetching and checksum-verifying each
into a temporary folder, builds the
item table under the configured ``missing_prediction`` policy, draws the configured subsample,
and times every stage on the subsample and on every question all models answered, then the
mixed models on all questions with unparsed predictions dropped (``missing_prediction:
exclude``; incomplete data, so the general path), and last the mixed models on every observed
row of all 29 pinned archives (unbalanced: not every model answered every question; the general
path), beside lme4's time on the same data. Each stage is timed as the best of
``--repeat`` runs (loading once). It prints one table with columns
``data, stage, questions, seconds, note``; ``--output`` also writes it as CSV.

``--gate-clusters`` checks the release gate's type-I error instead: a seeded simulation of
clustered nulls (:func:`evalbars.studies.cluster_type1.gate_clusters_table`) at 3, 6, 14 and 57
categories with design effects 1, 2 and 4.5, and at 3, 4, 6, 8, 14 and 30 categories with an
intra-category correlation of 0.1 and 0.3, equal sizes and MMLU-Pro's size spread (3.5), each
setting 4,000 nulls; it prints every method's rejection rate and whether the gate's (the
category sign-flip test below 30 CR2 degrees of freedom, CR2 with Satterthwaite t from there)
stays within 5 +- 1.5% wherever an exact test can (7 or more categories), and at or below the
sign-flip test's attainable size where it cannot (at most 3.1% at 6 categories, 0 at 3 to 5:
no test of so few categories can reject at 5%). ``--ppi-coverage`` runs the
PPI++ coverage study at 10, 15, 30 and 200 labels
(:func:`evalbars.studies.ppi_coverage.coverage_by_labels`, 4,000 replicates each) and checks,
where the reading decides, coverage of at least 94% under random labels (within 94-96%, or
above it: conservative), and under-coverage when labels are chosen by outcome.
``--winner-coverage`` runs the winner's-curse study
(:func:`evalbars.studies.winners_coverage.winner_coverage_table`: boards of 5, 20 and 100 models,
tied, near-tied and spread, independent and paired-like, 4,000 boards each) and checks that the
hybrid interval of the winner covers at least 94%, that the naive one falls below 80% on tied
boards of 20 and 100 models, and that the set for the best holds the true best at least 95%;
then the same readings with the covariance estimated from item-level 0/1 scores, paired or
clustered, at 14 and 57 categories, with and without a model x category effect
(:func:`evalbars.studies.winners_coverage.estimated_covariance_coverage_table`, 1,000 boards
each).
``--passk-band`` runs the pass@k band's coverage study
(:func:`evalbars.studies.passk_band.passk_band_table`: 30, 100 and 500 questions, 5 and 16
samples, without and with categories, 2,000 replicates each) and checks the band's simultaneous
coverage over k stays at or above 93% at nominal 95%.
``--battles-coverage`` runs the Bradley-Terry coverage study
(:func:`evalbars.studies.battles_coverage.simulate_battles_coverage`: prompts battled 1, 2 or 8
times, with and without a prompt effect, 2,000 replicates a setting, the cluster bootstrap on
four settings) and checks that the prompt-clustered intervals keep at least 94% wherever the
per-battle ones fall below.

``--simulations`` times the simulation stage as users run it instead
(:func:`time_simulation_stage`): ``snakemake simulate_all`` on ``--cores``
cores in a scratch copy of the configuration, from the DAG build to the last
figure, and each setting's job from its Snakemake benchmark file.

For comparison: R's lme4 1.1.31 ``lmer`` on this project's 2-core machine takes 0.12 s / 0.28 s
(category / nested model) on the subsample and 0.86 s / 3.8 s on all 12,032 questions
(``tests/reference/r_output/lmer_timing.txt``); statsmodels' MixedLM takes about 23 s for the
nested model on the subsample and 17 minutes on all questions. On all 29 archives (347,215 rows)
lme4 took 17-38 s / 30-53 s (``tests/reference/r_output/mmlu_pro_all_archives.txt``; the
benchmark prints the fastest of those fits beside ours).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from snakemake.utils import validate

from evalbars.data import fetch, sampling
from evalbars.data.items import build_item_table
from evalbars.data.readers import read_mmlu_pro
from evalbars.data.scores import wide_scores
from evalbars.pipeline import smk
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.accuracy import accuracy_table
from evalbars.stats.cluster_robust import SIGN_FLIP_BELOW_DF
from evalbars.stats.logistic import gee, glmm
from evalbars.studies.battles_coverage import simulate_battles_coverage
from evalbars.studies.cluster_type1 import gate_clusters_table
from evalbars.studies.cost_coverage import cost_coverage_table
from evalbars.studies.passk_band import passk_band_table
from evalbars.studies.ppi_coverage import coverage_by_labels
from evalbars.studies.winners_coverage import (
    estimated_covariance_coverage_table,
    winner_coverage_table,
)

from .conftest import REPO, mirror_location
from .reference.r_binary_results import R_BINARY
from .reference.r_results import R_RESULTS

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def load_config(path) -> dict:
    """The workflow configuration in ``path``, validated, with the schema's defaults filled in."""
    config = yaml.safe_load(Path(path).read_text()) or {}
    validate(config, str(SCHEMA), set_default=True)
    # `subsample.n: auto` as the workflow resolves it (the paper's 1,497 on its six models).
    config["subsample"]["n"] = smk.run_choices(config).subsample_size
    return config


def load_frames(config: dict, mirror: str | None) -> list:
    """Raw prediction frames of the configured models, each archive fetched and verified."""
    pinned = fetch.pinned_checksums(config.get("checksums"))
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in config["models"]:
            name = fetch.archive_name(model)
            target = Path(tmp) / name
            fetch.fetch_archive(name, target, pinned[name], mirror=mirror)
            frames.append(read_mmlu_pro(target))
    return frames


def load_items(config: dict, mirror: str | None, policy: str | None = None) -> pd.DataFrame:
    """Canonical item table of the configured models under a missing-prediction policy."""
    return build_item_table(
        load_frames(config, mirror),
        policy or config["missing_prediction"],
        config["missing_prediction_seed"],
    )


def load_all_archives(mirror: str | None) -> pd.DataFrame:
    """Item table (policy ``wrong``) of every pinned archive, each fetched and verified."""
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, digest in sorted(fetch.pinned_checksums().items()):
            target = Path(tmp) / name
            fetch.fetch_archive(name, target, digest, mirror=mirror)
            frames.append(read_mmlu_pro(target))
    return build_item_table(frames, "wrong")


def _best_of(repeat: int, func, *args, **kwargs):
    """Smallest wall-clock time of ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        result = func(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def time_stages(items: pd.DataFrame, label: str, repeat: int = 3):
    """Rows ``(data, stage, questions, seconds, note)`` for one item table."""
    rows = []
    seconds, wide = _best_of(repeat, wide_scores, items)
    n = wide.scores.shape[0]
    rows.append((label, "wide matrix", n, seconds, f"{len(wide.models)} models"))
    for name, func in [
        ("accuracy.accuracy_table", accuracy_table),
        ("pairwise.pairwise_table", pairwise.pairwise_table),
        ("omnibus.omnibus_table", omnibus.omnibus_table),
    ]:
        seconds, _ = _best_of(repeat, func, wide)
        rows.append((label, name, n, seconds, ""))
    for method in ("exact", "general"):
        for spec in mixed.MODEL_SPECS:
            seconds, fit = _best_of(repeat, mixed.fit_lmm, wide, spec, method)
            contrast_seconds, _ = _best_of(repeat, mixed.lmm_contrasts, fit)
            note = ", ".join(f"{k} {v:.6g}" for k, v in fit.variance.items())
            rows.append((label, f"mixed {spec} ({method})", n, seconds, note))
            rows.append((label, f"mixed {spec} contrasts", n, contrast_seconds, method))
    return rows


def time_all_archives(items: pd.DataFrame, repeat: int = 3):
    """Rows for the general-path fits on all archives, and lme4's on the same data (from R)."""
    wide = wide_scores(items)
    n_questions, n_models = wide.scores.shape
    size = (
        f"{len(items):,} rows, {n_models} models, "
        f"{1.0 - float(np.isfinite(wide.scores).mean()):.2%} cells missing"
    )
    reference = R_RESULTS["mmlu_pro_all_archives"]
    rows = []
    for spec in mixed.MODEL_SPECS:
        seconds, fit = _best_of(repeat, mixed.fit_lmm, wide, spec, "general")
        note = f"{size}; " + ", ".join(f"{k} {v:.8g}" for k, v in fit.variance.items())
        rows.append(("all archives", f"mixed {spec} ({fit.method})", n_questions, seconds, note))
        lme4 = reference["lmm"][spec]
        times = reference["timing_seconds"][spec]
        note = (
            f"R {reference['versions']['r']}, lme4 {reference['versions']['lme4']}, fastest of "
            f"{len(times)} fits ({', '.join(f'{t:.1f}' for t in times)} s), recorded; "
            + ", ".join(f"{k} {v:.8g}" for k, v in lme4["variance"].items())
        )
        rows.append(
            ("all archives", f"lme4 lmer {spec}", reference["n_questions"], min(times), note)
        )
    return rows


def time_logistic(items: pd.DataFrame, label: str, reference: str, repeat: int = 3):
    """Rows for the logistic GLMM and GEE fits on ``items``, beside glmer's and geeglm's recorded
    times on the same data (``tests/reference/r_output/<reference>_binary.txt``).

    The notes give the log likelihood of both fits and the largest absolute difference of our
    fixed effects (log odds) from glmer's, refitted with tight tolerances where R could (not on
    all 29 archives, where glmer's default fit stops 0.4 short of our log likelihood).
    """
    ref = R_BINARY[reference]
    cells = glmm.binomial_cells(items)
    data = (cells["successes"], cells["trials"], cells["model"], cells["question_id"])
    seconds, fit = _best_of(repeat, glmm.fit_glmm, *data, cells["category"])
    gee_seconds, gee_fit = _best_of(repeat, gee.fit_gee, *data)
    r = ref.get("glmm_tight", ref["glmm"])
    models = ref["models"]
    if list(fit.names) != models or len(cells) != ref["n_cells"]:
        raise SystemExit(f"{label}: not the data R saw for {reference}")
    gap = np.max(np.abs(fit.params - np.array([r["fixef"][m] for m in models])))
    n = cells["question_id"].nunique()
    glmer = ref["timing_seconds"]["glmer"]
    versions = f"R {ref['versions']['r']}, lme4 {ref['versions']['lme4']}"
    return [
        (
            label,
            "logistic GLMM (Laplace)",
            n,
            seconds,
            f"{len(cells):,} cells; logLik {fit.loglik:.3f}; log odds within {gap:.1e} of glmer's; "
            f"{glmer / seconds:.0f}x faster than glmer",
        ),
        (
            label,
            "lme4 glmer (nAGQ = 1)",
            n,
            glmer,
            f"{versions}, default control, recorded; logLik {ref['glmm']['loglik']:.3f}",
        ),
        (
            label,
            "GEE exchangeable",
            n,
            gee_seconds,
            f"alpha {gee_fit.alpha:.4f}; geeglm {ref['timing_seconds']['geeglm']:.2f} s (recorded)",
        ),
    ]


def _natural_key(path: Path) -> list:
    """Sort key reading digit runs as numbers, so ``models~10`` sorts after ``models~9``."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", path.as_posix())
    ]


def _snakemake(workdir: Path, root: Path, cores: int, targets, env: dict) -> float:
    """Run the workflow on ``targets`` in ``workdir``; wall seconds. Raises on failure."""
    # Targets first: --quiet takes a list of its own.
    command = [sys.executable, "-m", "snakemake", *targets, "--snakefile", str(root / "Snakefile")]
    command += ["--directory", str(workdir), "--cores", str(cores), "--quiet", "all"]
    start = time.perf_counter()
    finished = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if finished.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stderr[-3000:]}")
    return seconds


def time_simulation_stage(
    root=".", config_path="config/config.yaml", cores: int = 2, mirror: str | None = None
) -> pd.DataFrame:
    """Wall time of the workflow's simulation stage, and of each setting's job.

    Copies ``config/`` (with ``config_path`` as its ``config.yaml``) into a
    scratch directory, builds the stage's one data input untimed (the subsample,
    for the paired questions-needed table, unless ``simulation.precision.from_data``
    is false), then times ``snakemake
    simulate_all --cores <cores>``: interpreter start, DAG build and every job,
    as a user would run it. Returns ``scope, job, seconds`` with one ``stage``
    row, then one row per simulation-setting job (its Snakemake benchmark, which
    includes the job's own interpreter start and imports).
    """
    root = Path(root).resolve()
    env = dict(os.environ)
    if mirror:
        env["EVALBARS_MIRROR"] = mirror
    with tempfile.TemporaryDirectory(prefix="evalbars-simulations-") as scratch:
        workdir = Path(scratch)
        shutil.copytree(root / "config", workdir / "config")
        shutil.copyfile(Path(config_path).resolve(), workdir / "config" / "config.yaml")
        settings = yaml.safe_load((workdir / "config" / "config.yaml").read_text()) or {}
        if settings.get("simulation", {}).get("precision", {}).get("from_data", True):
            _snakemake(workdir, root, cores, ["data/subsample/items.parquet"], env)
        seconds = _snakemake(workdir, root, cores, ["simulate_all"], env)
        rows = [("stage", f"snakemake simulate_all --cores {cores}", seconds)]
        benchmarks = workdir / "results" / "benchmarks"
        for path in sorted(benchmarks.glob("sim_*/**/*.tsv"), key=_natural_key):
            job = path.relative_to(benchmarks).with_suffix("").as_posix()
            rows.append(("job", job, float(pd.read_csv(path, sep="\t")["s"].iloc[0])))
    return pd.DataFrame(rows, columns=["scope", "job", "seconds"])


def synthetic_board(models: int, questions: int = 12_032, categories: int = 14, seed: int = 0):
    """A seeded leaderboard of ``models`` models on ``questions`` shared questions, as Arrow record
    batches of ``model, question_id, category, correct`` (one row per model and question).

    Scores come from a 2PL item-response model: P(correct) = logistic(a_q (theta_m - b_q)) with
    abilities theta ~ N(0, 1), difficulties b = category offset + N(0, 1), discriminations
    a ~ LogN(0, 0.3). The batches are made a block of questions at a time and the text columns
    are dictionary-encoded, so a board of 94.5 million rows never holds a Python object per row
    (the whole frame at once would need about 15 GB).

    Yields
    ------
    pyarrow.RecordBatch
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, models)
    category = rng.integers(0, categories, questions)
    difficulty = rng.normal(0.0, 0.5, categories)[category] + rng.normal(0.0, 1.0, questions)
    discrimination = rng.lognormal(0.0, 0.3, questions)
    model_names = pa.array([f"model-{m:04d}" for m in range(models)])
    category_names = pa.array([f"category-{c:02d}" for c in range(categories)])
    model_codes = np.arange(models, dtype=np.int16 if models < 2**15 else np.int32)
    block = max(1, 4_000_000 // models)  # about four million rows per batch
    for first in range(0, questions, block):
        rows = slice(first, min(first + block, questions))
        logits = discrimination[rows, None] * (theta[None, :] - difficulty[rows, None])
        draws = rng.random(logits.shape, dtype=np.float32)
        correct = (draws < 1 / (1 + np.exp(-logits))).astype(np.int8).ravel()
        n_rows = len(correct)
        yield pa.record_batch(
            [
                pa.DictionaryArray.from_arrays(np.tile(model_codes, n_rows // models), model_names),
                pa.array(np.repeat(np.arange(questions)[rows], models)),
                pa.DictionaryArray.from_arrays(
                    np.repeat(category[rows].astype(np.int8), models), category_names
                ),
                pa.array(correct),
            ],
            names=["model", "question_id", "category", "correct"],
        )


def synthetic_items(models: int, questions: int = 12_032, **kwargs) -> pd.DataFrame:
    """:func:`synthetic_board` as one long table (small boards, for tests): ``model`` and
    ``category`` categorical, ``question_id`` int64, ``correct`` int8."""
    return pa.Table.from_batches(list(synthetic_board(models, questions, **kwargs))).to_pandas()


def write_synthetic_board(path, models: int, questions: int = 12_032, **kwargs) -> Path:
    """Write :func:`synthetic_board` to the Parquet file ``path``, one row group per batch."""
    path = Path(path)
    writer = None
    for batch in synthetic_board(models, questions, **kwargs):
        if writer is None:
            writer = pq.ParquetWriter(path, batch.schema)
        writer.write_batch(batch)
    writer.close()
    return path


#: Questions on the synthetic board of K models: the 12,032 of MMLU-Pro, and the Open LLM
#: Leaderboard's roughly 21,000 (v2's six benchmarks) for its roughly 4,500 models.
def board_questions(models: int) -> int:
    """Questions on :func:`time_scale`'s board of ``models`` models."""
    return 21_000 if models >= 4_500 else 12_032


#: Issue 42's targets: (K, wall seconds, peak GB of the whole command, report MB), with the
#: logistic GLMM and GEE fitted (:data:`SCALE_LOGISTIC_MAX_CELLS`).
SCALE_TARGETS = {1_000: (10.0, 1.0, 50.0), 4_500: (45.0, 8.0, 50.0)}
#: ``analysis.logistic_max_cells`` of the scale runs: above the 94.5 M cells of 4,500 x 21,000,
#: so the logistic fits run on every board (the shipped guard, 50 M cells, skips them there).
SCALE_LOGISTIC_MAX_CELLS = 200_000_000


def board_matrix(path, models: int, questions: int):
    """The 0/1 questions x models matrix (float32) and the category of each question of the
    board :func:`write_synthetic_board` wrote, a row group at a time (its model and category
    columns are dictionary codes in model and category order)."""
    x = np.empty((questions, models), dtype=np.float32)
    category = np.empty(questions, dtype=np.int64)
    for batch in pq.ParquetFile(path).iter_batches(columns=["model", "question_id", "category"]):
        question = batch.column("question_id").to_numpy()
        category[question] = batch.column("category").indices.to_numpy()
    for batch in pq.ParquetFile(path).iter_batches(columns=["model", "question_id", "correct"]):
        model = batch.column("model").indices.to_numpy()
        x[batch.column("question_id").to_numpy(), model] = batch.column("correct").to_numpy()
    return x, category


def scale_floor(x: np.ndarray, category: np.ndarray, replicates: int = 10_000) -> dict:
    """The matrix-product floor of the all-pairs statistics on one board: seconds of the
    float32 Gram matrix X'X (every pair's counts: n11, and n10, n01, the paired difference,
    its SE and McNemar's counts elementwise) and of the models x categories sums S with
    S S' (every pair's category-clustered SE), each the best of two; and, beside them, the
    floor of the ranks' paired bootstrap, which no Gram matrix gives: its ``replicates``
    (``ranks.replicates``) x questions count matrix times X, float32 (best of two of one
    chunk of :data:`~evalbars.readings.ranks.paired.BOOTSTRAP_CHUNK` replicates, times the
    chunks)."""
    from evalbars.readings.ranks.paired import BOOTSTRAP_CHUNK  # noqa: PLC0415
    from evalbars.stats.pair_products import gram  # noqa: PLC0415 - the scale rows only

    def category_products():
        indicator = np.zeros((int(category.max()) + 1, x.shape[0]), dtype=np.float32)
        indicator[category, np.arange(x.shape[0])] = 1.0
        sums = (indicator @ x).T.astype(np.float64)  # models x categories, exact counts
        return sums @ sums.T

    # whole counts, as the bootstrap draws them; a product's time does not depend on them
    counts = np.random.default_rng(0).integers(0, 3, size=(BOOTSTRAP_CHUNK, x.shape[0]))
    counts = counts.astype(np.float32)
    chunks = -(-replicates // BOOTSTRAP_CHUNK)
    return {
        "X'X float32": _best_of(2, gram, x)[0],
        "S S' (category sums)": _best_of(2, category_products)[0],
        f"bootstrap W X ({replicates:,} replicates)": chunks * _best_of(2, counts.__matmul__, x)[0],
    }


def _run_sampled(command, env) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run ``command``; its wall seconds, the peak resident memory (GB) of its whole process
    tree (every job running at once counted together, sampled every 0.1 s) and the result."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root, peak = psutil.Process(process.pid), 0
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:  # a job ended while it was being measured
            pass
        time.sleep(0.1)
    seconds = time.perf_counter() - start
    stdout, stderr = process.communicate()
    finished = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    return seconds, peak / 1e9, finished


def time_scale(
    models_list, cores: int = 2, repeat: int = 3, targets=("analysis_all", "ranks_all")
) -> pd.DataFrame:
    """Time and peak memory of the analysis and ranks stages on synthetic leaderboards.

    For each K in ``models_list`` a seeded leaderboard (:func:`synthetic_board`, K models on
    :func:`board_questions` questions in 14 categories) is written as Parquet, untimed, and
    ``snakemake analysis_all ranks_all`` (``models: []``, the Parquet as predictions,
    ``subsample.n: all``) runs on it ``repeat`` times, each in a fresh scratch folder, then
    ``snakemake --report`` once. Returns one row per run and scope: ``command`` (the whole
    command's wall seconds and the sampled peak memory of all its processes together),
    ``report`` (seconds and size of the HTML report) and ``job`` (each job's seconds and peak
    memory from its Snakemake benchmark file); per board, ``floor`` (run 0: the matrix-product
    floor of :func:`scale_floor`, with the float32 matrix's size as its memory) and ``fits``
    (whether the first run fitted the logistic GLMM and GEE; the runs raise
    ``analysis.logistic_max_cells`` to :data:`SCALE_LOGISTIC_MAX_CELLS`).
    """
    rows = []
    env = dict(os.environ)
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for models in models_list:
        questions = board_questions(models)
        with tempfile.TemporaryDirectory(prefix=f"evalbars-scale-{models}-") as scratch:
            board = write_synthetic_board(Path(scratch) / "leaderboard.parquet", models, questions)
            x, category = board_matrix(board, models, questions)
            replicates = base["ranks"]["replicates"]
            for name, seconds in scale_floor(x, category, replicates).items():
                rows.append((models, questions, 0, "floor", name, seconds, x.nbytes / 1e9))
            del x, category
            for run in range(1, repeat + 1):
                workdir = Path(scratch) / f"run-{run}"
                (workdir / "config").mkdir(parents=True)
                config = base | {
                    "models": [],
                    "predictions": [str(board)],
                    "subsample": {"n": "all", "seed": 1},
                    "claims": [],
                    "analysis": (base.get("analysis") or {})
                    | {"logistic_max_cells": SCALE_LOGISTIC_MAX_CELLS},
                }
                (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
                command = [sys.executable, "-m", "snakemake", *targets, "--snakefile"]
                command += [str(REPO / "Snakefile"), "--directory", str(workdir)]
                command += ["--cores", str(cores), "--quiet", "all"]
                seconds, peak, finished = _run_sampled(command, env)
                if finished.returncode:
                    raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stderr[-3000:]}")
                key = (models, questions, run)
                rows.append((*key, "command", " ".join(targets), seconds, peak))
                for path in sorted((workdir / "results" / "benchmarks").glob("*/*.tsv")):
                    bench = pd.read_csv(path, sep="\t")
                    rows.append(
                        (
                            *key,
                            "job",
                            path.parent.name,
                            float(bench["s"].iloc[0]),
                            float(bench["max_rss"].iloc[0]) / 1e3,
                        )
                    )
                if run == 1:
                    fits = pd.read_parquet(workdir / "results" / "tables" / "logistic_fits.parquet")
                    notes = fits["note"].astype(str) if "note" in fits else pd.Series([""])
                    what = "not fitted" if notes.str.startswith("not fitted").any() else "fitted"
                    rows.append((*key, "fits", f"logistic GLMM and GEE {what}", np.nan, np.nan))
                    report = workdir / "report.html"
                    seconds, peak, finished = _run_sampled([*command, "--report", str(report)], env)
                    if finished.returncode:
                        raise RuntimeError(f"report failed:\n{finished.stderr[-3000:]}")
                    rows.append(
                        (*key, "report", f"{report.stat().st_size / 1e6:.1f} MB", seconds, peak)
                    )
                shutil.rmtree(workdir)
    return pd.DataFrame(
        rows, columns=["models", "questions", "run", "scope", "job", "seconds", "peak_gb"]
    )


def scale_summary(table: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    """Median and spread (min-max) of each job and of the whole command over the runs, one
    column per K; and one line per target of :data:`SCALE_TARGETS` saying met or missed.

    The growth columns divide the median at the largest K by that at the next: beside them,
    how K^2 (model pairs) and K*N (items) grew between the two boards.
    """
    timed = table[~table["scope"].isin(["report", "fits"])]
    stats = timed.groupby(["scope", "job", "models"], sort=False).agg(
        median=("seconds", "median"),
        low=("seconds", "min"),
        high=("seconds", "max"),
        peak_gb=("peak_gb", "max"),
    )
    cells = stats.apply(
        lambda r: f"{r['median']:.1f} s ({r['low']:.1f}-{r['high']:.1f}), {r['peak_gb']:.2f} GB",
        axis=1,
    )
    summary = cells.unstack("models")
    ks = sorted(table["models"].unique())
    lines = []
    if len(ks) >= 2:
        small, large = ks[-2], ks[-1]
        n_small, n_large = board_questions(small), board_questions(large)
        medians = stats["median"].unstack("models")
        summary[f"growth {small}->{large}"] = (medians[large] / medians[small]).map(
            "{:.1f}x".format
        )
        lines.append(
            f"from K = {small:,} to {large:,}: pairs (K^2) grew "
            f"{large * (large - 1) / (small * (small - 1)):.1f}x, items (K*N) "
            f"{large * n_large / (small * n_small):.1f}x"
        )
    for k, (wall, memory, report_mb) in SCALE_TARGETS.items():
        runs = table[(table["models"] == k) & (table["scope"] == "command")]
        if runs.empty:
            continue
        seconds, peak = runs["seconds"].max(), runs["peak_gb"].max()
        floor = table[(table["models"] == k) & (table["scope"] == "floor")]
        floor_text = " + ".join(f"{r.job} {r.seconds:.2f} s" for r in floor.itertuples())
        checks = [
            f"slowest of {len(runs)} runs {seconds:.1f} s (target < {wall:.0f} s; "
            f"matrix-product floor {floor_text or 'not timed'})"
        ]
        met = seconds < wall
        if memory is not None:
            checks.append(f"peak {peak:.2f} GB (target < {memory:g} GB)")
            met &= peak < memory
        report = table[(table["models"] == k) & (table["scope"] == "report")]
        if report_mb is not None and not report.empty:
            size = float(report["job"].iloc[0].split()[0])
            checks.append(f"report {size:.1f} MB (target < {report_mb:g} MB)")
            met &= size < report_mb
        fits = table[(table["models"] == k) & (table["scope"] == "fits")]
        if not fits.empty:
            checks.append(fits["job"].iloc[0])
            met &= "not fitted" not in fits["job"].iloc[0]
        lines.append(f"K = {k:,}: {'met' if met else 'MISSED'}: " + "; ".join(checks))
    return summary, lines


#: The gate's type-I band (issue 33): nominal 5%, within 1.5 points at every cluster count.
GATE_BAND = (0.035, 0.065)
#: PPI++ coverage band under uniformly random labels, nominal 95%.
PPI_BAND = (0.94, 0.96)


def gate_clusters(replications: int = 4000) -> tuple[pd.DataFrame, list[str]]:
    """The gate's type-I error under clustered nulls, and the lines that judge it.

    Two grids, each at equal sizes and MMLU-Pro's size spread (3.5): 3, 6, 14 and 57 categories
    at design effects 1, 2 and 4.5 (30% of questions discordant: correlations near 0.01, as
    on MMLU-Pro), and 3, 4, 6, 8, 14 and 30 categories at intra-category correlations 0.1 and
    0.3 (half the questions discordant). The gate's rate must lie within :data:`GATE_BAND`
    where its exact test can reach the band's floor (the attainable size is 4.7% or more from 7
    categories), and at or below the attainable size where it cannot (3.1% at 6, 0 at 3 to 5).
    """
    weak = gate_clusters_table(
        cluster_counts=(3, 6, 14, 57),
        design_effects=(1.0, 2.0, 4.5),
        size_ratios=(1.0, 3.5),
        replications=replications,
    )
    strong = gate_clusters_table(
        cluster_counts=(3, 4, 6, 8, 14, 30),
        correlations=(0.1, 0.3),
        size_ratios=(1.0, 3.5),
        discordance=0.5,
        replications=replications,
    )
    table = pd.concat(
        [weak.assign(grid="design effect"), strong.assign(grid="correlation")], ignore_index=True
    )
    gate = table[table["method"] == "gate"]
    low, high = GATE_BAND
    reachable = gate["attainable"] >= low
    inside = gate["rate"].between(low, high)
    # Below the floor an exact test is at most its attainable size, up to Monte Carlo error.
    below = gate["rate"] <= gate["attainable"] + 3 * np.sqrt(
        gate["attainable"] * (1 - gate["attainable"]) / replications
    )
    settled = gate[reachable]
    lines = [
        f"gate (sign-flip test below {SIGN_FLIP_BELOW_DF} CR2 df, CR2 with Satterthwaite t "
        f"from there): type-I error {settled['rate'].min():.2%} to {settled['rate'].max():.2%} "
        f"over {len(settled)} settings of {settled['clusters'].min()} to "
        f"{settled['clusters'].max()} categories ({replications:,} nulls each); "
        f"within {low:.1%}-{high:.1%}: "
        + ("yes" if inside[reachable].all() else f"no, {int((~inside[reachable]).sum())} outside"),
    ]
    for clusters, rows in gate[~reachable].groupby("clusters"):
        attainable = rows["attainable"].iloc[0]
        ok = below[rows.index].all()
        lines.append(
            f"gate at {clusters} categories: {rows['rate'].min():.2%} to {rows['rate'].max():.2%} "
            f"over {len(rows)} settings; an exact test of {clusters} categories can reach at "
            f"most {attainable:.2%}: " + ("yes, at or below it" if ok else "no, above it")
        )
    for method in ("cr2_satterthwaite", "wild_webb", "cr1_t", "cr0_z"):
        rows = table[table["method"] == method]
        above = int((rows["rate"] > high).sum())
        lines.append(
            f"{method}: {rows['rate'].min():.2%} to {rows['rate'].max():.2%}, above "
            f"{high:.1%} in {above} of {len(rows)} settings"
        )
    return table, lines


def ppi_coverage() -> tuple[pd.DataFrame, list[str]]:
    """The PPI++ coverage study at 10, 15, 30 and 200 labels, and the lines that judge it."""
    table = coverage_by_labels()
    corrected = table[(table["reading"] == "ppi++") & table["decides"]]
    low, high = PPI_BAND
    lines = []
    for labels, rows in corrected.groupby("labels"):
        cover = rows.set_index(["scenario", "target"])["coverage"]
        valid, chosen = cover.loc["random_labels"], cover.loc["judge_errors_oversampled"]
        band = (
            "within"
            if valid.between(low, high).all()
            else ("at or above (conservative)" if valid.min() >= low else "BELOW")
        )
        lines.append(
            f"PPI++, {labels:,} random labels: model {valid['model']:.2%}, pair "
            f"{valid['pair']:.2%}; {band} {low:.0%}-{high:.0%}; chosen by outcome "
            f"{chosen.min():.2%} to {chosen.max():.2%}"
            + (" (under-covers, as it must)" if chosen.max() < low else " (does not under-cover)")
        )
    valid = corrected[corrected["scenario"] == "random_labels"]["coverage"]
    lines.append(
        f"PPI++ where it decides (>= {table.loc[table['decides'], 'labels'].min():,} labels): "
        f"never below {low:.0%}: " + ("yes" if valid.min() >= low else "no")
    )
    return table, lines


def winner_coverage(replicates: int = 4000) -> tuple[pd.DataFrame, list[str]]:
    """The winner's-curse coverage study, and the lines that judge it: the hybrid interval of
    the winner keeps at least 94% everywhere, the naive one falls below 80% on tied boards of 20
    and 100 models, and the MCB set holds the true best at least 95% of the time."""
    table = winner_coverage_table(replicates)
    hybrid = table["hybrid_coverage"]
    tied = table[(table["spacing"] == 0) & (table["models"] >= 20)]
    best = table["best_set_coverage"].dropna()
    lines = [
        f"hybrid interval of the winner: coverage {hybrid.min():.2%} to {hybrid.max():.2%} over "
        f"{len(table)} settings ({replicates:,} boards each); at least 94%: "
        + ("yes" if (hybrid >= 0.94).all() else "no"),
        f"naive interval of the winner on tied boards of 20 and 100 models: "
        f"{tied['naive_coverage'].min():.2%} to {tied['naive_coverage'].max():.2%}; below 80%: "
        + ("yes" if (tied["naive_coverage"] < 0.80).all() else "no"),
        f"confidence set for the best (MCB): holds the true best {best.min():.2%} to "
        f"{best.max():.2%}; at least 95%: " + ("yes" if (best >= 0.95).all() else "no"),
    ]
    return table, lines


def cost_coverage(replicates: int = 1000) -> tuple[pd.DataFrame, list[str]]:
    """The cost readings' coverage study (:mod:`evalbars.studies.cost_coverage`), and the lines
    that judge it against the nominal 95% (intervals, the frontier set) and 2.5% (a cost claim
    false at its boundary, supported by the claims' rule)."""
    table = cost_coverage_table(replicates)
    intervals = table[["accuracy", "cost", "accuracy_per_dollar"]]
    boundary = table[["accuracy_boundary", "cost_boundary"]]
    lines = [
        f"{name} interval: least coverage over the models {table[name].min():.2%} to "
        f"{table[name].max():.2%} over {len(table)} settings ({replicates:,} boards each)"
        for name in intervals
    ]
    lines += [
        f"frontier set holds the true frontier: {table['frontier_set'].min():.2%} to "
        f"{table['frontier_set'].max():.2%}; at least 95%: "
        + ("yes" if (table["frontier_set"] >= 0.95).all() else "no"),
        f"cost claims false at their boundary, supported: {boundary.min().min():.2%} to "
        f"{boundary.max().max():.2%} (level 2.5%); at most 3.5%: "
        + ("yes" if (boundary <= 0.035).all().all() else "no"),
    ]
    return table, lines


def winner_estimated_coverage(replicates: int = 1000) -> tuple[pd.DataFrame, list[str]]:
    """The winner's readings and the MCB set with the covariance estimated from item-level
    scores (:func:`evalbars.studies.winners_coverage.estimated_covariance_coverage_table`), and
    the lines that say how far each covariance keeps the level."""
    table = estimated_covariance_coverage_table(replicates)
    lines = []
    for (covariance, tau), rows in table.groupby(["covariance", "tau"], sort=False):
        tied = rows[rows["spacing"] == 0]
        best = rows["best_set_coverage"].dropna()
        lines.append(
            f"{covariance} covariance, tau {tau:g} ({', '.join(map(str, sorted(set(rows['categories']))))} "
            f"categories): hybrid {tied['hybrid_coverage'].min():.1%} to "
            f"{tied['hybrid_coverage'].max():.1%}, naive {tied['naive_coverage'].min():.1%} to "
            f"{tied['naive_coverage'].max():.1%} (tied), MCB set {best.min():.1%} to {best.max():.1%}"
        )
    return table, lines


#: The pass@k band's simultaneous coverage floor at nominal 95% (issue 38).
PASSK_FLOOR = 0.93


def passk_band() -> tuple[pd.DataFrame, list[str]]:
    """Simultaneous coverage of the pass@k difference band over k, and the lines that judge it."""
    table = passk_band_table()
    shipped = table[(table["categories"] == 0) == (table["clustered_by"] == "question")]
    below = shipped[shipped["coverage"] < PASSK_FLOOR]
    lines = [
        f"pass@k band (as shipped): coverage {shipped['coverage'].min():.1%} to "
        f"{shipped['coverage'].max():.1%} over {len(shipped)} settings; at least "
        f"{PASSK_FLOOR:.0%} everywhere: "
        + (
            "yes"
            if below.empty
            else f"no, {len(below)} below: "
            + "; ".join(
                f"{r.scenario} Q={r.questions} n={r.samples} G={r.categories} {r.coverage:.1%}"
                for r in below.itertuples()
            )
        ),
    ]
    ignored = table[(table["categories"] > 0) & (table["clustered_by"] == "question")]
    lines.append(
        f"categories ignored: {ignored['coverage'].min():.1%} to {ignored['coverage'].max():.1%}"
    )
    return table, lines


#: The floor the prompt-clustered Bradley-Terry intervals must keep (nominal 95%).
BATTLES_FLOOR = 0.94


def battles_coverage() -> tuple[pd.DataFrame, list[str]]:
    """The Bradley-Terry coverage study, and the lines that judge it."""
    table = pd.concat(
        [
            simulate_battles_coverage(prompts=(100, 400), replicates=2000),
            simulate_battles_coverage(
                prompts=(100,), per_prompt=(8,), prompt_sd=(0.0, 1.0), replicates=500,
                bootstrap_replicates=200, seed=1,
            ),
        ],
        ignore_index=True,
    )  # fmt: skip
    wide = table[table["replicates"] == 2000].pivot_table(
        index=["design", "prompts", "per_prompt", "prompt_sd"], columns="reading", values="coverage"
    )
    below = wide["per_battle"] < BATTLES_FLOOR
    clustered_there = wide.loc[below, "clustered"]
    lines = [
        f"clustered by prompt: coverage {wide['clustered'].min():.2%} to "
        f"{wide['clustered'].max():.2%} over {len(wide)} settings; at least "
        f"{BATTLES_FLOOR:.0%} everywhere: "
        + ("yes" if (wide["clustered"] >= BATTLES_FLOOR).all() else "no"),
        f"per battle: below {BATTLES_FLOOR:.0%} in {int(below.sum())} settings (down to "
        f"{wide['per_battle'].min():.2%}); clustered there: "
        + (
            f"{clustered_there.min():.2%} to {clustered_there.max():.2%}" if below.any() else "none"
        ),
    ]
    boot = table[(table["replicates"] == 500) & (table["reading"] == "bootstrap")]
    lines.append(
        f"prompt-cluster bootstrap (percentile, 200 replicates): {boot['coverage'].min():.2%} to "
        f"{boot['coverage'].max():.2%}"
    )
    return table, lines


#: `evalbars --help` and each `evalbars COMMAND --help` should feel instant (issue 39).
STARTUP_TARGET = 0.3


def cli_startup(runs: int = 11) -> tuple[pd.DataFrame, list[str]]:
    """Wall and CPU seconds of ``python -m evalbars --help`` and of three commands' ``--help``
    (the interpreter of this environment, so uv's own start-up is not counted), median of
    ``runs``, and the line that judges them against :data:`STARTUP_TARGET`."""
    rows = []
    for argv in (["--help"], ["report", "--help"], ["ranks", "--help"], ["compare", "--help"]):
        walls, cpus = [], []
        for _ in range(runs):
            before = os.times()
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "evalbars", *argv], capture_output=True, check=True
            )
            walls.append(time.perf_counter() - start)
            after = os.times()
            cpus.append(
                after.children_user
                + after.children_system
                - before.children_user
                - before.children_system
            )
        command = " ".join(["evalbars", *argv])
        rows.append((command, runs, float(np.median(walls)), float(np.median(cpus))))
    table = pd.DataFrame(rows, columns=["command", "runs", "wall_median", "cpu_median"])
    slowest = table["wall_median"].max()
    lines = [
        f"slowest median wall {slowest:.3f} s (CPU {table['cpu_median'].max():.3f} s), load "
        f"{os.getloadavg()[0]:.1f}; under {STARTUP_TARGET} s: "
        + ("yes" if slowest < STARTUP_TARGET else "no")
    ]
    return table, lines


#: Issue 39's targets for small runs, wall seconds: the quickstart's report, and compare and
#: claims on a file of two models and 1,500 questions.
SMALL_RUN_TARGETS = {"report": 4.0, "compare": 2.0, "claims": 2.0}


def two_model_file(path: Path, questions: int = 1_500, seed: int = 0) -> Path:
    """A seeded CSV of two models on ``questions`` questions in 14 categories (``model,
    question_id, category, correct``), about 70% and 72% correct, paired through a shared
    question difficulty."""
    rng = np.random.default_rng(seed)
    easiness = rng.normal(0.9, 1.0, questions)
    ability = np.array([0.0, 0.1])
    p = 1 / (1 + np.exp(-(easiness[:, None] + ability[None, :])))
    correct = (rng.random(p.shape) < p).astype(int)
    frame = pd.DataFrame(
        {
            "model": np.repeat(["model-a", "model-b"], questions),
            "question_id": np.tile([f"q{i:04d}" for i in range(questions)], 2),
            "category": np.tile([f"c{i % 14:02d}" for i in range(questions)], 2),
            "correct": correct.T.ravel(),
        }
    )
    frame.to_csv(path, index=False)
    return path


def _timed(command, cwd) -> tuple[float, float]:
    """Wall and CPU seconds (this process's children) of one command, which must succeed or
    exit 3 (compare's inconclusive)."""
    before = os.times()
    start = time.perf_counter()
    finished = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if finished.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{finished.stderr[-2000:]}")
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("children_user", "children_system"))
    return wall, cpu


def small_runs(runs: int = 3) -> tuple[pd.DataFrame, list[str]]:
    """Wall and CPU seconds of the small runs of :data:`SMALL_RUN_TARGETS`, ``runs`` times each
    (the interpreter of this environment): ``evalbars report`` on the quickstart's example logs
    (README: ``evalbars example``, then ``evalbars report ... --runs newest --id-field id
    --category-field category``, each run into a fresh directory), and ``evalbars compare`` and
    ``evalbars claims`` (one claim) on :func:`two_model_file`."""
    evalbars = [sys.executable, "-m", "evalbars"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="evalbars-small-") as scratch:
        work = Path(scratch)
        subprocess.run([*evalbars, "example", "lm_eval-example"], cwd=work, check=True)
        pair = two_model_file(work / "two_models.csv")
        report = [*evalbars, "report", "lm_eval-example", "--runs", "newest", "--id-field"]
        report += ["id", "--category-field", "category"]
        pair_names = ["--baseline", "model-a", "--candidate", "model-b"]
        commands = {
            "report": lambda run: [*report, "--output", f"report-{run}"],
            "compare": lambda run: [*evalbars, "compare", str(pair), *pair_names],
            "claims": lambda run: [*evalbars, "claims", str(pair), "--claim", "model-b > model-a"],
        }
        for name, command in commands.items():
            for run in range(1, runs + 1):
                wall, cpu = _timed(command(run), work)
                rows.append((name, run, wall, cpu))
    table = pd.DataFrame(rows, columns=["command", "run", "wall", "cpu"])
    medians = table.groupby("command", sort=False)[["wall", "cpu"]].median()
    lines = [
        f"{name}: median wall {medians.loc[name, 'wall']:.2f} s (CPU "
        f"{medians.loc[name, 'cpu']:.2f} s) over {runs} runs; under {target:g} s: "
        + ("yes" if medians.loc[name, "wall"] < target else "no")
        for name, target in SMALL_RUN_TARGETS.items()
    ]
    lines.append(f"load {os.getloadavg()[0]:.1f}")
    return table, lines


#: The options that run a statistical check instead of a timing (their ``args`` attributes).
CHECK_FLAGS = (
    "gate_clusters",
    "ppi_coverage",
    "winner_coverage",
    "cost_coverage",
    "passk_band",
    "battles_coverage",
    "cli_startup",
    "small_runs",
)


def run_checks(args) -> int:
    """The statistical checks asked for (:data:`CHECK_FLAGS`): each study's table and its
    verdict lines (with ``--dry-run``, what would be checked)."""
    checks = [
        (name, check)
        for name, check, asked in (
            ("the gate's type-I error", gate_clusters, args.gate_clusters),
            ("PPI++ coverage", ppi_coverage, args.ppi_coverage),
            ("the winner's-curse coverage", winner_coverage, args.winner_coverage),
            (
                "the winner's readings with an estimated covariance",
                winner_estimated_coverage,
                args.winner_coverage,
            ),
            ("the cost readings' coverage", cost_coverage, args.cost_coverage),
            ("the pass@k band's coverage", passk_band, args.passk_band),
            ("Bradley-Terry coverage", battles_coverage, args.battles_coverage),
            ("the command line's start-up", cli_startup, args.cli_startup),
            ("small runs", small_runs, args.small_runs),
        )
        if asked
    ]
    if args.dry_run:
        print(f"would check: {' and '.join(name for name, _ in checks)}")
        return 0
    tables = []
    for _, check in checks:
        start = time.perf_counter()
        table, lines = check()
        with pd.option_context("display.width", 250, "display.max_rows", 500):
            print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
        for line in lines:
            print(line)
        print(f"({time.perf_counter() - start:.1f} s)")
        tables.append(table)
    if args.output:
        pd.concat(tables, ignore_index=True).to_csv(args.output, index=False)
    return 0


def _planned(args) -> str:
    """What a run with these options times (``--dry-run``)."""
    if args.scale is not None:
        return (
            f"analysis_all ranks_all on K = {' '.join(map(str, args.scale or [100, 1000, 4500]))}"
        )
    if args.simulations:
        return f"snakemake simulate_all --cores {args.cores}"
    return f"each analysis stage, best of {args.repeat}, on the subsample and all questions"


def _parser() -> argparse.ArgumentParser:
    """The benchmark command's options."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmark",
        description="Time each analysis stage on the configured subsample and on all questions.",
    )
    parser.add_argument(
        "--simulations",
        action="store_true",
        help="time the workflow's simulation stage (snakemake simulate_all) instead",
    )
    parser.add_argument(
        "--scale",
        nargs="*",
        type=int,
        metavar="K",
        help="time the analysis and ranks stages on synthetic leaderboards of K models "
        "(default K = 100 1000 4500; 21,000 questions at K >= 4,500, else 12,032), "
        "--repeat runs each, instead",
    )
    parser.add_argument(
        "--gate-clusters",
        action="store_true",
        help="check the release gate's type-I error under clustered nulls (3 to 57 clusters, "
        "intra-category correlation up to 0.3)",
    )
    parser.add_argument(
        "--ppi-coverage",
        action="store_true",
        help="check PPI++ coverage at 10, 15, 30 and 200 labels, random and outcome-chosen",
    )
    parser.add_argument(
        "--cost-coverage",
        action="store_true",
        help="check the coverage of the cost intervals and the frontier set, and the cost "
        "claims' type-I error at their boundary",
    )
    parser.add_argument(
        "--winner-coverage",
        action="store_true",
        help="check the coverage of the winner's corrected interval and of the set for the best",
    )
    parser.add_argument(
        "--passk-band",
        action="store_true",
        help="check the pass@k band's simultaneous coverage over k (30 to 500 questions)",
    )
    parser.add_argument(
        "--battles-coverage",
        action="store_true",
        help="check Bradley-Terry interval coverage when prompts are battled several times",
    )
    parser.add_argument(
        "--cli-startup",
        action="store_true",
        help=f"time `evalbars --help` and three commands' --help (target {STARTUP_TARGET} s)",
    )
    parser.add_argument(
        "--small-runs",
        action="store_true",
        help="time the quickstart's report and compare/claims on 2 models x 1,500 questions "
        "(targets: report 4 s, compare and claims 2 s)",
    )
    parser.add_argument("--cores", type=int, default=2, help="cores for --simulations (default 2)")
    parser.add_argument("--config", default="config/config.yaml", help="workflow config file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per stage; the best counts")
    parser.add_argument("--output", help="also write the table to this CSV file")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the options, the config and the archives' source, say what would be timed, "
        "and stop (the test suite runs every documented command this way)",
    )
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)

    root = REPO
    config = load_config(root / args.config)
    mirror = mirror_location(config["mirror"] or None)
    print(f"archives from: {mirror or 'upstream'} ({len(config['models'])} models)", flush=True)
    if any(getattr(args, flag) for flag in CHECK_FLAGS):
        return run_checks(args)
    if args.dry_run:
        print(f"would time: {_planned(args)}")
        return 0
    if args.scale is not None:
        table = time_scale(args.scale or [100, 1000, 4500], args.cores, args.repeat)
        summary, lines = scale_summary(table)
        with pd.option_context("display.width", 250, "display.max_colwidth", 60):
            print(summary.to_string())
        for line in lines:
            print(line)
        if args.output:
            table.to_csv(args.output, index=False)
        return 0
    if args.simulations:
        table = time_simulation_stage(root, args.config, args.cores, mirror)
        stage = table.iloc[0]
        jobs = table[table["scope"] == "job"]
        print(table.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
        print(
            f"{stage['job']}: {stage['seconds']:.1f} s wall; {len(jobs)} setting jobs, "
            f"{jobs['seconds'].sum():.1f} s in all"
        )
        if args.output:
            table.to_csv(args.output, index=False)
        return 0
    start = time.perf_counter()
    items = load_items(config, mirror)
    load_seconds = time.perf_counter() - start
    n_all = items["question_id"].nunique()
    seconds, subsample = _best_of(
        args.repeat, sampling.stratified_subsample, items, **config["subsample"]
    )
    n_sub = subsample.items["question_id"].nunique()
    rows = [
        ("all", "load archives + item table", n_all, load_seconds, "read once"),
        ("subsample", "draw subsample", n_sub, seconds, f"seed {config['subsample']['seed']}"),
    ]
    rows += time_stages(subsample.items, "subsample", args.repeat)
    eligible = items[
        items["question_id"].isin(sampling.eligible_questions(items)[0]["question_id"])
    ]
    rows += time_stages(eligible, "all", args.repeat)
    # The general path where it is needed: predictions the extractor could not parse dropped
    # (missing_prediction = exclude), so the models no longer share every question.
    wide = wide_scores(load_items(config, mirror, policy="exclude"))
    share = 1.0 - float(np.isfinite(wide.scores).mean())
    for spec in mixed.MODEL_SPECS:
        seconds, fit = _best_of(args.repeat, mixed.fit_lmm, wide, spec)
        note = f"{share:.1%} cells missing; " + ", ".join(
            f"{k} {v:.6g}" for k, v in fit.variance.items()
        )
        stage = f"mixed {spec} ({fit.method})"
        rows.append(("all, exclude", stage, wide.scores.shape[0], seconds, note))
    rows += time_logistic(subsample.items, "subsample", "mmlu_pro_default_subsample", args.repeat)
    rows += time_logistic(items, "all", "mmlu_pro_default_all", args.repeat)
    every = load_all_archives(mirror)
    rows += time_all_archives(every, args.repeat)
    rows += time_logistic(every, "all archives", "mmlu_pro_all_archives", 1)
    table = pd.DataFrame(rows, columns=["data", "stage", "questions", "seconds", "note"])
    with pd.option_context("display.width", 250, "display.max_colwidth", 140):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    if args.output:
        table.to_csv(args.output, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
