"""How precise a score is, and how many questions it takes to resolve a gap (closed forms).

Interval half-widths at a given score and question count; questions per model
needed for a gap to span a given number of standard deviations, unpaired
(independent question sets) and paired (shared questions, at a disagreement
rate); and the disagreement rates of the analysed models' pairs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.stats.intervals import wilson_interval
from evalbars.stats.pairwise import disagreement_rates
from evalbars.stats.planning.sample_size import questions_for_effect

__all__ = [
    "wilson_halfwidth",
    "precision_table",
    "questions_to_resolve_unpaired",
    "questions_to_resolve_paired",
    "questions_needed_table",
    "PrecisionTables",
    "precision_tables",
]


def wilson_halfwidth(rate, questions, level: float = LEVEL):
    """Half-width :math:`(U - L)/2` of the Wilson interval at score ``rate`` out of ``questions``.

    Uses :func:`evalbars.stats.intervals.wilson_interval` with the fractional count
    ``rate * questions``; at 80 % and 95 % it is 7.8, 5.5, 2.5 and 1.1 points for
    100, 200, 1,000 and 5,000 questions (the leaderboard-luck explainer).
    """
    questions = np.asarray(questions, dtype=float)
    low, high = wilson_interval(np.asarray(rate, dtype=float) * questions, questions, level)
    return (high - low) / 2


def precision_table(
    questions=(100, 200, 1000, 5000), rate: float = 0.8, level: float = LEVEL
) -> pd.DataFrame:
    """Wilson interval and half-width of an observed score ``rate`` at several question counts.

    Returns ``questions, rate, level, ci_low, ci_high, half_width_points``.
    """
    n = np.asarray(questions, dtype=float)
    low, high = wilson_interval(rate * n, n, level)
    return pd.DataFrame(
        {
            "questions": n.astype(int),
            "rate": float(rate),
            "level": float(level),
            "ci_low": low,
            "ci_high": high,
            "half_width_points": 100 * (high - low) / 2,
        }
    )


def questions_to_resolve_unpaired(gap, rate: float = 0.8, sds: float = 2.0):
    """Questions per model for an unpaired gap to span ``sds`` standard deviations.

    With both models near ``rate`` and independent question sets, the score
    difference has SD :math:`\\sqrt{2 p (1-p) / N}`; requiring
    :math:`\\text{gap} \\ge k \\cdot \\mathrm{SD}` gives

    .. math:: N = \\frac{2 k^2 p (1 - p)}{\\text{gap}^2},

    which at p = 0.8, k = 2 is :math:`1.28/\\text{gap}^2`: 128, 512, 3,200 and 12,800
    questions for gaps of 10, 5, 2 and 1 points (the explainer rounds them
    to 130, 500, 3,200, 12,800). ``gap`` is a proportion (0.02 = 2 points).
    """
    gap = np.asarray(gap, dtype=float)
    return 2 * sds**2 * rate * (1 - rate) / gap**2


def questions_to_resolve_paired(gap, disagreement, sds: float = 2.0):
    """Shared questions for a paired gap to span ``sds`` standard deviations.

    On shared questions the per-question difference :math:`d_i \\in \\{-1, 0, 1\\}`
    is nonzero on the share :math:`\\delta` of questions where the two models
    disagree, with :math:`P(d = \\pm 1) = (\\delta \\pm \\text{gap})/2`, so
    :math:`\\mathrm{Var}(d) = \\delta - \\text{gap}^2` and

    .. math:: N = \\frac{k^2 (\\delta - \\text{gap}^2)}{\\text{gap}^2}.

    Two independent models at 80 % disagree on :math:`\\delta = 2 \\cdot 0.8 \\cdot 0.2 = 0.32`
    of questions, and then this is :func:`questions_to_resolve_unpaired` minus
    :math:`k^2`; models that agree more need fewer questions. A gap larger than
    the disagreement rate is impossible (NaN).

    This is :func:`evalbars.stats.planning.sample_size.questions_for_effect` with effect ``gap``, variance
    :math:`\\delta - \\text{gap}^2` and multiplier ``z = sds``.

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 4
       (paired differences).
    """
    gap = np.asarray(gap, dtype=float)
    disagreement = np.asarray(disagreement, dtype=float)
    needed = questions_for_effect(gap, disagreement - gap**2, z=sds)
    return np.where(gap <= disagreement, needed, np.nan)


def _whole_questions(values) -> pd.Series:
    """A question count rounded up to a whole question (float noise such as 128.00000000001
    ignored)."""
    return pd.Series(np.ceil(np.round(np.asarray(values, dtype=float), 6))).astype("Int64")


def questions_needed_table(
    gaps=(0.10, 0.05, 0.02, 0.01),
    rate: float = 0.8,
    sds: float = 2.0,
    disagreements: dict | None = None,
) -> pd.DataFrame:
    """Questions needed to resolve each gap, unpaired and paired.

    ``disagreements`` maps a label (e.g. ``"data: median of 15 pairs"``) to a
    disagreement rate. Counts are rounded up to whole questions (missing where a
    gap exceeds the disagreement rate). Returns ``gap_points, design, disagreement, source, rate,
    sds, questions_per_model`` with ``design`` ``"unpaired"`` (both models near
    ``rate``) or ``"paired"``.
    """
    gaps = np.asarray(gaps, dtype=float)
    frames = [
        pd.DataFrame(
            {
                "gap_points": 100 * gaps,
                "design": "unpaired",
                "disagreement": np.nan,
                "source": f"independent questions, both near {rate:.0%}",
                "rate": float(rate),
                "sds": float(sds),
                "questions_per_model": _whole_questions(
                    questions_to_resolve_unpaired(gaps, rate, sds)
                ),
            }
        )
    ]
    for source, delta in (disagreements or {}).items():
        frames.append(
            pd.DataFrame(
                {
                    "gap_points": 100 * gaps,
                    "design": "paired",
                    "disagreement": float(delta),
                    "source": source,
                    "rate": float(rate),
                    "sds": float(sds),
                    "questions_per_model": _whole_questions(
                        questions_to_resolve_paired(gaps, delta, sds)
                    ),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


class PrecisionTables(NamedTuple):
    """Output of :func:`precision_tables`."""

    precision: pd.DataFrame
    questions_needed: pd.DataFrame


def precision_tables(
    *,
    questions=(100, 200, 1000, 5000),
    gaps=(0.10, 0.05, 0.02, 0.01),
    rate: float = 0.8,
    sds: float = 2.0,
    level: float = LEVEL,
    disagreements=(0.15, 0.30),
    items: pd.DataFrame | None = None,
) -> PrecisionTables:
    """Both precision tables; with ``items``, also the median disagreement of the real models'
    pairs.

    ``disagreements`` are illustrative rates (labelled ``"illustrative"``); when
    an item table is given, the median of :func:`disagreement_rates` over all
    pairs is added (labelled ``"data: median of N pairs"``).
    """
    labelled = {f"illustrative, {d:.0%} disagree": float(d) for d in disagreements}
    if items is not None:
        rates = disagreement_rates(items)["disagreement"]
        labelled[f"data: median of {rates.size} pairs"] = float(rates.median())
    return PrecisionTables(
        precision_table(questions, rate, level),
        questions_needed_table(gaps, rate, sds, labelled),
    )
