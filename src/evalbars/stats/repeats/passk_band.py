"""Two models' pass@k on the same questions, compared at every k: pointwise intervals and a
simultaneous band over k.

:func:`passk_difference_band` takes the per-question differences
:math:`d_{ik} = \\text{pass@}k_A(i) - \\text{pass@}k_B(i)` for :math:`k = 1..K`
(:func:`evalbars.stats.repeats.pass_at_k.item_score_matrix`) and gives for each k the mean
difference :math:`\\bar d_k`, its CR2 SE :math:`s_k`
(:func:`evalbars.stats.cluster_robust.cr2_mean`) and pointwise t interval, and a simultaneous band
:math:`\\bar d_k \\pm t_\\nu^{-1}(\\Phi(\\hat c))\\, s_k` that covers the whole true curve with
probability ``level``. :math:`\\hat c` is the ``level`` quantile of the Gaussian multiplier
bootstrap (Chernozhukov, Chetverikov and Kato 2013) of the sup-t statistic,

.. math::

    T^* = \\max_k \\frac{|\\sum_g \\xi_g \\tilde S_{gk}|}{N s_k}, \\qquad
    \\xi_g \\sim N(0, 1), \\quad \\tilde S_{gk} = \\frac{\\sum_{i \\in g} (d_{ik} - \\bar d_k)}
    {\\sqrt{1 - n_g/N}},

with one multiplier per cluster g (category where the questions have two or more, else
question: :func:`evalbars.stats.repeats.pass_at_k.question_clusters`) and
:math:`\\tilde S_{gk}` the CR2-adjusted cluster sums (equal weights), whose squares sum to
:math:`N^2 s_k^2`: each :math:`T^*_k` has unit variance given the data, and :math:`\\hat c`
is the sup of unit normals with the curve's own correlation over k. passk-inference 0.3.1
(arXiv:2609.22547) does the same without clusters, reading :math:`\\hat c` on the z scale with
sums scaled by :math:`\\sqrt{(N-1)/N}`; here the per-k tail :math:`2(1 - \\Phi(\\hat c))` is read
on the CR2 Satterthwaite t instead (:math:`\\nu` depends only on the cluster sizes), so with
one k the band is the pointwise t interval, and few clusters widen the band as they widen the
pointwise interval (Montiel Olea and Plagborg-Møller 2019 on sup-t bands).

**Few categories.** With :data:`FEW_CLUSTERS` or fewer clusters of questions (categories; a
question its own cluster is not one) the band is instead the
Bonferroni band: each k's CR2 t interval at level :math:`1 - (1 - \\text{level})/K`, over the
K k's with spread (``method="bonferroni"``; ``"auto"``, the default, chooses it there). The
sup-t band relies on the cluster means of each k's difference being near normal; with a
handful of categories the category means of a pass@k difference are skewed at large k, the
pointwise CR2 t intervals already fall to about 92% there, and the sup-t band to 89-92%. The
Bonferroni union bound needs no joint law: it holds whenever each k's interval holds at its own
level, and the CR2 t interval at level :math:`1 - 0.05/16` keeps that. It is wider (46% at 10
categories of 10 questions and 16 samples). The cluster sign-flip randomization intervals
(:func:`evalbars.stats.cluster_robust.sign_flip_mean`), exact at each k under symmetry, cannot
make a simultaneous band with 6 categories (64 sign patterns: the only simultaneous order
statistics are the extreme subset means, an infinite band), and a joint sign-flip band reached
only 93-94% with 10.

A k whose differences have zero spread (:math:`s_k = 0`, e.g. both models solve every question
at large k) says nothing about the population: it is left out of the maximum, its intervals
are the whole range [-1, 1] and it decides nothing (passk-inference substitutes [-1, 1] too).
The band decides the sign at k when it excludes 0, simultaneously for every k shown.

**Measured coverage** (:mod:`evalbars.studies.passk_band`, ``python -m tests.benchmark
--passk-band``: 2,000 replicates per setting, nominal 95%, k = 1..n; 30, 100 and 500
questions, n = 5 and 16 samples, a crossing and a no-difference pair; the table is in
``docs/methods/repeated-samples.rst``). Independent questions (sup-t): 93.8% to 95.8% over 12
settings. 20 categories (sup-t): 93.6% to 95.0%. 6 and 10 categories (Bonferroni): 95.1% to
99.5%, at a band 50-60% wider than the sup-t band there. The sup-t band alone covered 90.7% (crossing, n = 16, 6 categories of 5
questions) and 91.6% (10 of 10) there: the truth fell below the band 6-9% of the time, above
it under 1% (the category means' sample skewness was -0.5 to -0.75 at k of 9 to 13). Wild
cluster bootstrap-t bands (Rademacher or Mammen weights) did worse in the same settings.
Ignoring the categories when they exist: 56% to 89%.

References
----------
.. [1] Chernozhukov, V., Chetverikov, D. and Kato, K. (2013). Gaussian approximations and
   multiplier bootstrap for maxima of sums of high-dimensional random vectors. Annals of
   Statistics 41(6), 2786-2819.
.. [2] passk-inference 0.3.1 (2026): paired pass@k inference with a sup-t band over k.
   arXiv:2609.22547.
.. [3] Montiel Olea, J. L. and Plagborg-Møller, M. (2019). Simultaneous confidence bands:
   theory, implementation, and an application to SVARs. Journal of Applied Econometrics
   34(1), 1-17.
.. [4] Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
   regression with multi-stage samples. Survey Methodology 28(2), 169-181 (CR2).
.. [5] Chen, M. et al. (2021). Evaluating large language models trained on code.
   arXiv:2107.03374 (pass@k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import DRAWS, LEVEL, SEED
from evalbars.stats.cluster_robust import cr2_mean
from evalbars.stats.repeats.pass_at_k import item_score_matrix, question_clusters

__all__ = ["FEW_CLUSTERS", "BAND_METHODS", "PassKBand", "passk_band", "passk_difference_band"]

#: At most this many clusters, ``method="auto"`` draws the Bonferroni band (module notes).
FEW_CLUSTERS = 12
#: How the band over k is drawn.
BAND_METHODS = ("auto", "sup-t", "bonferroni")


@dataclass(frozen=True)
class PassKBand:
    """Paired differences over a grid of k: pointwise intervals and a simultaneous band.

    Every array has the leading (stack) shape of the input plus the k axis (last), except
    ``critical_value``, ``band_quantile`` and ``df``, which have the stack shape.

    Attributes
    ----------
    difference, se : ndarray
        Mean per-question difference and its CR2 SE at each k.
    df : ndarray
        CR2 Satterthwaite degrees of freedom (the same at every k: equal weights).
    pointwise_low, pointwise_high : ndarray
        The pointwise t intervals, cut to [-1, 1]; [-1, 1] where ``degenerate``.
    band_low, band_high : ndarray
        The simultaneous band, cut to [-1, 1]; [-1, 1] where ``degenerate``.
    sign : ndarray of int
        +1 where the band lies above 0, -1 below, 0 where it holds 0.
    degenerate : ndarray of bool
        Zero spread of the differences at that k: no SE, no decision.
    critical_value : ndarray
        :math:`\\hat c`, the multiplier bootstrap's ``level`` quantile of the sup-t (z scale);
        for the Bonferroni band, :math:`\\Phi^{-1}(1 - (1 - \\text{level})/(2K))`.
    band_quantile : ndarray
        :math:`t_\\nu^{-1}(\\Phi(\\hat c))`, the band's half-width in SEs.
    questions, clusters : int
        Questions and clusters behind every k.
    method : str
        ``"sup-t"`` or ``"bonferroni"``.
    """

    difference: np.ndarray
    se: np.ndarray
    df: np.ndarray
    pointwise_low: np.ndarray
    pointwise_high: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    sign: np.ndarray
    degenerate: np.ndarray
    critical_value: np.ndarray
    band_quantile: np.ndarray
    questions: int
    clusters: int
    method: str = "sup-t"


def passk_band(
    differences,
    clusters=None,
    *,
    level: float = LEVEL,
    draws: int = DRAWS,
    rng: np.random.Generator | None = None,
    multipliers: str = "cluster",
    method: str = "auto",
) -> PassKBand:
    """Pointwise intervals and a simultaneous sup-t band for mean differences over a k grid.

    Parameters
    ----------
    differences : array_like, shape (..., questions, K)
        Per-question differences at each k (leading axes are independent stacks, e.g.
        simulation replicates, sharing the clusters).
    clusters : array_like, shape (questions,), optional
        Cluster of each question (categories); default one per question.
    level : float
        Pointwise and simultaneous confidence level.
    draws : int
        Gaussian multiplier draws.
    rng : numpy.random.Generator, optional
        Source of the multipliers; default ``numpy.random.default_rng(SEED)``.
    multipliers : {"cluster", "projected"}
        ``"cluster"``: one standard normal per (stack, draw, cluster), in that order, clusters
        in sorted label order (as passk-inference draws them per prompt). ``"projected"``: the
        same distribution drawn in K dimensions (below); faster when clusters outnumber the
        k's, as in the coverage study.
    method : {"auto", "sup-t", "bonferroni"}
        The sup-t band (module notes), the Bonferroni band, or (``auto``) Bonferroni with
        :data:`FEW_CLUSTERS` or fewer clusters holding two or more questions (categories) and
        sup-t otherwise. The Bonferroni band draws
        nothing from ``rng``.

    Returns
    -------
    PassKBand

    Notes
    -----
    The statistic is the module's. Given the data, :math:`T^* = \\xi^\\top \\tilde S/(N s)` with
    :math:`\\xi \\sim N(0, I_G)` is exactly :math:`N(0, C)` with :math:`C` the correlation of
    the standardised cluster sums over k; ``"projected"`` draws it as :math:`z^\\top R` with
    :math:`z \\sim N(0, I_m)`, :math:`m = \\min(G, K)`, and :math:`R` the triangular factor of
    the QR decomposition of the (G, K) standardised sums (:math:`R^\\top R = G`'s Gram
    matrix), so each draw costs K x m instead of G x K. The critical values agree in
    distribution, not draw for draw. Memory is bounded by drawing in chunks of about four
    million multipliers.

    Examples
    --------
    >>> d = np.array([[0.2, 0.1], [0.1, 0.0], [0.0, 0.0], [-0.1, 0.1], [0.3, 0.3]])
    >>> band = passk_band(d, draws=2000, rng=np.random.default_rng(0))
    >>> band.difference.round(3).tolist(), round(float(band.df), 6)
    ([0.1, 0.1], 4.0)
    >>> bool(np.all(band.band_low <= band.pointwise_low))
    True
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim < 2 or d.shape[-2] < 2:
        raise ValueError("differences need shape (..., questions >= 2, K)")
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite (drop questions short of the largest k)")
    questions = d.shape[-2]
    labels = np.arange(questions) if clusters is None else np.asarray(clusters)
    codes = np.unique(labels, return_inverse=True)[1].ravel()
    groups = int(codes.max()) + 1
    if groups < 2:
        raise ValueError("a band needs two or more clusters")
    rng = np.random.default_rng(SEED) if rng is None else rng
    moved = np.moveaxis(d, -1, -2)  # (..., K, questions): the stacks of cr2_mean
    result = cr2_mean(moved, labels)
    mean, se = np.asarray(result.estimate), np.asarray(result.se)
    df = np.asarray(result.df)[..., 0]
    # CR2-adjusted cluster sums (equal weights): (..., K, G), squares summing to N^2 se^2.
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=groups)
    residuals = np.take(moved - mean[..., None], order, axis=-1)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    sums = np.add.reduceat(residuals, starts, axis=-1) / np.sqrt(1.0 - sizes / questions)
    scale = np.max(np.abs(d), axis=(-2, -1), keepdims=True)[..., 0] + 1.0
    degenerate = ~(se > 1e-12 * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        standardised = np.where(degenerate[..., None], 0.0, sums / (questions * se[..., None]))
    if method not in BAND_METHODS:
        raise ValueError(f"method must be one of {BAND_METHODS}, got {method!r}")
    if multipliers not in ("cluster", "projected"):
        raise ValueError(f"multipliers must be 'cluster' or 'projected', got {multipliers!r}")
    if method == "auto":
        clustered = sizes.max() > 1  # categories, not each question its own cluster
        method = "bonferroni" if clustered and groups <= FEW_CLUSTERS else "sup-t"
    if method == "bonferroni":
        # Each k with spread at level 1 - (1 - level)/K, on the z scale as the sup-t's value.
        tested = np.maximum((~degenerate).sum(axis=-1), 1)
        critical = special.ndtri(1 - (1 - level) / (2 * tested))
    else:
        critical = _sup_t_critical(standardised, multipliers, draws, rng, level)
    band_quantile = special.stdtrit(df, special.ndtr(critical))
    pointwise_quantile = special.stdtrit(df, 0.5 + level / 2)
    pointwise = pointwise_quantile[..., None] * se
    half = band_quantile[..., None] * se

    def bounds(width):
        low = np.where(degenerate, -1.0, np.clip(mean - width, -1.0, 1.0))
        high = np.where(degenerate, 1.0, np.clip(mean + width, -1.0, 1.0))
        return low, high

    pointwise_low, pointwise_high = bounds(pointwise)
    band_low, band_high = bounds(half)
    sign = np.where(band_low > 0, 1, np.where(band_high < 0, -1, 0))
    return PassKBand(
        difference=mean,
        se=se,
        df=df,
        pointwise_low=pointwise_low,
        pointwise_high=pointwise_high,
        band_low=band_low,
        band_high=band_high,
        sign=sign,
        degenerate=degenerate,
        critical_value=critical,
        band_quantile=band_quantile,
        questions=questions,
        clusters=groups,
        method=method,
    )


def _sup_t_critical(standardised, multipliers, draws, rng, level):
    """The ``level`` quantile of the Gaussian multiplier sup-t over k of each stack (module
    notes), from the (..., K, G) CR2-adjusted cluster sums over :math:`N s_k`."""
    stacks = standardised.reshape(-1, *standardised.shape[-2:])
    if multipliers == "projected":
        # (stacks, m, K) with R'R = the sums' Gram matrix: the same Gaussian law in m dims.
        stacks = np.swapaxes(np.linalg.qr(np.swapaxes(stacks, -1, -2), mode="r"), -1, -2)
    width = stacks.shape[-1]
    maxima = np.empty((stacks.shape[0], draws))
    chunk = max(1, (1 << 22) // (draws * width))
    for start in range(0, stacks.shape[0], chunk):
        block = stacks[start : start + chunk]
        normals = rng.standard_normal((block.shape[0], draws, width))
        products = np.einsum("sdg,skg->sdk", normals, block, optimize=True)
        maxima[start : start + chunk] = np.abs(products).max(axis=-1)
    return np.quantile(maxima, level, axis=-1).reshape(standardised.shape[:-2])


def passk_difference_band(
    counts: pd.DataFrame,
    model_a: str,
    model_b: str,
    *,
    ks=None,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = SEED,
) -> pd.DataFrame:
    """pass@k of model A minus model B on their shared questions, for every k, with pointwise
    intervals and a simultaneous band over k.

    Parameters
    ----------
    counts : DataFrame
        ``model, question_id, samples, correct`` and optionally ``category``
        (:func:`~evalbars.stats.repeats.pass_at_k.sample_counts`).
    model_a, model_b : str
        The pair; differences are A minus B.
    ks : sequence of int, optional
        Budgets; default 1 up to the fewest samples any shared question has for either model,
        so that every k is a mean over the same questions. Questions with fewer samples than
        the largest k asked for are left out
        (:func:`~evalbars.stats.repeats.pass_at_k.short_questions` names them).
    level : float
        Pointwise and simultaneous level.
    draws : int
        Gaussian multiplier draws.
    seed : int
        Seed of the multipliers (``numpy.random.default_rng(seed)``): same input, same table.

    Returns
    -------
    DataFrame
        ``model_a, model_b, k, difference, se, df, pointwise_low, pointwise_high, band_low,
        band_high, sign, degenerate, questions, clusters, clustered_by``, one row per k.
        ``sign`` is +1 where the band lies above 0 (A ahead at that k, simultaneously over
        every k shown), -1 below, 0 where it holds 0; a ``degenerate`` k (zero spread)
        decides nothing. The critical value is in ``DataFrame.attrs["critical_value"]`` and the
        band's method (``sup-t`` or, with few categories, ``bonferroni``: :func:`passk_band`) in
        ``DataFrame.attrs["band"]``.

    Examples
    --------
    The paired five-problem example (n = 10 each): at k = 5 A leads by 0.126984 with SE
    0.083851 on 4 df, and no k is decided:

    >>> counts = pd.DataFrame({
    ...     "model": ["A"] * 5 + ["B"] * 5, "question_id": list("abcde") * 2, "samples": 10,
    ...     "correct": [3, 10, 0, 7, 5, 1, 9, 0, 8, 2]})
    >>> band = passk_difference_band(counts, "A", "B", ks=[1, 5], draws=2000)
    >>> band[["difference", "se", "df", "sign"]].round(6).values.tolist()
    [[0.1, 0.070711, 4.0, 0.0], [0.126984, 0.083851, 4.0, 0.0]]
    """
    pair = _paired_counts(counts, model_a, model_b)
    fewest = int(min(pair["samples_a"].min(), pair["samples_b"].min())) if len(pair) else 0
    grid = np.arange(1, fewest + 1) if ks is None else np.asarray(list(ks), dtype=np.int64)
    if grid.size == 0 or grid.min() < 1:
        raise ValueError(f"budgets must be positive whole numbers, got {list(grid)}")
    keep = (pair["samples_a"] >= grid.max()) & (pair["samples_b"] >= grid.max())
    pair = pair[keep.to_numpy()]
    if len(pair) < 2:
        raise ValueError(
            f"{model_a} and {model_b} share {len(pair)} questions with at least "
            f"{int(grid.max())} samples each; a band needs two or more"
        )
    scores = [
        item_score_matrix(pair[f"samples_{s}"], pair[f"correct_{s}"], grid) for s in ("a", "b")
    ]
    labels, clustered_by = question_clusters(pair)
    band = passk_band(
        scores[0] - scores[1],
        labels,
        level=level,
        draws=draws,
        rng=np.random.default_rng(seed),
    )
    table = pd.DataFrame(
        {
            "model_a": model_a,
            "model_b": model_b,
            "k": grid,
            "difference": band.difference,
            "se": band.se,
            "df": float(band.df),
            "pointwise_low": band.pointwise_low,
            "pointwise_high": band.pointwise_high,
            "band_low": band.band_low,
            "band_high": band.band_high,
            "sign": band.sign,
            "degenerate": band.degenerate,
            "questions": band.questions,
            "clusters": band.clusters,
            "clustered_by": clustered_by,
        }
    )
    table.attrs["critical_value"] = float(band.critical_value)
    table.attrs["band"] = band.method
    return table


def _paired_counts(counts: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """Counts of both models on their shared questions, one row per question."""
    columns = ["question_id", "samples", "correct"]
    sides = []
    for model, suffix in ((model_a, "a"), (model_b, "b")):
        rows = counts[counts["model"] == model]
        if rows.empty:
            raise ValueError(f"no counts for model {model!r}")
        side = rows[columns].rename(columns={"samples": f"samples_{suffix}"})
        sides.append(side.rename(columns={"correct": f"correct_{suffix}"}))
    pair = sides[0].merge(sides[1], on="question_id", how="inner", sort=False)
    if "category" in counts.columns:
        categories = counts[counts["model"] == model_a][["question_id", "category"]]
        pair = pair.merge(categories, on="question_id", how="left", sort=False)
    return pair.reset_index(drop=True)
