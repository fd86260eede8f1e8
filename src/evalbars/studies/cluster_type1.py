"""Type-I error of the release gate's clustered interval under a clustered null, by cluster count.

Two models answer the same questions in G categories; a model x category effect makes the
candidate better in some categories and worse in others, averaging zero. The gate tests
:math:`H_0: \\Delta = 0` two-sided; this study counts how often each candidate interval rejects
it. CR0 with a normal quantile (Miller 2024, Eq. 4, as the gate uses today) is far above the
nominal level with few categories; CR1 with :math:`t(G-1)` and CR2 with Satterthwaite df
(:mod:`evalbars.stats.cluster_robust`) are not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.stats.cluster_robust import cr0_mean, cr1_mean, cr2_mean
from evalbars.stats.intervals import z_for_level
from evalbars.stats.rng import setting_rng, share_and_se
from evalbars.studies import combine_settings

__all__ = [
    "METHODS",
    "MMLU_PRO_CATEGORY_SIZES",
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
    "gate_max_paired_cr0_z",
    "cr1_t",
    "cr2_satterthwaite",
    "gate_max_paired_cr2_t",
    "widen_paired_z_cr2_t",
)


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
    """
    shape = ratio ** np.linspace(0.0, 1.0, clusters)
    return np.maximum(1, np.rint(mean_size * shape / shape.mean())).astype(int)


def simulate_gate_clusters(
    clusters: int,
    *,
    cluster_size=107,
    design_effect: float = 2.0,
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
    discordance : float
        Share r of questions the two models score differently.
    difference : float
        True mean difference :math:`\\Delta` (0: type-I error; > 0: power), below r.
    replications : int
        Simulated evaluations.
    alpha : float
        Two-sided level of every test.
    seed : int
        Root seed; the stream is :func:`evalbars.stats.rng.setting_rng` ``(seed, "gate_clusters",
        clusters, design_effect, discordance, difference, questions, sum of squared sizes)``.

    Returns
    -------
    DataFrame
        One row per method of :data:`METHODS`: ``clusters, questions, min_size, max_size,
        design_effect, discordance, difference, method, rejections, replicates, rate, mc_se,
        mean_df`` (``mc_se`` the binomial Monte Carlo SE of ``rate``; ``mean_df`` the mean
        degrees of freedom of the reference distribution, inf for z).

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
    (Kish 1965); DEFF = 1 gives :math:`\\pi_j = 1/2` (no clustering).

    Tests of :math:`H_0: \\Delta = 0`, rejecting when :math:`|\\bar d| > c\\,SE`:

    - ``paired_z``: Miller's paired SE :math:`\\sqrt{\\sum (d_i - \\bar d)^2}/N`, z;
    - ``cr0_z``: CR0 (:func:`evalbars.stats.cluster_robust.cr0_mean`), z;
    - ``gate_max_paired_cr0_z``: the current gate, the larger of the paired and CR0 SEs, z;
    - ``cr1_t``: CR1, :math:`t(G-1)` (Stata, inspect_ai);
    - ``cr2_satterthwaite``: CR2 with Satterthwaite df (clubSandwich);
    - ``gate_max_paired_cr2_t``: the larger of the paired and CR2 SEs, Satterthwaite t;
    - ``widen_paired_z_cr2_t``: the wider of the paired z interval and the CR2 t interval
      (clustering may only widen the interval; rejects when both tests reject).

    Everything is vectorised over replications and questions.
    """
    sizes = np.broadcast_to(np.asarray(cluster_size, dtype=int), (clusters,))
    if clusters < 2 or np.any(sizes < 1):
        raise ValueError(f"need >= 2 clusters of >= 1 question, got {clusters} of {sizes}")
    if not 0 < discordance <= 1 or not 0 <= difference < discordance:
        raise ValueError("need 0 < discordance <= 1 and 0 <= difference < discordance")
    questions = int(sizes.sum())
    effective_size = float((sizes.astype(float) ** 2).sum() / questions)
    correlation = (design_effect - 1) / (effective_size - 1) if effective_size > 1 else 0.0
    if design_effect < 1 or correlation >= discordance:
        raise ValueError(f"design_effect must be in [1, {1 + (effective_size - 1) * discordance})")
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
    z = z_for_level(1 - alpha)
    t_cr1 = cr1.critical_value(1 - alpha)
    t_cr2 = cr2.critical_value(1 - alpha)
    size = np.abs(estimate)
    half_widths = {
        "paired_z": (z * se_paired, np.inf),
        "cr0_z": (z * cr0.se, np.inf),
        "gate_max_paired_cr0_z": (z * np.maximum(se_paired, cr0.se), np.inf),
        "cr1_t": (t_cr1 * cr1.se, cr1.df),
        "cr2_satterthwaite": (t_cr2 * cr2.se, cr2.df),
        "gate_max_paired_cr2_t": (t_cr2 * np.maximum(se_paired, cr2.se), cr2.df),
        "widen_paired_z_cr2_t": (np.maximum(z * se_paired, t_cr2 * cr2.se), cr2.df),
    }
    rows = []
    for method in METHODS:
        half, df = half_widths[method]
        rejected = size > half
        rate, mc_se = share_and_se(rejected)
        rows.append(
            {
                "clusters": int(clusters),
                "questions": questions,
                "min_size": int(sizes.min()),
                "max_size": int(sizes.max()),
                "design_effect": float(design_effect),
                "discordance": float(discordance),
                "difference": float(difference),
                "method": method,
                "rejections": int(rejected.sum()),
                "replicates": int(replications),
                "rate": rate,
                "mc_se": mc_se,
                "mean_df": float(np.mean(df)),
            }
        )
    return pd.DataFrame(rows)


def gate_clusters_table(
    cluster_counts=(3, 6, 14, 57),
    design_effects=(2.0, 4.5),
    size_ratios=(1.0,),
    mean_size: float = 107,
    **settings,
) -> pd.DataFrame:
    """:func:`simulate_gate_clusters` over cluster counts, design effects and size spreads.

    Parameters
    ----------
    cluster_counts, design_effects, size_ratios : sequence
        The grid; every combination is one seeded setting, with the sizes of
        :func:`geometric_sizes` ``(clusters, mean_size, ratio)``.
    mean_size : float
        Mean questions per cluster (MMLU-Pro's default subsample: 1,497 / 14 = 107).
    **settings
        Passed on to :func:`simulate_gate_clusters` (not ``cluster_size``).

    Returns
    -------
    DataFrame
        The settings' rows with a ``size_ratio`` column, sorted by size ratio, design effect,
        clusters and the order of :data:`METHODS`.
    """
    tables = [
        simulate_gate_clusters(
            g, cluster_size=geometric_sizes(g, mean_size, ratio), design_effect=deff, **settings
        ).assign(size_ratio=float(ratio))
        for ratio in size_ratios
        for deff in design_effects
        for g in cluster_counts
    ]
    table = combine_settings(tables, ["size_ratio", "design_effect", "clusters"])
    order = table["method"].map({method: k for k, method in enumerate(METHODS)})
    keys = ["size_ratio", "design_effect", "clusters"]
    table = table.assign(_order=order).sort_values([*keys, "_order"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)
