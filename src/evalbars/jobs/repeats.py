"""The repeats stage's jobs (``workflow/rules/repeats.smk``): what repeated samples and reruns
add, where the data have them. Each model's pass@k curve, the pass@k difference of the pairs
that matter over k with a simultaneous band, the score variance split into questions, runs and
samples, each pair's gap with runs as a random effect and its sign in every run, and Miller's
"more questions or more samples?". The stage's figure is drawn by
:mod:`evalbars.jobs.figures.repeats`.

Every job reads the sample-level rows of the subsample's item table (one row per model,
question, run and sample: :data:`SAMPLE_COLUMNS`), not the score matrix the other stages read:
these are the readings that need the samples themselves.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from evalbars.data.readers.common import DEFAULT_RUN
from evalbars.defaults import ALPHA, DRAWS, LEVEL, POWER, SEED
from evalbars.jobs.inputs import parquet, read_json, reads
from evalbars.jobs.outputs import Table
from evalbars.readings.repeats import RUN_SIGN_COLUMNS, curve_pairs, run_readings
from evalbars.stats.planning.samples import sampling_plan_table
from evalbars.stats.repeats.pass_at_k import pass_at_k_curve, sample_counts
from evalbars.stats.repeats.passk_band import passk_difference_band
from evalbars.stats.repeats.run_variance import run_variance_table

__all__ = [
    "SAMPLE_COLUMNS",
    "PASS_AT_K_COLUMNS",
    "PASSK_CURVE_COLUMNS",
    "samples_of",
    "repeats_pass_at_k",
    "repeats_passk_curve",
    "repeats_run_variance",
    "repeats_sampling_plan",
]

log = logging.getLogger("evalbars")

#: The item table's columns the stage reads.
SAMPLE_COLUMNS = ["model", "question_id", "category", "run", "epoch", "correct"]
#: Columns of ``pass_at_k.csv``.
PASS_AT_K_COLUMNS = [
    "model",
    "k",
    "estimate",
    "ci_low",
    "ci_high",
    "questions",
    "se",
    "df",
    "clusters",
    "clustered_by",
]
#: Columns of ``passk_curve.csv``.
PASSK_CURVE_COLUMNS = [
    "model_a",
    "model_b",
    "k",
    "difference",
    "pointwise_low",
    "pointwise_high",
    "band_low",
    "band_high",
    "sign",
    "se",
    "df",
    "degenerate",
    "questions",
    "clusters",
    "clustered_by",
    "band",
    "critical_value",
    "category",
    "source",
]


def samples_of(item_table: pd.DataFrame) -> pd.DataFrame:
    """The sample rows of an item table, as the stage reads them: text model, category and run
    names (a table without ``run`` is one run), float scores, missing scores left out."""
    run = item_table["run"] if "run" in item_table.columns else DEFAULT_RUN
    frame = pd.DataFrame(
        {
            "model": item_table["model"].astype(str).to_numpy(),
            "question_id": item_table["question_id"].to_numpy(),
            "category": item_table["category"].astype(str).to_numpy(),
            "run": pd.Series(run, index=item_table.index).astype(str).to_numpy(),
            "correct": item_table["correct"].to_numpy(dtype=float, na_value=np.nan),
        }
    )
    return frame[np.isfinite(frame["correct"].to_numpy())].reset_index(drop=True)


def _counts(samples: pd.DataFrame) -> pd.DataFrame | None:
    """Samples and correct samples per (model, question), or None (said in the log) where a
    score is neither 0 nor 1: pass@k needs right or wrong."""
    try:
        return sample_counts(samples)
    except ValueError as error:
        log.warning("pass@k: %s; no pass@k table is made", error)
        return None


@reads(item_table=parquet(columns=SAMPLE_COLUMNS))
def repeats_pass_at_k(item_table: pd.DataFrame, *, level: float = LEVEL) -> dict:
    """``repeats_pass_at_k``: each model's pass@k for k = 1 to its most samples of a question
    (pooled over its runs), with the CR2 interval (``pass_at_k``:
    :func:`evalbars.stats.repeats.pass_at_k.pass_at_k_curve`, clustered by category where
    there are two or more). At each k the questions with fewer than k samples are left out
    (``questions`` counts the others)."""
    counts = _counts(samples_of(item_table))
    if counts is None:
        table = pd.DataFrame(columns=PASS_AT_K_COLUMNS)
    else:
        table = pass_at_k_curve(counts, score="pass@k", level=level)[PASS_AT_K_COLUMNS]
    most = int(table["k"].max()) if len(table) else 0
    return {
        "pass_at_k": Table(
            table,
            caption=f"pass@k of each model for k = 1 to {most}, with {level:.0%} CR2 intervals; "
            "each question's samples pooled over its runs (Chen et al. 2021's unbiased "
            "estimator).",
        )
    }


@reads(item_table=parquet(columns=SAMPLE_COLUMNS), checked=read_json)
def repeats_passk_curve(
    item_table: pd.DataFrame,
    checked: dict,
    *,
    level: float = LEVEL,
    baseline: str | None = None,
    draws: int = DRAWS,
    seed: int = SEED,
) -> dict:
    """``repeats_passk_curve``: for each pair a claim compares (else each model against
    ``baseline``, else each against the next best:
    :func:`evalbars.readings.repeats.curve_pairs`), the pass@k difference at every k with
    pointwise intervals and a band over k that holds for every k at once (``passk_curve``:
    :func:`evalbars.stats.repeats.passk_band.passk_difference_band`). ``sign`` is +1 (-1)
    where the band lies above (below) 0."""
    samples = samples_of(item_table)
    counts = _counts(samples)
    frames = []
    if counts is not None:
        order = counts.groupby("model")["correct"].sum() / counts.groupby("model")["samples"].sum()
        models = list(order.sort_values(ascending=False, kind="stable").index)
        pairs = curve_pairs(
            checked.get("claims", []),
            models,
            baseline=baseline,
            categories=sorted(samples["category"].unique()),
        )
        for pair in pairs:
            rows = counts if pair.category is None else counts[counts["category"] == pair.category]
            try:
                band = passk_difference_band(
                    rows, pair.model_a, pair.model_b, level=level, draws=draws, seed=seed
                )
            except ValueError as error:
                log.warning("pass@k curve of %s - %s: %s", pair.model_a, pair.model_b, error)
                continue
            frames.append(
                band.assign(
                    band=band.attrs.get("band", "sup-t"),
                    critical_value=band.attrs["critical_value"],
                    category=pair.category,
                    source=pair.source,
                )
            )
    table = (
        pd.concat(frames, ignore_index=True)[PASSK_CURVE_COLUMNS]
        if frames
        else pd.DataFrame(columns=PASSK_CURVE_COLUMNS)
    )
    return {
        "passk_curve": Table(
            table,
            caption=f"pass@k differences (A - B) at every k, with {level:.0%} pointwise "
            f"intervals and a {level:.0%} band over k; sign +1/-1 where the band excludes 0.",
        )
    }


@reads(item_table=parquet(columns=SAMPLE_COLUMNS), checked=read_json)
def repeats_run_variance(
    item_table: pd.DataFrame,
    checked: dict,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    level: float = LEVEL,
    baseline: str | None = None,
) -> dict:
    """``repeats_run_variance``: each model's score variance split into between-question,
    between-run and within-question sampling, with its run-to-run SD in points, its flaky
    questions and the smallest gap run-to-run noise lets a test detect (``run_variance``:
    :func:`evalbars.stats.repeats.run_variance.run_variance_table`); for the pairs of
    :func:`evalbars.readings.repeats.curve_pairs`, the gap with runs as a random effect
    (``run_aware``) and its sign in every run (``run_signs``)."""
    samples = samples_of(item_table)
    several = samples.groupby("model")["run"].nunique()
    fitted = []
    for model, rows in samples.groupby("model", sort=True):
        try:
            fitted.append(run_variance_table(rows, alpha=alpha, power=power))
        except ValueError as error:  # too few samples for the components
            log.warning("run variance of %s: %s", model, error)
    table = pd.concat(fitted, ignore_index=True) if fitted else pd.DataFrame()
    order = samples.groupby("model")["correct"].mean().sort_values(ascending=False, kind="stable")
    pairs = curve_pairs(
        checked.get("claims", []),
        list(order.index),
        baseline=baseline,
        categories=sorted(samples["category"].unique()),
    )
    aware, signs = run_readings(samples, pairs, level=level)
    repeated = int((several >= 2).sum())
    return {
        "run_variance": Table(
            table,
            caption=f"Score variance of each model split into questions, runs and samples "
            f"({repeated} of {len(several)} models read in two or more runs); run-to-run SD "
            f"and the smallest gap it lets a test detect (alpha {alpha:g}, power {power:g}) "
            "in points.",
        ),
        "run_aware": Table(
            aware,
            caption=f"Each pair's gap with runs as a random effect: the {level:.0%} interval "
            "with each model's run-to-run variance; survives_rerun when it still excludes 0.",
        ),
        "run_signs": Table(
            signs if len(signs) else pd.DataFrame(columns=RUN_SIGN_COLUMNS),
            caption="Each pair's gap in every run (runs matched by label where both models "
            "share them, else every run of A against every run of B).",
        ),
    }


#: The sampling plan's columns that count questions, samples or runs.
_PLAN_COUNTS = ("samples_per_question", "questions_needed", "samples_needed", "runs_needed")


def _whole_or_infinite(value: float) -> str:
    """A count as a whole number with thousands separators, or "∞" (unreachable)."""
    return "∞" if value == float("inf") else f"{value:,.0f}"


@reads(item_table=parquet(columns=SAMPLE_COLUMNS))
def repeats_sampling_plan(item_table: pd.DataFrame, *, target_se: float) -> dict:
    """``repeats_sampling_plan``: for each model, what reaches an SE of ``target_se`` points on
    its mean score: more questions, more samples per question or more runs (``sampling_plan``:
    :func:`evalbars.stats.planning.samples.sampling_plan_table`, with Miller's
    :math:`\\mathrm{Var}(\\bar s) = \\sigma^2_q/n + \\sigma^2_r/R + \\sigma^2_w/(nKR)` from
    each model's variance components)."""
    samples = samples_of(item_table)
    fitted = []
    for model, rows in samples.groupby("model", sort=True):
        try:
            fitted.append(run_variance_table(rows))
        except ValueError as error:
            log.warning("sampling plan of %s: %s", model, error)
    components = pd.concat(fitted, ignore_index=True) if fitted else None
    table = pd.DataFrame(columns=["model", "advice"])
    if components is not None:
        table = sampling_plan_table(components, target_se / 100)
        points = {"se": "se_points", "target_se": "target_se_points"}
        points |= {"floor_with_samples": "floor_with_samples_points"}
        table = table.assign(**{c: 100 * table[c] for c in points}).rename(columns=points)
        table = table.astype({"questions": "int64", "runs": "int64"})
    return {
        "sampling_plan": Table(
            table,
            caption=f"More questions, more samples or more runs? What reaches an SE of "
            f"{target_se:g} points on each model's mean score (Miller 2024).",
            # counts, shown whole ("∞" where that way alone cannot reach the target)
            formats=dict.fromkeys(_PLAN_COUNTS, _whole_or_infinite),
        )
    }
