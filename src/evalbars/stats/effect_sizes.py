"""Effect sizes beside p: how large a paired difference is, not only how sure.

Two models compared on the same questions disagree on ``n10 + n01`` of them: ``n10`` where only
the first is right, ``n01`` where only the second is. McNemar's test asks whether
:math:`n_{10}` and :math:`n_{01}` differ; their ratio is the effect it tests.

- :func:`discordant_odds_ratio`: :math:`\\widehat{OR} = n_{10}/n_{01}`, the conditional odds
  ratio of a paired 2x2 table, with its exact interval: given the discordant questions,
  :math:`n_{10} \\sim \\mathrm{Bin}(n_{10} + n_{01}, \\pi)` with :math:`OR = \\pi/(1 - \\pi)`, so
  the Clopper-Pearson interval of :math:`\\pi` maps to :math:`[L/(1 - L), U/(1 - U)]` (Agresti
  2013, "Categorical Data Analysis", section 11.1.4; the interval R's ``exact2x2::mcnemar.exact``
  reports). One of the counts 0 gives an estimate of 0 or infinity, and a finite bound still.
- :func:`cohens_h`: :math:`h = 2\\arcsin\\sqrt{p_a} - 2\\arcsin\\sqrt{p_b}` for the two
  accuracies (Cohen 1988, "Statistical Power Analysis for the Behavioral Sciences", chapter 6):
  0.2, 0.5 and 0.8 are his small, medium and large.

Both are vectorised over any shape of counts or accuracies. The odds ratio needs a 2x2 table,
one 0/1 score per (question, model): evalbars reports it only where
:func:`evalbars.stats.pairwise.exact_readings_reasons` finds one (Cohen's h of two accuracies
holds for cell means of any number of samples).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from evalbars.defaults import LEVEL
from evalbars.stats.coverage import clopper_pearson_interval

__all__ = ["OddsRatio", "discordant_odds_ratio", "cohens_h"]


class OddsRatio(NamedTuple):
    """An odds ratio with its interval (arrays of the counts' shape)."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


def discordant_odds_ratio(n10, n01, level: float = LEVEL) -> OddsRatio:
    """The odds ratio ``n10 / n01`` of the discordant questions and its exact interval.

    NaN where no question is discordant (the ratio says nothing).

    Examples
    --------
    Agresti's presidential-approval table (n10 = 150, n01 = 86); R's binom.test(150, 236)
    interval mapped by p / (1 - p) gives 1.3292283 and 2.3009791:

    >>> ratio = discordant_odds_ratio(150, 86)
    >>> round(float(ratio.estimate), 4), round(float(ratio.low), 4), round(float(ratio.high), 4)
    (1.7442, 1.3292, 2.301)
    """
    n10 = np.asarray(n10, dtype=float)
    n01 = np.asarray(n01, dtype=float)
    total = n10 + n01
    low, high = clopper_pearson_interval(n10, total, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(total > 0, n10 / n01, np.nan)
        low_or = np.where(total > 0, low / (1 - low), np.nan)
        high_or = np.where(total > 0, high / (1 - high), np.nan)
    return OddsRatio(estimate[()], low_or[()], high_or[()])


def cohens_h(accuracy_a, accuracy_b):
    """Cohen's h of two accuracies: :math:`2\\arcsin\\sqrt{p_a} - 2\\arcsin\\sqrt{p_b}`.

    >>> round(float(cohens_h(0.5, 0.4)), 4)
    0.2014
    """
    a = np.asarray(accuracy_a, dtype=float)
    b = np.asarray(accuracy_b, dtype=float)
    return (2 * np.arcsin(np.sqrt(a)) - 2 * np.arcsin(np.sqrt(b)))[()]
