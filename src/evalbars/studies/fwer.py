"""Family-wise error and power of pairwise and omnibus tests on shared questions.

The paper's section 5.1 simulation (:mod:`evalbars.readings.paper`), extending Miller's
(2024) Galleon/Dreadnought example to K models on n shared questions whose
conditional mean scores correlate at rho across models: how often uncorrected,
Bonferroni and Holm pairwise tests and the omnibus RM-ANOVA and Friedman tests
make a false claim under the null, and how often they find a true gap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

from evalbars.defaults import ALPHA
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats import omnibus
from evalbars.stats.pairwise import adjust_pvalues, paired_z_tests

__all__ = [
    "FWER_METHODS",
    "shared_component_weight",
    "draw_conditional_means",
    "draw_shared_scores",
    "studentized_range_fwer",
    "independent_tests_fwer",
    "simulate_fwer",
]

#: The procedures compared, pairwise first, then the omnibus tests.
FWER_METHODS = ("uncorrected", "bonferroni", "holm", "rm_anova", "friedman")


def shared_component_weight(rho: float) -> float:
    """Weight w of the shared component giving conditional-mean correlation ``rho``.

    With :math:`x_{ik} = w A_i + (1 - w) B_{ik}` and A, B i.i.d.,
    :math:`\\mathrm{Corr}(x_{ik}, x_{il}) = w^2 / (w^2 + (1-w)^2) = \\rho` for
    :math:`w = \\sqrt\\rho / (\\sqrt\\rho + \\sqrt{1-\\rho})` (w = 1/2 at rho = 0.5).
    """
    if not 0 <= rho <= 1:
        raise ValueError(f"rho must be in [0, 1], got {rho!r}")
    return float(np.sqrt(rho) / (np.sqrt(rho) + np.sqrt(1 - rho)))


def _beta_parameters(mean_accuracy: float, concentration: float) -> tuple[float, float]:
    if not 0 < mean_accuracy < 1 or concentration <= 0:
        raise ValueError("need 0 < mean_accuracy < 1 and concentration > 0")
    return mean_accuracy * concentration, (1 - mean_accuracy) * concentration


def _headroom_shift(models: int, gap: float, mean_accuracy: float) -> np.ndarray:
    """Per-model c_k of the affine shift x -> c + (1 - c) x raising model 0's mean by ``gap``."""
    if gap < 0 or mean_accuracy + gap > 1:
        raise ValueError(f"need 0 <= gap <= 1 - mean_accuracy, got gap {gap!r}")
    shift = np.zeros(models)
    shift[0] = gap / (1 - mean_accuracy)
    return shift


def draw_conditional_means(
    rng: np.random.Generator,
    size,
    models: int,
    rho: float,
    *,
    gap: float = 0.0,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
) -> np.ndarray:
    """Question-level conditional mean scores :math:`x_{ik}`, shape ``(*size, models)``.

    :math:`x_{ik} = c_k + (1 - c_k)\\,[w A_i + (1 - w) B_{ik}]` with :math:`A_i`,
    :math:`B_{ik}` i.i.d. Beta(:math:`\\mu\\kappa, (1-\\mu)\\kappa`) (mean
    ``mean_accuracy`` :math:`\\mu`, ``concentration`` :math:`\\kappa`), w from
    :func:`shared_component_weight` and :math:`c_0 = \\text{gap}/(1-\\mu)`,
    :math:`c_{k>0} = 0`. Every :math:`x` lies in [0, 1], model k's mean is
    :math:`\\mu` (model 0's :math:`\\mu + \\text{gap}`), and any two models'
    conditional means have correlation exactly ``rho`` (the shift is affine).
    """
    size = tuple(np.atleast_1d(size))
    a, b = _beta_parameters(mean_accuracy, concentration)
    w = shared_component_weight(rho)
    shared = rng.beta(a, b, size=(*size, 1))
    own = rng.beta(a, b, size=(*size, models))
    shift = _headroom_shift(models, gap, mean_accuracy)
    return shift + (1 - shift) * (w * shared + (1 - w) * own)


def draw_shared_scores(
    rng: np.random.Generator,
    replications: int,
    questions: int,
    models: int,
    rho: float,
    *,
    gap: float = 0.0,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
) -> np.ndarray:
    """0/1 scores of K models on the same questions, shape ``(replications, questions, models)``.

    The data-generating process of the paper's section 5.1 in Miller's
    conditional-mean framing: question i has a conditional mean score
    :math:`x_{ik}` for model k (:func:`draw_conditional_means`, pairwise
    correlation ``rho`` across models), and the observed score is
    :math:`s_{ik} \\sim \\mathrm{Bernoulli}(x_{ik})`, independently given the
    :math:`x`.

    Because each :math:`B_{ik}` enters one Bernoulli draw only, it is integrated
    out exactly: given :math:`A_i`, the :math:`s_{ik}` are independent
    Bernoulli(:math:`c_k + (1-c_k)[w A_i + (1-w)\\mu]`). Only :math:`A_i` is
    drawn, which halves the work and gives the same joint distribution of scores.
    The correlation of two models' scores on a question is then
    :math:`w^2 / (\\kappa + 1)` under the null (0.125 at rho = 0.5, kappa = 1).
    """
    a, b = _beta_parameters(mean_accuracy, concentration)
    w = shared_component_weight(rho)
    shift = _headroom_shift(models, gap, mean_accuracy)
    shared = rng.beta(a, b, size=(replications, questions, 1))
    success = shift + (1 - shift) * (w * shared + (1 - w) * mean_accuracy)
    # float32 uniforms: the comparison needs no more resolution and halves memory.
    return rng.random((replications, questions, models), dtype=np.float32) < success


def studentized_range_fwer(models, alpha: float = ALPHA):
    """Exact FWER of uncorrected all-pairs z-tests for K independent equal-precision estimates.

    Under the global null the K estimates are i.i.d. normal, and some pair is
    declared different when their range exceeds :math:`z_{1-\\alpha/2}\\sqrt2`
    standard errors, so the FWER is the upper tail of the studentized range with
    infinite degrees of freedom (Tukey 1953):

    .. math::

        \\mathrm{FWER}_K = P(Q_{K,\\infty} > z_{1-\\alpha/2}\\sqrt2)
        = 1 - K \\int \\varphi(x)\\,[\\Phi(x + w) - \\Phi(x)]^{K-1}\\,dx,
        \\qquad w = z_{1-\\alpha/2}\\sqrt2,

    evaluated by :data:`scipy.stats.studentized_range`. At alpha = 0.05 it is
    0.1223, 0.2033, 0.2858, 0.3656, 0.5093, 0.6274, 0.7208 for K = 3, 4, 5, 6, 8,
    10, 12. With ``alpha`` divided by the K(K-1)/2 tests it is the exact FWER of
    Bonferroni (and of Holm, whose first step is Bonferroni's, under the global
    null): 0.0415 for K = 4. ``models`` and ``alpha`` broadcast. It also holds for
    paired tests on shared questions when the models are exchangeable: the
    shared part of their means cancels in every difference.

    References
    ----------
    .. [1] Hochberg, Y., Tamhane, A. C. (1987). Multiple Comparison Procedures.
       Wiley, section 3.2 (range distribution).

    Examples
    --------
    >>> round(float(studentized_range_fwer(4)), 4)
    0.2033
    """
    width = special.ndtri(1 - np.asarray(alpha, dtype=float) / 2) * np.sqrt(2)
    return stats.studentized_range.sf(width, np.asarray(models, dtype=float), np.inf)


def independent_tests_fwer(models, alpha: float = ALPHA):
    """The independence benchmark :math:`1 - (1-\\alpha)^{K(K-1)/2}` (0.265 for K = 4)."""
    k = np.asarray(models, dtype=float)
    return 1 - (1 - alpha) ** (k * (k - 1) / 2)


def simulate_fwer(
    models: int,
    *,
    questions: int = 400,
    rho: float = 0.5,
    gap: float = 0.0,
    replications: int = 2000,
    alpha: float = ALPHA,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Family-wise error and power of pairwise and omnibus tests on shared questions.

    Parameters
    ----------
    models : int
        K >= 2 models.
    questions : int
        Shared questions per replication.
    rho : float
        Pairwise correlation of the models' conditional mean scores.
    gap : float
        True accuracy gap of model 0 over the others (0: the global null).
    replications, alpha : int, float
        Monte Carlo replications and significance level.
    mean_accuracy, concentration : float
        Mean and concentration of the Beta law of the conditional means.
    seed : int
        Root seed; the stream is :func:`setting_rng` ``(seed, "fwer", models,
        questions, rho, gap, mean_accuracy, concentration)``.

    Returns
    -------
    DataFrame
        One row per method (``uncorrected``, ``bonferroni``, ``holm``, ``rm_anova``,
        ``friedman``) with ``models, questions, rho, gap, replications, alpha,
        method, family, tests, fwer, fwer_se, power_any, power_any_se, power_all,
        power_all_se, studentized_range_fwer, studentized_range_fwer_bonferroni,
        independent_tests_fwer`` (the last three: exact values for K independent
        equal-precision estimates, :func:`studentized_range_fwer`).

    Notes
    -----
    Data from :func:`draw_shared_scores`. Pairwise methods run the K(K-1)/2
    paired z-tests of :func:`paired_z_tests` and reject where ``p < alpha``, after
    Bonferroni or Holm adjustment for those rows. ``rm_anova`` is the
    repeated-measures F test (question as subject, sphericity assumed, which the
    exchangeable design satisfies) of :func:`evalbars.stats.omnibus.rm_anova`;
    ``friedman`` is the tie-corrected Friedman test, computed as Cochran's Q
    (:func:`evalbars.stats.omnibus.cochran_q`), to which it is identical on 0/1 scores.

    - ``fwer``: share of replications with at least one false claim: a rejected
      pair of equally good models, or a rejected pair in the wrong direction. For
      omnibus tests it is the rejection rate under the null (NaN when gap > 0).
    - ``power_any`` / ``power_all``: share of replications in which at least one /
      every pair (0, k) is rejected in the right direction (gap > 0 only); for
      omnibus tests ``power_any`` is the rejection rate.
    - ``*_se``: Monte Carlo SE :math:`\\sqrt{p(1-p)/R}`.
    """
    if models < 2:
        raise ValueError(f"need at least 2 models, got {models}")
    rng = setting_rng(seed, "fwer", models, questions, rho, gap, mean_accuracy, concentration)
    scores = draw_shared_scores(
        rng,
        replications,
        questions,
        models,
        rho,
        gap=gap,
        mean_accuracy=mean_accuracy,
        concentration=concentration,
    )
    z, p = paired_z_tests(scores)
    first, _ = np.triu_indices(models, k=1)
    true_gap = (first == 0) & (gap > 0)
    pvalues = {
        "uncorrected": p,
        "bonferroni": adjust_pvalues(p, "bonferroni"),
        "holm": adjust_pvalues(p, "holm"),
    }
    numeric = scores.astype(np.float64)
    omnibus_p = {
        "rm_anova": omnibus.rm_anova(numeric).p,
        "friedman": omnibus.cochran_q(numeric).p,
    }
    del numeric
    setting = {
        "models": int(models),
        "questions": int(questions),
        "rho": float(rho),
        "gap": float(gap),
        "replications": int(replications),
        "alpha": float(alpha),
    }
    # The exact benchmarks depend on the setting only: computed once, not per method.
    exact = {
        "studentized_range_fwer": float(studentized_range_fwer(models, alpha)),
        "studentized_range_fwer_bonferroni": float(
            studentized_range_fwer(models, alpha / (models * (models - 1) / 2))
        ),
        "independent_tests_fwer": float(independent_tests_fwer(models, alpha)),
    }
    nan_pair = (np.nan, np.nan)
    rows = []
    for method in FWER_METHODS:
        row = setting | {"method": method}
        if method in pvalues:
            reject = pvalues[method] < alpha
            false_claim = reject & (~true_gap | (z < 0))
            found = reject & true_gap & (z > 0)
            fwer = share_and_se(false_claim.any(axis=-1))
            power_any = share_and_se(found.any(axis=-1)) if gap > 0 else nan_pair
            power_all = share_and_se((found | ~true_gap).all(axis=-1)) if gap > 0 else nan_pair
            row |= {"family": "pairwise", "tests": int(p.shape[-1])}
        else:
            reject = omnibus_p[method] < alpha
            fwer = share_and_se(reject) if gap == 0 else nan_pair
            power_any = share_and_se(reject) if gap > 0 else nan_pair
            power_all = nan_pair
            row |= {"family": "omnibus", "tests": 1}
        row |= {
            "fwer": fwer[0],
            "fwer_se": fwer[1],
            "power_any": power_any[0],
            "power_any_se": power_any[1],
            "power_all": power_all[0],
            "power_all_se": power_all[1],
        } | exact
        rows.append(row)
    return pd.DataFrame(rows)
