"""One model's mean score on clustered questions: naive, clustered and mixed-model SEs.

How much ignoring clusters of related questions understates the standard error,
and what it does to interval coverage (the paper's Appendix A clustering settings).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.intervals import clustered_se, z_for_level

__all__ = ["balanced_random_intercept_se", "simulate_clustered"]


def balanced_random_intercept_se(scores) -> tuple[np.ndarray, np.ndarray]:
    """SE of the mean under the balanced random-intercept model, REML, in closed form.

    Parameters
    ----------
    scores : array_like, shape (..., C, m)
        C clusters of m questions each (balanced).

    Returns
    -------
    se : ndarray
        SE of :math:`\\hat\\mu` with the leading shape.
    boundary : ndarray of bool
        True where the REML cluster variance is 0 (MSB < MSW).

    Notes
    -----
    For :math:`s_{ic} = \\mu + u_c + e_{ic}`, :math:`u_c \\sim N(0, \\tau^2)`,
    :math:`e_{ic} \\sim N(0, \\sigma^2)`, balanced, the GLS estimate of
    :math:`\\mu` is the grand mean with variance :math:`(\\sigma^2 + m\\tau^2)/(Cm)`.
    REML gives the ANOVA estimates :math:`\\hat\\sigma^2 = MSW`,
    :math:`\\hat\\tau^2 = (MSB - MSW)/m` when :math:`MSB \\ge MSW`, so
    :math:`SE^2 = MSB/(Cm)`; otherwise :math:`\\hat\\tau^2 = 0`,
    :math:`\\hat\\sigma^2 = SS_{total}/(n-1)` and SE is the naive (ddof=1) SE.
    In the interior this is Miller's clustered SE times :math:`\\sqrt{C/(C-1)}`
    (the CR1 convention), the matching stated in the paper's section 3.

    References
    ----------
    .. [1] Searle, S. R., Casella, G., McCulloch, C. E. (1992). Variance
       Components. Wiley, sections 3.5-3.7 (balanced one-way classification) and
       6.7 (REML estimates for balanced data).
    """
    x = np.asarray(scores, dtype=float)
    c, m = x.shape[-2:]
    n = c * m
    grand = x.mean(axis=(-2, -1))
    cluster_means = x.mean(axis=-1)
    ss_between = m * ((cluster_means - grand[..., None]) ** 2).sum(axis=-1)
    ss_within = ((x - cluster_means[..., None]) ** 2).sum(axis=(-2, -1))
    ms_between = ss_between / (c - 1)
    ms_within = ss_within / (c * (m - 1))
    boundary = ms_between < ms_within
    variance = np.where(boundary, (ss_between + ss_within) / (n - 1) / n, ms_between / n)
    return np.sqrt(variance), boundary


def simulate_clustered(
    cluster_size: int,
    icc: float,
    *,
    questions: int = 1200,
    replications: int = 2000,
    mean_accuracy: float = 0.6,
    level: float = LEVEL,
    seed: int = 0,
) -> pd.DataFrame:
    """Naive, clustered (Miller) and mixed-model SEs of one model's mean on clustered questions.

    Parameters
    ----------
    cluster_size : int
        Questions per cluster, m (must divide ``questions``).
    icc : float
        Within-cluster correlation of two questions' 0/1 scores, in (0, 1).
    questions, replications : int
        Questions per replication and replications.
    mean_accuracy : float
        True mean score :math:`\\mu` (the target of every interval).
    level : float
        Level of the intervals whose coverage is reported.
    seed : int
        Root seed; the stream is :func:`setting_rng` ``(seed, "clustered",
        cluster_size, icc, questions, mean_accuracy)``.

    Returns
    -------
    DataFrame
        One row per estimator (``naive``, ``clustered_miller``, ``mixed_model``) with
        ``cluster_size, icc, clusters, questions, replications, mean_accuracy,
        design_effect, analytic_se_ratio, true_se, estimator, se_mean,
        se_ratio_to_naive, se_ratio_to_naive_se, coverage, coverage_se,
        boundary_share``.

    Notes
    -----
    Data: cluster c has a pass rate :math:`\\pi_c \\sim
    \\mathrm{Beta}(\\mu\\kappa, (1-\\mu)\\kappa)` with :math:`\\kappa = 1/\\mathrm{icc} - 1`,
    and its m questions are Bernoulli(:math:`\\pi_c`), so two questions of a
    cluster correlate at :math:`1/(\\kappa + 1) = \\mathrm{icc}`. The true SE of
    the mean is :math:`\\sqrt{\\mu(1-\\mu)\\,\\mathrm{DEFF}/n}` with the design
    effect :math:`\\mathrm{DEFF} = 1 + (m - 1)\\,\\mathrm{icc}` (Kish 1965), so
    the clustered-to-naive SE ratio is about :math:`\\sqrt{\\mathrm{DEFF}}`.

    Estimators: ``naive`` :math:`\\mathrm{sd}(s, \\mathrm{ddof}=1)/\\sqrt n`;
    ``clustered_miller`` :func:`evalbars.stats.intervals.clustered_se` (Miller 2024,
    Eq. 4, no C/(C-1) factor); ``mixed_model``
    :func:`balanced_random_intercept_se`. Coverage is the share of replications
    whose interval :math:`\\bar s \\pm z\\,SE` contains :math:`\\mu`;
    ``se_ratio_to_naive`` is the mean over replications of SE / naive SE.
    """
    if questions % cluster_size:
        raise ValueError(f"cluster_size {cluster_size} must divide questions {questions}")
    if not 0 < icc < 1:
        raise ValueError(f"icc must be in (0, 1), got {icc!r}")
    clusters = questions // cluster_size
    concentration = 1 / icc - 1
    rng = setting_rng(seed, "clustered", cluster_size, icc, questions, mean_accuracy)
    pass_rates = rng.beta(
        mean_accuracy * concentration,
        (1 - mean_accuracy) * concentration,
        size=(replications, clusters, 1),
    )
    nested = rng.random((replications, clusters, cluster_size), dtype=np.float32) < pass_rates
    scores = nested.reshape(replications, questions).astype(float)
    mean = scores.mean(axis=-1)
    se = {
        "naive": scores.std(axis=-1, ddof=1) / np.sqrt(questions),
        "clustered_miller": clustered_se(scores, np.repeat(np.arange(clusters), cluster_size)),
    }
    se["mixed_model"], boundary = balanced_random_intercept_se(nested)
    z = z_for_level(level)
    design_effect = 1 + (cluster_size - 1) * icc
    rows = []
    for estimator, values in se.items():
        ratio = values / se["naive"]
        coverage = share_and_se(np.abs(mean - mean_accuracy) <= z * values)
        rows.append(
            {
                "cluster_size": int(cluster_size),
                "icc": float(icc),
                "clusters": int(clusters),
                "questions": int(questions),
                "replications": int(replications),
                "mean_accuracy": float(mean_accuracy),
                "design_effect": design_effect,
                "analytic_se_ratio": float(np.sqrt(design_effect)),
                "true_se": float(
                    np.sqrt(mean_accuracy * (1 - mean_accuracy) * design_effect / questions)
                ),
                "estimator": estimator,
                "se_mean": float(values.mean()),
                "se_ratio_to_naive": float(ratio.mean()),
                "se_ratio_to_naive_se": float(ratio.std(ddof=1) / np.sqrt(replications)),
                "coverage": coverage[0],
                "coverage_se": coverage[1],
                "boundary_share": float(boundary.mean()) if estimator == "mixed_model" else np.nan,
            }
        )
    return pd.DataFrame(rows)
