"""Simultaneous coverage of the pass@k difference band over k, in the settings users meet.

Each replicate draws a fresh benchmark: Q questions (30 as AIME, 100, 500), on each of which
two models have a true solve rate, :math:`p_A` from Beta(:math:`a_A, b_A`) and :math:`p_B`
from Beta(:math:`a_B, b_B`), coupled through a Gaussian copula (correlation ``coupling``: a
question hard for one is hard for the other) and, with categories, a category component
(latent intraclass correlation ``icc``) shared by the questions of a category; then n samples
of each model at each question (:math:`c \\sim \\text{Binomial}(n, p)`), and the band of
:func:`evalbars.stats.repeats.passk_band.passk_band` over k = 1..n. The copula keeps each
:math:`p` Beta-distributed whatever the coupling and the categories, so the true difference of
population pass@k is known in closed form,

.. math::

    \\Delta_k = \\frac{B(a_B, b_B + k)}{B(a_B, b_B)} - \\frac{B(a_A, b_A + k)}{B(a_A, b_A)}
    \\quad (E[(1 - p)^k] \\text{ under a Beta}),

and the band covers when every :math:`\\Delta_k` lies inside it. Scenarios: ``crossing``
(A, Beta(0.5, 0.5), mostly solves a question always or never and leads at k = 1 by 0.10; B,
Beta(2, 3), solves most questions now and then and leads at k = 16 by 0.11) and
``no_difference`` (both Beta(0.7, 0.9): :math:`\\Delta_k = 0`, so non-coverage is the chance
of a sign decided, wrongly, anywhere on the grid). With categories the
same draws are analysed twice: clustered by category (the band as shipped: Bonferroni over k
with 12 or fewer categories, sup-t with more) and by question
(ignoring the clustering), to show what the clustering buys. Every replicate of a setting is
computed at once (in chunks that bound memory).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import LEVEL
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.repeats.pass_at_k import item_score_matrix
from evalbars.stats.repeats.passk_band import passk_band
from evalbars.studies import combine_settings

__all__ = [
    "SCENARIOS",
    "true_difference",
    "draw_paired_counts",
    "simulate_passk_band",
    "passk_band_table",
]

#: Beta parameters (a_A, b_A, a_B, b_B) of each scenario's true solve rates.
SCENARIOS = {"crossing": (0.5, 0.5, 2.0, 3.0), "no_difference": (0.7, 0.9, 0.7, 0.9)}
#: The study's key in :data:`evalbars.seeding.STUDY_CODES`.
STUDY = "passk_band"


def true_difference(ks, scenario: str) -> np.ndarray:
    """:math:`\\Delta_k`, population pass@k of A minus B, at each k (closed form).

    Examples
    --------
    >>> true_difference([1, 16], "crossing").round(4).tolist()
    [0.1, -0.1084]
    """
    a_a, b_a, a_b, b_b = SCENARIOS[scenario]
    k = np.asarray(ks, dtype=float)

    def all_wrong(a, b):
        return np.exp(special.betaln(a, b + k) - special.betaln(a, b))

    return all_wrong(a_b, b_b) - all_wrong(a_a, b_a)


def draw_paired_counts(
    rng: np.random.Generator,
    replicates: int,
    questions: int,
    samples: int,
    scenario: str,
    *,
    categories: int = 0,
    icc: float = 0.3,
    coupling: float = 0.7,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correct counts of A and B, each ``(replicates, questions)``, and the category labels.

    A question's latent normal is :math:`\\sqrt{icc}\\,C_g + \\sqrt{1 - icc}\\,E_i` (no
    :math:`C_g` without categories); B's is ``coupling`` times A's plus an independent latent
    of the same form times :math:`\\sqrt{1 - coupling^2}`; each is turned into a Beta solve
    rate by its quantile function. Questions are split into ``categories`` near-equal
    categories (``np.array_split`` order).
    """
    a_a, b_a, a_b, b_b = SCENARIOS[scenario]
    labels = np.zeros(questions, dtype=np.int64)
    if categories:
        labels = np.concatenate(
            [
                np.full(len(part), g)
                for g, part in enumerate(np.array_split(np.arange(questions), categories))
            ]
        )

    def latent():
        own = rng.standard_normal((replicates, questions))
        if not categories:
            return own
        shared = rng.standard_normal((replicates, categories))[:, labels]
        return np.sqrt(icc) * shared + np.sqrt(1 - icc) * own

    z_a = latent()
    z_b = coupling * z_a + np.sqrt(1 - coupling**2) * latent()
    p_a = special.betaincinv(a_a, b_a, special.ndtr(z_a))
    p_b = special.betaincinv(a_b, b_b, special.ndtr(z_b))
    return rng.binomial(samples, p_a), rng.binomial(samples, p_b), labels


def simulate_passk_band(
    *,
    questions: int,
    samples: int,
    categories: int = 0,
    scenario: str = "crossing",
    replicates: int = 2000,
    draws: int = 1000,
    level: float = LEVEL,
    icc: float = 0.3,
    coupling: float = 0.7,
    seed: int = 0,
) -> pd.DataFrame:
    """Simultaneous and pointwise coverage of the band over k = 1..n in one setting.

    Parameters
    ----------
    questions, samples : int
        Q and n.
    categories : int
        Categories (0: none).
    scenario : str
        A key of :data:`SCENARIOS`.
    replicates, draws : int
        Monte Carlo replicates and Gaussian multiplier draws per band.
    level : float
        Nominal level.
    icc, coupling : float
        Latent intraclass correlation of a category and the correlation of the two models.
    seed : int
        Root seed; the stream is :func:`evalbars.seeding.setting_rng` ``(seed,
        "passk_band", questions, samples, categories, scenario index, icc, coupling)``.

    Returns
    -------
    DataFrame
        One row per analysis (``question``; with categories also ``category``):
        ``scenario, questions, samples, categories, clustered_by, coverage, mc_se,
        pointwise_all_k, pointwise_min, mean_band_width, mean_critical_value, decided_share,
        replicates, draws, level, seconds``. ``coverage`` is the share of replicates whose
        band holds the whole true curve; ``pointwise_all_k`` the share whose pointwise
        intervals do; ``pointwise_min`` the lowest pointwise coverage over k;
        ``decided_share`` the mean share of k whose sign the band decides.

    Examples
    --------
    >>> row = simulate_passk_band(questions=30, samples=5, replicates=200, draws=200)
    >>> row[["clustered_by", "replicates"]].values.tolist()
    [['question', 200]]
    """
    start = time.perf_counter()
    rng = setting_rng(
        seed, STUDY, questions, samples, categories, list(SCENARIOS).index(scenario), icc, coupling
    )
    ks = np.arange(1, samples + 1)
    truth = true_difference(ks, scenario)
    analyses = ["question"] + (["category"] if categories else [])
    outcomes = {name: [] for name in analyses}
    # Chunks of replicates keep the (replicates, questions, k) arrays near 2^23 numbers.
    chunk = max(1, (1 << 23) // (questions * samples * max(samples // 2, 1)))
    for first in range(0, replicates, chunk):
        size = min(chunk, replicates - first)
        c_a, c_b, labels = draw_paired_counts(
            rng,
            size,
            questions,
            samples,
            scenario,
            categories=categories,
            icc=icc,
            coupling=coupling,
        )
        n = np.full(c_a.shape, samples)
        d = item_score_matrix(n, c_a, ks) - item_score_matrix(n, c_b, ks)
        for name in analyses:
            clusters = labels if name == "category" else None
            band = passk_band(
                d, clusters, level=level, draws=draws, rng=rng, multipliers="projected"
            )
            outcomes[name].append(band)
    rows = []
    for name in analyses:
        bands = outcomes[name]

        def stack(field, bands=bands):
            return np.concatenate([getattr(b, field) for b in bands])

        low, high = stack("band_low"), stack("band_high")
        pointwise = (stack("pointwise_low") <= truth) & (truth <= stack("pointwise_high"))
        coverage, mc_se = share_and_se(np.all((low <= truth) & (truth <= high), axis=-1))
        rows.append(
            {
                "scenario": scenario,
                "questions": questions,
                "samples": samples,
                "categories": categories,
                "clustered_by": name,
                "coverage": coverage,
                "mc_se": mc_se,
                "pointwise_all_k": float(np.all(pointwise, axis=-1).mean()),
                "pointwise_min": float(pointwise.mean(axis=0).min()),
                "mean_band_width": float(np.mean(high - low)),
                "mean_critical_value": float(np.mean(stack("critical_value"))),
                "decided_share": float(np.mean(stack("sign") != 0)),
            }
        )
    seconds = time.perf_counter() - start
    return pd.DataFrame(rows).assign(
        replicates=replicates, draws=draws, level=level, seconds=seconds
    )


def passk_band_table(
    *,
    question_counts=(30, 100, 500),
    sample_counts=(5, 16),
    category_counts=None,
    scenarios=tuple(SCENARIOS),
    replicates: int = 2000,
    draws: int = 1000,
    level: float = LEVEL,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`simulate_passk_band` over a grid, without and with categories.

    Parameters
    ----------
    question_counts, sample_counts : sequence of int
        Q and n of the grid.
    category_counts : mapping, optional
        Categories used with each Q; default {30: 6, 100: 10, 500: 20}.
    scenarios : sequence of str
        Keys of :data:`SCENARIOS`.
    replicates, draws, level, seed
        As in :func:`simulate_passk_band`.

    Returns
    -------
    DataFrame
        The settings' rows, sorted by scenario, questions, samples, categories, analysis.
    """
    category_counts = category_counts or {30: 6, 100: 10, 500: 20}
    tables = [
        simulate_passk_band(
            questions=q,
            samples=n,
            categories=g,
            scenario=scenario,
            replicates=replicates,
            draws=draws,
            level=level,
            seed=seed,
        )
        for scenario in scenarios
        for q in question_counts
        for n in sample_counts
        for g in (0, category_counts.get(q, 0))
    ]
    return combine_settings(
        tables, ["scenario", "questions", "samples", "categories", "clustered_by"]
    )
