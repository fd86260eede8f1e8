"""Type-I error of the release gate's clustered reading under a clustered null, by cluster count.

Two models answer the same questions in G categories; a model x category effect makes the
candidate better in some categories and worse in others, averaging zero. The gate tests
:math:`H_0: \\Delta = 0` two-sided; this study counts how often each candidate test rejects it.
CR0 with a normal quantile (Miller 2024, Eq. 4) is far above the nominal level with few
categories. CR1 with :math:`t(G-1)` and CR2 with Satterthwaite df
(:mod:`evalbars.stats.cluster_robust`) hold it when the categories' effects are close to normal
(a weak correlation within a category) but not when they are strongly clustered: at an
intra-category correlation of 0.3 the categories' effects are far from normal, and CR2 with
Satterthwaite t rejects 10.9-11.8% at 3 categories, 9.4-9.6% at 4 and up to 7.3-8.0% at 6 and
8 (4,000 nulls per setting). The wild cluster bootstrap with Webb's six-point weights does not
fix that: 0.3-2.9% at 3 categories, up to 10.5% at 4. The category sign-flip test
(:func:`evalbars.stats.cluster_robust.sign_flip_mean`) is exact under symmetry, and the gate
(``gate``) takes it while CR2's Satterthwaite df are below
:data:`evalbars.stats.cluster_robust.SIGN_FLIP_BELOW_DF`.

References
----------
.. [1] MacKinnon, J. G. and Webb, M. D. (2017). Wild bootstrap inference for wildly different
   cluster sizes. Journal of Applied Econometrics 32(2), 233-254.
.. [2] Webb, M. D. (2023). Reworking wild bootstrap-based inference for clustered errors.
   Canadian Journal of Economics 56(3), 839-858.
.. [3] Canay, I. A., Romano, J. P. and Shaikh, A. M. (2017). Randomization tests under an
   approximate symmetry assumption. Econometrica 85(3), 1013-1030.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from evalbars.data.blocks import blocks
from evalbars.defaults import ALPHA, DRAWS
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.cluster_robust import (
    ENUMERATED_CLUSTERS,
    SIGN_FLIP_BELOW_DF,
    cr0_mean,
    cr1_mean,
    cr2_mean,
    degenerate_se,
    sign_flip_can_reject,
    sign_flip_mean,
)
from evalbars.stats.intervals import z_for_level
from evalbars.studies import combine_settings

__all__ = [
    "METHODS",
    "MMLU_PRO_CATEGORY_SIZES",
    "WEBB_WEIGHTS",
    "geometric_sizes",
    "simulate_gate_clusters",
    "gate_clusters_table",
]

#: Questions per category of MMLU-Pro's test set (12,032 questions; largest to smallest: math,
#: physics, chemistry, law, engineering, other, economics, health, psychology, business,
#: biology, philosophy, computer science, history): a max/min ratio of 3.5.
MMLU_PRO_CATEGORY_SIZES = (1351, 1299, 1132, 1101, 969, 924, 844, 818, 798, 789, 717, 499, 410, 381)

#: The tests compared, in table order (see :func:`simulate_gate_clusters`).
METHODS = (
    "paired_z",
    "cr0_z",
    "cr1_t",
    "cr2_satterthwaite",
    "wild_webb",
    "sign_flip",
    "gate",
)

#: Webb's six-point weights: :math:`\\pm\\sqrt{1/2}, \\pm 1, \\pm\\sqrt{3/2}`, each 1/6
#: (mean 0, variance 1).
WEBB_WEIGHTS = np.sqrt([0.5, 1.0, 1.5, 0.5, 1.0, 1.5]) * np.array([-1, -1, -1, 1, 1, 1])


def geometric_sizes(clusters: int, mean_size: float = 107, ratio: float = 1.0) -> np.ndarray:
    """Cluster sizes in geometric progression from smallest to largest with max/min ``ratio``.

    Parameters
    ----------
    clusters : int
        Number of clusters G.
    mean_size : float
        Mean cluster size (the sizes are rounded, so the total is close to ``G * mean_size``).
    ratio : float
        Largest over smallest size before rounding (1: equal sizes; MMLU-Pro's categories 3.5).

    Returns
    -------
    ndarray of int
        G sizes, each at least 1.

    Examples
    --------
    >>> geometric_sizes(3, 100, 4.0).tolist()
    [43, 86, 171]
    """
    shape = ratio ** np.linspace(0.0, 1.0, clusters)
    return np.maximum(1, np.rint(mean_size * shape / shape.mean())).astype(int)


def _wild_webb_rejects(sums, sizes, alpha: float, rng, draws: int = DRAWS) -> np.ndarray:
    """The restricted wild cluster bootstrap (WCR) t test of a zero mean, Webb's weights.

    With :math:`S_j` the cluster sums of the differences (the residuals with the null imposed,
    for a mean), :math:`f_j = n_j/N` and weights :math:`v_j`, the bootstrap sums are
    :math:`v_j S_j`, their total :math:`T^* = \\sum_j v_j S_j`, and the CR2 t statistic of
    equal weights (:func:`evalbars.stats.cluster_robust.cr2_mean`) is
    :math:`t^* = T^*/\\sqrt{V^*}` with

    .. math::

        V^* = \\sum_j \\frac{(v_j S_j - f_j T^*)^2}{1 - f_j}
            = \\sum_j \\frac{v_j^2 S_j^2}{1 - f_j} - 2T^* \\sum_j \\frac{v_j S_j f_j}{1 - f_j}
              + T^{*2} \\sum_j \\frac{f_j^2}{1 - f_j},

    three matrix products over the weight patterns. The observed t is :math:`t^*` at
    :math:`v = 1`; the symmetric bootstrap p is the share of patterns with
    :math:`|t^*| \\ge |t|` (every one of the :math:`6^G` patterns up to ``draws`` of them, else
    ``draws`` seeded draws, the observed one among them), rejecting at p <= alpha (MacKinnon
    and Webb 2017; Webb 2023).
    """
    g = sums.shape[-1]
    share = sizes / sizes.sum()
    if 6**g <= draws:
        weights = np.array(list(itertools.product(WEBB_WEIGHTS, repeat=g)))
    else:
        weights = np.vstack([np.ones((1, g)), rng.choice(WEBB_WEIGHTS, size=(draws - 1, g))])
    inflation = 1 / (1 - share)
    constant = (share**2 * inflation).sum()
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero spread: t is inf or NaN
        observed = sums.sum(-1) / np.sqrt(
            ((sums - share * sums.sum(-1, keepdims=True)) ** 2 * inflation).sum(-1)
        )
    rejected = np.empty(sums.shape[0], dtype=bool)
    for block in blocks(sums.shape[0], weights.shape[0]):
        s = sums[block]
        total = s @ weights.T
        square = (s**2 * inflation) @ (weights**2).T
        cross = (s * share * inflation) @ weights.T
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = np.abs(total) / np.sqrt(
                np.maximum(square - 2 * total * cross + total**2 * constant, 0)
            )
            tie = 1e-12 * np.abs(observed[block, None])
            p = (boot >= np.abs(observed[block, None]) - tie).mean(-1)
        rejected[block] = p <= alpha
    return rejected


def simulate_gate_clusters(
    clusters: int,
    *,
    cluster_size=107,
    design_effect: float = 2.0,
    correlation: float | None = None,
    discordance: float = 0.3,
    difference: float = 0.0,
    replications: int = 2000,
    alpha: float = ALPHA,
    seed: int = 0,
) -> pd.DataFrame:
    """Rejection rates of the gate's candidate tests of a paired difference on G clusters.

    Parameters
    ----------
    clusters : int
        Number of categories G (>= 2).
    cluster_size : int or sequence of int
        Questions per category: one size for all (MMLU-Pro's default subsample has ~107 per
        category), or G sizes.
    design_effect : float
        Variance of the mean difference over its variance without clustering, at these sizes
        (1 = no clustering; ~2 on MMLU-Pro's categories). Must be below
        :math:`1 + (m^* - 1)\\,r`.
    correlation : float, optional
        The intra-category correlation :math:`\\rho` of the differences instead (below the
        discordance r); it sets the design effect :math:`1 + (m^* - 1)\\rho`.
    discordance : float
        Share r of questions the two models score differently.
    difference : float
        True mean difference :math:`\\Delta` (0: type-I error; > 0: power), below r.
    replications : int
        Simulated evaluations.
    alpha : float
        Two-sided level of every test.
    seed : int
        Root seed; the stream is :func:`evalbars.seeding.setting_rng` ``(seed, "gate_clusters",
        clusters, design_effect, discordance, difference, questions, sum of squared sizes)``.

    Returns
    -------
    DataFrame
        One row per method of :data:`METHODS`: ``clusters, questions, min_size, max_size,
        design_effect, correlation, discordance, difference, method, rejections, replicates,
        rate, mc_se, mean_df, attainable`` (``mc_se`` the binomial Monte Carlo SE of ``rate``;
        ``mean_df`` the mean degrees of freedom of the reference distribution, inf for z and
        NaN for the resampling tests; ``attainable`` the largest size the test can have at
        this G: :math:`2\\lfloor P\\alpha/2\\rfloor/P` for the sign-flip test over P patterns,
        0 below 6 categories at alpha 0.05, alpha for the others).

    Notes
    -----
    Data. Category j has :math:`n_j` questions, :math:`N = \\sum_j n_j`. Given the category's
    share :math:`\\pi_j` of discordant questions that the candidate gets right,
    question i's difference (candidate minus baseline) is +1 with probability
    :math:`r\\pi_j`, -1 with probability :math:`r(1-\\pi_j)` and 0 otherwise. Under the null
    :math:`\\pi_j \\sim \\mathrm{Beta}(\\kappa, \\kappa)`, symmetric about 1/2, so the
    category effect :math:`E[d \\mid j] = r(2\\pi_j - 1)` averages zero; with
    :math:`\\Delta > 0`, :math:`\\pi_j \\sim \\mathrm{Beta}(2\\kappa\\mu, 2\\kappa(1-\\mu))` with
    :math:`\\mu = 1/2 + \\Delta/(2r)`. Two questions of a category then correlate at
    :math:`\\rho = 4r\\,\\mathrm{Var}(\\pi_j) = r/(2\\kappa + 1)` (null), and

    .. math::

        \\mathrm{Var}(\\bar d) = \\frac{r}{N}\\,[1 + (m^* - 1)\\rho], \\qquad
        m^* = \\sum_j n_j^2 / N,

    so :math:`\\kappa` is set from the design effect :math:`\\mathrm{DEFF} = 1 + (m^*-1)\\rho`
    (Kish 1965); DEFF = 1 gives :math:`\\pi_j = 1/2` (no clustering). A correlation near r
    makes the categories' effects two-pointed (:math:`\\kappa` near 0: a category's flips all
    go one way), the hardest case for a t reference; at r = 0.5, :math:`\\rho = 0.3` is
    :math:`\\kappa = 1/3` and :math:`\\rho = 0.1` is :math:`\\kappa = 2`.

    Tests of :math:`H_0: \\Delta = 0`, two-sided at alpha:

    - ``paired_z``: Miller's paired SE :math:`\\sqrt{\\sum (d_i - \\bar d)^2}/N`, z;
    - ``cr0_z``: CR0 (:func:`evalbars.stats.cluster_robust.cr0_mean`), z;
    - ``cr1_t``: CR1, :math:`t(G-1)` (Stata, inspect_ai);
    - ``cr2_satterthwaite``: CR2 with Satterthwaite df (clubSandwich), the gate's reading at
      every G before;
    - ``wild_webb``: the restricted wild cluster bootstrap of the CR2 t with Webb's six-point
      weights (:func:`_wild_webb_rejects`);
    - ``sign_flip``: the category sign-flip test
      (:func:`evalbars.stats.cluster_robust.sign_flip_mean`);
    - ``gate``: the gate's reading (:mod:`evalbars.readings.gate`): ``sign_flip`` while CR2's
      df are below :data:`~evalbars.stats.cluster_robust.SIGN_FLIP_BELOW_DF`, else
      ``cr2_satterthwaite``; ``paired_z`` where the CR2 SE is degenerate
      (:func:`evalbars.stats.cluster_robust.degenerate_se`) and the clustered reading could
      reject.

    Everything is vectorised over replications, questions and resampling patterns.
    """
    sizes = np.broadcast_to(np.asarray(cluster_size, dtype=int), (clusters,))
    if clusters < 2 or np.any(sizes < 1):
        raise ValueError(f"need >= 2 clusters of >= 1 question, got {clusters} of {sizes}")
    if not 0 < discordance <= 1 or not 0 <= difference < discordance:
        raise ValueError("need 0 < discordance <= 1 and 0 <= difference < discordance")
    questions = int(sizes.sum())
    effective_size = float((sizes.astype(float) ** 2).sum() / questions)
    if correlation is not None:
        design_effect = 1 + (effective_size - 1) * float(correlation)
    correlation = (design_effect - 1) / (effective_size - 1) if effective_size > 1 else 0.0
    if design_effect < 1 or correlation >= discordance:
        raise ValueError(
            f"design_effect must be in [1, {1 + (effective_size - 1) * discordance}) and the "
            f"correlation below the discordance {discordance}"
        )
    rng = setting_rng(
        seed,
        "gate_clusters",
        clusters,
        design_effect,
        discordance,
        difference,
        questions,
        int((sizes**2).sum()),
    )
    centre = 0.5 + difference / (2 * discordance)
    if correlation > 0:
        concentration = (discordance / correlation - 1) / 2  # kappa of the null Beta(kappa, kappa)
        up_share = rng.beta(
            2 * concentration * centre,
            2 * concentration * (1 - centre),
            size=(replications, clusters),
        )
    else:
        up_share = np.full((replications, clusters), centre)
    labels = np.repeat(np.arange(clusters), sizes)
    draw = rng.random((replications, questions))
    up_probability = discordance * up_share[:, labels]
    differences = np.where(draw < up_probability, 1.0, np.where(draw < discordance, -1.0, 0.0))
    del draw, up_probability

    estimate = differences.mean(axis=-1)
    se_paired = differences.std(axis=-1) / np.sqrt(questions)
    cr0 = cr0_mean(differences, labels)
    cr1 = cr1_mean(differences, labels)
    cr2 = cr2_mean(differences, labels)
    flips = sign_flip_mean(differences, labels, level=1 - alpha)
    sums = np.add.reduceat(differences, np.r_[0, np.cumsum(sizes)[:-1]], axis=-1)
    z = z_for_level(1 - alpha)
    size = np.abs(estimate)
    rejected = {
        "paired_z": size > z * se_paired,
        "cr0_z": size > z * cr0.se,
        "cr1_t": size > cr1.critical_value(1 - alpha) * cr1.se,
        "cr2_satterthwaite": size > cr2.critical_value(1 - alpha) * cr2.se,
        "wild_webb": _wild_webb_rejects(sums, sizes, alpha, rng),
        "sign_flip": (flips.low > 0) | (flips.high < 0),
    }
    sign_flip_reads = cr2.df < SIGN_FLIP_BELOW_DF
    can_reject = sign_flip_can_reject(clusters, alpha)
    gate = np.where(sign_flip_reads, rejected["sign_flip"], rejected["cr2_satterthwaite"])
    falls_back = degenerate_se(cr2.se, differences) & (~sign_flip_reads | can_reject)
    rejected["gate"] = np.where(falls_back, rejected["paired_z"], gate)
    patterns = 2**clusters if clusters <= ENUMERATED_CLUSTERS else DRAWS
    flip_size = 2 * np.floor(patterns * alpha / 2 + 1e-12) / patterns
    reference_df = {
        "paired_z": np.inf,
        "cr0_z": np.inf,
        "cr1_t": cr1.df,
        "cr2_satterthwaite": cr2.df,
        "wild_webb": np.nan,
        "sign_flip": np.nan,
        "gate": np.where(sign_flip_reads, np.nan, cr2.df),
    }
    attainable = dict.fromkeys(METHODS, alpha) | {"sign_flip": flip_size}
    attainable["gate"] = flip_size if np.all(sign_flip_reads) else alpha
    rows = []
    for method in METHODS:
        rate, mc_se = share_and_se(rejected[method])
        rows.append(
            {
                "clusters": int(clusters),
                "questions": questions,
                "min_size": int(sizes.min()),
                "max_size": int(sizes.max()),
                "design_effect": float(design_effect),
                "correlation": float(correlation),
                "discordance": float(discordance),
                "difference": float(difference),
                "method": method,
                "rejections": int(rejected[method].sum()),
                "replicates": int(replications),
                "rate": rate,
                "mc_se": mc_se,
                "mean_df": float(np.mean(reference_df[method])),
                "attainable": float(attainable[method]),
            }
        )
    return pd.DataFrame(rows)


def gate_clusters_table(
    cluster_counts=(3, 6, 14, 57),
    design_effects=(2.0, 4.5),
    size_ratios=(1.0,),
    mean_size: float = 107,
    correlations=None,
    **settings,
) -> pd.DataFrame:
    """:func:`simulate_gate_clusters` over cluster counts, design effects (or intra-category
    correlations) and size spreads.

    Parameters
    ----------
    cluster_counts, design_effects, size_ratios : sequence
        The grid; every combination is one seeded setting, with the sizes of
        :func:`geometric_sizes` ``(clusters, mean_size, ratio)``.
    mean_size : float
        Mean questions per cluster (MMLU-Pro's default subsample: 1,497 / 14 = 107).
    correlations : sequence, optional
        Intra-category correlations to grid over instead of ``design_effects``.
    **settings
        Passed on to :func:`simulate_gate_clusters` (not ``cluster_size``).

    Returns
    -------
    DataFrame
        The settings' rows with a ``size_ratio`` column, sorted by size ratio, design effect
        (or correlation), clusters and the order of :data:`METHODS`.
    """
    if correlations is None:
        strengths, key = [{"design_effect": v} for v in design_effects], "design_effect"
    else:
        strengths, key = [{"correlation": v} for v in correlations], "correlation"
    tables = [
        simulate_gate_clusters(
            g, cluster_size=geometric_sizes(g, mean_size, ratio), **strength, **settings
        ).assign(size_ratio=float(ratio))
        for ratio in size_ratios
        for strength in strengths
        for g in cluster_counts
    ]
    keys = ["size_ratio", key, "clusters"]
    table = combine_settings(tables, keys)
    order = table["method"].map({method: k for k, method in enumerate(METHODS)})
    table = table.assign(_order=order).sort_values([*keys, "_order"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)
