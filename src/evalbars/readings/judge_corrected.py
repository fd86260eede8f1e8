r"""Judge-corrected readings: PPI++ on a judge's scores with a few human labels, beside the judge.

Where the scores are a judge's (an LLM grading generative answers) and people labelled a
uniformly random subset of questions (:mod:`evalbars.data.labels`), every reading of evalbars
has a judge-corrected sibling built here from :mod:`evalbars.stats.ppi`, the one home of the
estimator:

- per model, the PPI++ mean with its power-tuned :math:`\hat\lambda` and normal interval;
- per pair, the PPI++ mean of the per-question differences (its own :math:`\hat\lambda`),
  its two-sided p and the family adjusted;
- the covariance of the per-model estimates (:func:`evalbars.stats.ppi.ppi_covariance`), from
  which the rank reading draws its worlds.

Beside each corrected value stand the judge-only (the naive use of the judge, biased as the
judge is) and the human-only (the labelled questions alone) readings, with :math:`\hat\lambda`,
the judge-human correlation and the effective number of labels. Plain PPI
(:math:`\lambda = 1`) is never the corrected reading: with a weak judge it is wider than
human-only (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient prediction-powered
inference", arXiv:2311.01453).

The corrected readings use the questions every model answered (a pair's difference needs both
scores), and every model must be labelled on the same questions (checked when the item table is
built). Labels chosen by outcome, not uniformly at random, invalidate all of them.

Intervals and tests are the small-sample ones of :mod:`evalbars.stats.ppi` (two pseudo-labels),
cut to what the quantity can be: [0, 1] for an accuracy, [-1, 1] for a gap. With fewer than
:data:`evalbars.stats.ppi.MIN_LABELS` labelled questions the readings are shown, with the
``note`` "too few labels to decide (n < 10)", and decide nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, LEVEL
from evalbars.stats.pairwise import adjust_pvalues, difference_test
from evalbars.stats.ppi import (
    MIN_LABELS,
    PPIMeans,
    normal_interval,
    ppi_covariance,
    ppi_means,
    ppi_pair_means,
)

__all__ = [
    "READING_NAMES",
    "CORRECTED_COLUMNS",
    "CorrectedReadings",
    "corrected_readings",
    "judge_vs_corrected",
    "labels_sentence",
    "judge_vs_corrected_display",
    "corrected_pair_columns",
    "PAIRWISE_CORRECTED_COLUMNS",
    "too_few_labels_note",
    "clip_interval",
]

#: Names of the PPI readings in every table (:data:`evalbars.stats.ppi.READINGS` order).
READING_NAMES = {
    "ppi++": "judge-corrected",
    "human_only": "human-only",
    "judge_only": "judge-only",
}

#: Columns of :func:`judge_vs_corrected`.
CORRECTED_COLUMNS = [
    "scope",
    "model_a",
    "model_b",
    "reading",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "lambda_hat",
    "rho",
    "labels",
    "questions",
    "effective_labels",
    "note",
]


def too_few_labels_note(labels: int) -> str:
    """Why a judge-corrected reading decides nothing (empty when it does): fewer labelled
    questions than :data:`evalbars.stats.ppi.MIN_LABELS`, or fewer than 2 (no estimate)."""
    if labels < 2:
        return (
            f"no estimate: {labels} labelled question (a reading needs 2, and "
            f"{MIN_LABELS} to decide)"
        )
    if labels < MIN_LABELS:
        return f"too few labels to decide (n < {MIN_LABELS}): {labels} labelled questions"
    return ""


def clip_interval(low, high, scope: str = "model"):
    """An interval cut to what the quantity can be: [0, 1] for an accuracy (``scope`` model),
    [-1, 1] for a gap (pair); proportions, not points. On a few labels a normal interval
    reaches past them (0.75 on 8 labels gives 0.45 to 1.05)."""
    floor = 0.0 if scope == "model" else -1.0
    return np.clip(low, floor, 1.0), np.clip(high, floor, 1.0)


@dataclass(frozen=True, eq=False)
class CorrectedReadings:
    """The PPI readings of every model and every pair on the questions all models answered.

    Attributes
    ----------
    models : list of str
        Model names in the order of ``wide.models``.
    questions, labels : int
        Questions every model answered, and how many of them carry human labels.
    per_model : PPIMeans
        Fields of shape ``(models,)``.
    first, second : ndarray of int
        Positions of each pair's models (:func:`numpy.triu_indices` order).
    per_pair : PPIMeans
        Fields of shape ``(pairs,)``: the reading of ``models[first] - models[second]``.
    covariance : ndarray, shape (models, models)
        Covariance of the per-model PPI++ estimates.
    """

    models: list
    questions: int
    labels: int
    per_model: PPIMeans
    first: np.ndarray
    second: np.ndarray
    per_pair: PPIMeans
    covariance: np.ndarray

    @property
    def decides(self) -> bool:
        """Whether there are labels enough (:data:`evalbars.stats.ppi.MIN_LABELS`) to decide."""
        return self.labels >= MIN_LABELS

    @property
    def note(self) -> str:
        """:func:`too_few_labels_note` of these labels (empty when they decide)."""
        return too_few_labels_note(self.labels)

    def pair_matrices(
        self, reading: str = "ppi++", interval: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(diff, se)`` as K x K matrices: ``diff[a, b]`` the reading of model a minus b, as
        its interval and test take it (the centre and SE with the pseudo-labels of
        :meth:`evalbars.stats.ppi.PPIMeans.interval_estimate_and_se`), or with ``interval``
        False the point estimate and its SE."""
        k = len(self.models)
        means = self.per_pair
        estimate, se = (
            means.interval_estimate_and_se(reading) if interval else means.estimate_and_se(reading)
        )
        diff, spread = np.zeros((k, k)), np.zeros((k, k))
        diff[self.first, self.second], diff[self.second, self.first] = estimate, -estimate
        spread[self.first, self.second] = spread[self.second, self.first] = se
        return diff, spread

    def order(self) -> list:
        """Model names by corrected estimate, highest first (ties by name)."""
        estimate = self.per_model.estimate
        return [m for _, m in sorted(zip(-estimate, self.models, strict=True))]


def corrected_readings(wide: WideScores) -> CorrectedReadings | None:
    """The PPI readings of ``wide``'s models and pairs, or None when it has no human labels.

    Parameters
    ----------
    wide : WideScores
        Judge scores in ``scores``, human labels in ``human`` (NaN where unlabelled).

    Returns
    -------
    CorrectedReadings or None
        None without labels on the questions every model answered. With one labelled
        question every field but the judge-only ones is NaN; with fewer than
        :data:`evalbars.stats.ppi.MIN_LABELS` nothing is decided (``decides``).
    """
    if not wide.has_labels:
        return None
    shared = np.isfinite(wide.scores).all(axis=1)
    judge, human = wide.scores[shared], wide.human[shared]
    labels = int(np.isfinite(human).any(axis=1).sum())
    if labels < 1:
        return None
    first, second = np.triu_indices(len(wide.models), k=1)
    per_model = ppi_means(judge, human)
    return CorrectedReadings(
        models=list(wide.models),
        questions=int(shared.sum()),
        labels=labels,
        per_model=per_model,
        first=first,
        second=second,
        per_pair=ppi_pair_means(judge, human, (first, second), models=wide.models),
        covariance=ppi_covariance(judge, human, per_model.lambda_hat),
    )


def judge_vs_corrected(
    wide: WideScores, *, level: float = LEVEL, alpha: float = ALPHA, adjust: str = "holm"
) -> pd.DataFrame:
    """Judge-only, human-only and judge-corrected readings of every model and pair, side by side.

    Parameters
    ----------
    wide : WideScores
        Judge scores with human labels.
    level : float
        Level of every interval.
    alpha : float
        Level of ``significant``.
    adjust : {"holm", "bonferroni", "bh"}
        Adjustment of the pairs' p-values (one family per reading, all K(K-1)/2 pairs).

    Returns
    -------
    DataFrame
        :data:`CORRECTED_COLUMNS`: first the models (``scope`` ``model``, best corrected
        estimate first), then the pairs in that order (``model_a`` above ``model_b``); three
        rows each, ``judge-corrected``, ``human-only``, ``judge-only``. ``lambda_hat``,
        ``rho`` and ``effective_labels`` are set on the corrected rows, ``p_value`` and
        ``p_adjusted`` on the pairs' rows. Proportions, not points. Intervals and p-values are
        the small-sample ones (:meth:`evalbars.stats.ppi.PPIMeans.interval_estimate_and_se`),
        intervals cut to [0, 1] (accuracy) or [-1, 1] (gap). ``note`` says why a labelled
        reading decides nothing (:func:`too_few_labels_note`): with fewer than
        :data:`evalbars.stats.ppi.MIN_LABELS` labels ``significant`` is empty. Empty (the
        columns only) without labels. Where an SE is 0 (every labelled question shows the
        same difference and the judge adds nothing) there is no interval, and a pair's p is
        the exact one of :func:`evalbars.stats.pairwise.difference_test` on the labelled
        questions.
    """
    corrected = corrected_readings(wide)
    if corrected is None:
        return pd.DataFrame(columns=CORRECTED_COLUMNS)
    k = len(corrected.models)
    names = np.asarray(corrected.models, dtype=object)
    position = {m: i for i, m in enumerate(corrected.models)}
    ranked = np.array([position[m] for m in corrected.order()], dtype=int)
    # Pairs in corrected order (a above b); the triu pair of {a, b} holds (min, max) positions.
    upper, lower = np.triu_indices(k, k=1)
    a, b = ranked[upper], ranked[lower]
    low_position, high_position = np.minimum(a, b), np.maximum(a, b)
    index = (
        low_position * k - low_position * (low_position + 1) // 2 + high_position - low_position - 1
    )
    sign = np.where(a < b, 1.0, -1.0)
    frames = []
    for reading, name in READING_NAMES.items():
        estimate, se = corrected.per_model.estimate_and_se(reading)
        centre, spread = corrected.per_model.interval_estimate_and_se(reading)
        frames.append(
            _rows(
                "model",
                names[ranked],
                "",
                name,
                (estimate[ranked], se[ranked], centre[ranked], spread[ranked]),
                level,
                _tuning(corrected.per_model, ranked, reading, corrected),
            )
        )
    for reading, name in READING_NAMES.items():
        estimate, se = corrected.per_pair.estimate_and_se(reading)
        centre, spread = corrected.per_pair.interval_estimate_and_se(reading)
        values = (sign * estimate[index], se[index], sign * centre[index], spread[index])
        # A zero SE (every labelled question shows the same difference, and the judge adds
        # nothing): the exact rule every table uses, on the labelled questions.
        p = difference_test(values[2], values[3], corrected.per_pair.n_labelled[index])[1]
        p_adjusted = adjust_pvalues(np.nan_to_num(p, nan=1.0), adjust) if len(p) else p
        significant = pd.array(p_adjusted < alpha, dtype="boolean")
        if reading != "judge_only" and not corrected.decides:
            significant[:] = pd.NA
        tests = {"p_value": p, "p_adjusted": p_adjusted, "significant": significant}
        frames.append(
            _rows(
                "pair",
                names[a],
                names[b],
                name,
                values,
                level,
                _tuning(corrected.per_pair, index, reading, corrected) | tests,
            )
        )
    return pd.concat(frames, ignore_index=True)[CORRECTED_COLUMNS]


#: Columns :func:`corrected_pair_columns` adds to the pairwise table.
PAIRWISE_CORRECTED_COLUMNS = [
    "diff_corrected",
    "se_corrected",
    "p_corrected",
    "p_corrected_holm",
    "significant_corrected",
]


def corrected_pair_columns(
    wide: WideScores, model_a, model_b, alpha: float = ALPHA
) -> pd.DataFrame | None:
    """The judge-corrected reading of the pairs ``(model_a[i], model_b[i])``, for the pairwise
    table: ``diff_corrected`` (a minus b, PPI++), ``se_corrected``, the two-sided
    ``p_corrected`` (of the small-sample centre and SE), Holm over the given pairs and
    ``significant_corrected`` at ``alpha`` (empty with fewer than
    :data:`evalbars.stats.ppi.MIN_LABELS` labels: nothing is decided); None without labels."""
    corrected = corrected_readings(wide)
    if corrected is None:
        return None
    index = pd.Index(corrected.models)
    a, b = index.get_indexer(np.asarray(model_a)), index.get_indexer(np.asarray(model_b))
    centre, spread = corrected.pair_matrices()
    k = len(corrected.models)
    estimate = np.zeros((k, k))
    first, second = corrected.first, corrected.second
    estimate[first, second] = corrected.per_pair.estimate
    estimate[second, first] = -corrected.per_pair.estimate
    p = difference_test(centre[a, b], spread[a, b], corrected.labels)[1]
    holm = adjust_pvalues(np.nan_to_num(p, nan=1.0), "holm") if len(p) else p
    significant = pd.array(holm < alpha, dtype="boolean")
    if not corrected.decides:
        significant[:] = pd.NA
    return pd.DataFrame(
        {
            "diff_corrected": estimate[a, b],
            "se_corrected": spread[a, b],
            "p_corrected": p,
            "p_corrected_holm": holm,
            "significant_corrected": significant,
        }
    )


def _rows(scope, model_a, model_b, reading, values, level, extra) -> pd.DataFrame:
    """One reading's rows of :func:`judge_vs_corrected`; ``values`` are the estimate, its SE
    and the interval's centre and SE (no interval where that SE is 0: a zero-width interval
    is no evidence of precision), the interval cut by :func:`clip_interval`."""
    estimate, se, centre, spread = values
    low, high = clip_interval(*normal_interval(centre, spread, level), scope)
    low, high = np.where(spread > 0, low, np.nan), np.where(spread > 0, high, np.nan)
    frame = pd.DataFrame(
        {
            "scope": scope,
            "model_a": model_a,
            "model_b": model_b,
            "reading": reading,
            "estimate": estimate,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "p_value": np.nan,
            "p_adjusted": np.nan,
            "significant": pd.NA,
        }
        | extra
    )
    frame["significant"] = frame["significant"].astype("boolean")
    return frame


def _tuning(means: PPIMeans, index, reading: str, corrected: CorrectedReadings) -> dict:
    """Counts on every row; lambda-hat, rho and the effective labels on the corrected rows."""
    labels = means.n_labelled[index].astype(int) if reading != "judge_only" else 0
    note = corrected.note if reading != "judge_only" else ""
    counts = {"labels": labels, "questions": corrected.questions, "note": note}
    if reading != "ppi++":
        return counts | {"lambda_hat": np.nan, "rho": np.nan, "effective_labels": np.nan}
    return counts | {
        "lambda_hat": means.lambda_hat[index],
        "rho": means.rho[index],
        "effective_labels": means.n_effective[index],
    }


def labels_sentence(table: pd.DataFrame) -> str:
    """What the first screen says of judge scores (from :func:`judge_vs_corrected`'s table): how
    many labels correct them, how, and under which assumption; empty without labels."""
    rows = table[(table["reading"] == READING_NAMES["ppi++"]) & (table["scope"] == "model")]
    if rows.empty:
        return ""
    lam = rows["lambda_hat"]
    labels, questions = int(rows["labels"].max()), int(rows["questions"].max())
    note = str(rows["note"].iloc[0]) if "note" in rows else ""
    if note:
        return (
            f"The scores are an LLM judge's, with {labels:,} human label"
            f"{'s' if labels != 1 else ''} of {questions:,} questions: {note}. The "
            "judge-corrected readings are shown and decide nothing; the verdicts are the "
            "judge's own scores'."
        )
    return (
        f"The scores are an LLM judge's, corrected with {labels:,} human "
        f"labels of {questions:,} questions (PPI++, lambda-hat "
        f"{lam.min():.2f} to {lam.max():.2f}); the judge-corrected readings assume the labelled "
        "questions were chosen uniformly at random."
    )


def judge_vs_corrected_display(table: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per model: judge-only, human-only and judge-corrected accuracy with intervals
    (points), lambda-hat, rho and the labels the correction is worth; then one row per reading
    counting the pairs it separates after the adjustment."""
    models = table[table["scope"] == "model"]
    by = {name: rows.set_index("model_a") for name, rows in models.groupby("reading", sort=False)}
    corrected = by[READING_NAMES["ppi++"]]

    def cell(name):
        rows = by[name]
        return [
            _value_cell(e, lo, hi, note)
            for e, lo, hi, note in zip(
                rows["estimate"], rows["ci_low"], rows["ci_high"], _notes(rows), strict=True
            )
        ]

    def number(column, form):
        return [
            form.format(v) if np.isfinite(v) else (note or "not defined (a constant score)")
            for v, note in zip(corrected[column], _notes(corrected), strict=True)
        ]

    shown = pd.DataFrame({"model": corrected.index})
    for name in (READING_NAMES["judge_only"], READING_NAMES["human_only"], READING_NAMES["ppi++"]):
        shown[name] = pd.Series(cell(name), index=by[name].index).reindex(corrected.index).values
    shown["lambda-hat"] = number("lambda_hat", "{:.2f}")
    shown["judge-human r"] = number("rho", "{:.2f}")
    shown["worth (labels)"] = number("effective_labels", "{:,.0f}")
    pairs = table[table["scope"] == "pair"]
    if len(pairs):
        row = {"model": f"pairs separated (of {len(pairs) // len(READING_NAMES):,})"}
        for name, rows in pairs.groupby("reading", sort=False):
            note = _notes(rows)[0]
            row[name] = f"{int(rows['significant'].sum()):,}" if not note else note
        shown = pd.concat([shown, pd.DataFrame([row])], ignore_index=True).fillna("")
    return shown


def _notes(rows: pd.DataFrame) -> list:
    """Each row's note (empty where the reading decides; tables written before the note)."""
    if "note" not in rows:
        return [""] * len(rows)
    return [str(n) if isinstance(n, str) else "" for n in rows["note"]]


def _value_cell(estimate, low, high, note) -> str:
    """A reading in points with its interval, or in words why there is none."""
    if not np.isfinite(estimate):
        return note or "no estimate"
    shown = f"{100 * estimate:.1f}"
    shown += (
        f" ({100 * low:.1f} to {100 * high:.1f})" if np.isfinite(low) else " (no interval: SE 0)"
    )
    return f"{shown}; {note}" if note else shown
