"""Coverage of Bradley-Terry intervals when every prompt is battled several times.

Each replicate draws a benchmark of ``prompts`` prompts, each battled ``per_prompt`` times by
pairs of K models drawn at random (sides at random too). On prompt g model k plays at strength
:math:`\\theta_k + u_{gk}`, :math:`u_{gk} \\sim N(0, \\sigma^2)` (``prompt_sd``): a prompt
suits some models, so its battles agree more than independent ones would. Outcomes follow
Rao and Kupper's model with threshold ``tie_threshold`` (ties about 15%), and the fit counts a tie
as half a win (:func:`evalbars.stats.bradley_terry.fit_bradley_terry`, the default).

The target of every interval is the difference of two models' strengths in the population
the fit estimates: the ties-as-half Bradley-Terry projection :math:`\\theta^*` of the expected
score :math:`E[y_{ab}] = E_\\epsilon[P(a \\succ b) + P(\\text{tie})/2]`,
:math:`\\epsilon \\sim N(0, 2\\sigma^2)`, computed by Gauss-Hermite quadrature and fitted to
all pairs equally (the pairs are drawn uniformly). It reports, per setting and reading
(``per_battle``, ``model``, ``clustered`` by prompt, and with ``bootstrap_replicates`` the
prompt-cluster bootstrap's percentile interval), how often the 95% intervals of all
:math:`K(K-1)/2` differences cover their targets.

With one battle per prompt, or no prompt effect, every reading is near nominal; with several
battles per prompt and a prompt effect the per-battle and model intervals fall below it and
the clustered ones keep it (measured: ``python -m tests.benchmark --battles-coverage``).
The data of every replicate are drawn at once (vectorised); each replicate is then fitted by
the same function users call.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import LEVEL
from evalbars.seeding import setting_rng
from evalbars.stats.bradley_terry import cluster_bootstrap, fit_bradley_terry, rating_differences

__all__ = [
    "STRENGTHS",
    "READINGS",
    "draw_battles",
    "target_differences",
    "simulate_battles_coverage",
]

#: True strengths of the simulated models (log-odds), best first.
STRENGTHS = (0.6, 0.3, 0.0, -0.3, -0.6)
#: Readings whose intervals are checked (``bootstrap`` only when asked for).
READINGS = ("per_battle", "model", "clustered", "bootstrap")
#: How the battles of a prompt pick their pairs: each at random, or one pair per prompt with
#: the sides alternating (Arena-Hard-Auto judges every prompt twice, positions swapped).
DESIGNS = ("random_pairs", "repeated_pair")
#: The study's key in :data:`evalbars.seeding.STUDY_CODES`.
STUDY = "battles_coverage"


def draw_battles(
    rng, replicates, prompts, per_prompt, *, prompt_sd, tie_threshold, design="random_pairs",
    strengths=STRENGTHS,
):  # fmt: skip
    """Battles of every replicate at once: model codes ``a, b`` and outcomes ``y`` (score of
    a: 1, 0.5, 0), each ``(replicates, prompts * per_prompt)``; battle i is on prompt
    ``i // per_prompt``. ``design`` is one of :data:`DESIGNS`."""
    theta = np.asarray(strengths, dtype=float)
    k, n = len(theta), prompts * per_prompt
    effect = prompt_sd * rng.standard_normal((replicates, prompts, k))
    prompt = np.broadcast_to(np.arange(n) // per_prompt, (replicates, n))
    if design == "random_pairs":
        a = rng.integers(0, k, (replicates, n))
        b = (a + rng.integers(1, k, (replicates, n))) % k
    else:  # one pair per prompt, sides alternating (Arena-Hard-Auto's two games)
        first = rng.integers(0, k, (replicates, prompts))
        second = (first + rng.integers(1, k, (replicates, prompts))) % k
        swap = np.arange(n) % 2 == 1
        a = np.where(swap, second[:, prompt[0]], first[:, prompt[0]])
        b = np.where(swap, first[:, prompt[0]], second[:, prompt[0]])
    rows = np.arange(replicates)[:, None]
    eta = theta[a] - theta[b] + effect[rows, prompt, a] - effect[rows, prompt, b]
    won, lost = special.expit(eta - tie_threshold), special.expit(-eta - tie_threshold)
    u = rng.random((replicates, n))
    y = np.where(u < won, 1.0, np.where(u < won + lost, 0.0, 0.5))
    return a, b, y


def target_differences(prompt_sd, tie_threshold, strengths=STRENGTHS, nodes: int = 80):
    """K x K differences of the ties-as-half projection :math:`\\theta^*` (module docstring)."""
    theta = np.asarray(strengths, dtype=float)
    k = len(theta)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)  # E f(Z), Z ~ N(0, 1)
    eps = np.sqrt(2.0) * prompt_sd * x
    pairs = list(itertools.combinations(range(k), 2))
    d = np.array([theta[i] - theta[j] for i, j in pairs])[:, None] + eps[None, :]
    won, lost = special.expit(d - tie_threshold), special.expit(-d - tie_threshold)
    score = (won + (1 - won - lost) / 2) @ w / w.sum()
    first = [str(i) for i, _ in pairs] * 2
    second = [str(j) for _, j in pairs] * 2
    fit = fit_bradley_terry(
        first, second, np.repeat([1.0, 0.0], len(pairs)), weight=np.concatenate([score, 1 - score]),
        models=[str(i) for i in range(k)],
    )  # fmt: skip
    return fit.theta[:, None] - fit.theta[None, :]


def _interval_hits(fit, draws, truth, z, readings, level):
    """Per reading: covered targets (K(K-1)/2,), widths, the clustered design effect."""
    upper = np.triu_indices(len(truth), k=1)
    target = truth[upper]
    diff = rating_differences(fit, "model")[0][upper]
    out = {}
    for reading in readings:
        if reading == "bootstrap":
            replicate = draws.ok()
            gaps = replicate[:, upper[0]] - replicate[:, upper[1]]
            low, high = np.quantile(gaps, [(1 - level) / 2, (1 + level) / 2], axis=0)
        else:
            se = rating_differences(fit, reading)[1][upper]
            low, high = diff - z * se, diff + z * se
        out[reading] = ((low <= target) & (target <= high), high - low)
    return out


def simulate_battles_coverage(
    *,
    prompts=(50, 200),
    per_prompt=(1, 2, 8),
    prompt_sd=(0.0, 1.0),
    designs=DESIGNS,
    replicates: int = 1000,
    bootstrap_replicates: int = 0,
    tie_threshold: float = 0.35,
    level: float = LEVEL,
    seed: int = 0,
) -> pd.DataFrame:
    """Coverage of every reading's intervals over a grid of designs (module docstring).

    Parameters
    ----------
    prompts, per_prompt, prompt_sd, designs : sequence
        The grid: prompts per benchmark, battles per prompt, SD of the prompt-by-model effect,
        and how a prompt's battles pick their pairs (:data:`DESIGNS`).
    replicates : int
        Simulated benchmarks per setting.
    bootstrap_replicates : int
        Cluster-bootstrap replicates per benchmark (0: no bootstrap reading).
    tie_threshold : float
        Rao-Kupper threshold of the simulated outcomes.
    level : float
        Nominal coverage.
    seed : int
        Root seed; a setting's stream is :func:`evalbars.seeding.setting_rng` ``(seed,
        "battles_coverage", prompts, per_prompt, prompt_sd, tie_threshold, design)`` (design
        by its position in :data:`DESIGNS`).

    Returns
    -------
    DataFrame
        One row per setting and reading: ``design, prompts, per_prompt, prompt_sd, battles,
        reading, coverage`` (over all pairs and the replicates with an estimate), ``mc_se``
        (from the replicates' own coverages), ``worst_pair`` (the lowest pair's coverage),
        ``mean_width`` (Elo points), ``design_effect`` (mean clustered over per-battle
        variance), ``replicates``, ``no_estimate`` (the share of benchmarks where a model never
        lost: no finite rating, no interval).

    Examples
    --------
    >>> table = simulate_battles_coverage(prompts=(30,), per_prompt=(4,), prompt_sd=(1.0,),
    ...                                   designs=("random_pairs",), replicates=20)
    >>> table["reading"].tolist()
    ['per_battle', 'model', 'clustered']
    """
    readings = [r for r in READINGS if r != "bootstrap" or bootstrap_replicates]
    z = special.ndtri(0.5 + level / 2)
    names = np.array([str(i) for i in range(len(STRENGTHS))])
    rows = []
    for design, g, m, sd in itertools.product(designs, prompts, per_prompt, prompt_sd):
        rng = setting_rng(seed, STUDY, g, m, sd, tie_threshold, DESIGNS.index(design))
        a, b, y = draw_battles(
            rng, replicates, g, m, prompt_sd=sd, tie_threshold=tie_threshold, design=design
        )
        truth = target_differences(sd, tie_threshold)
        cluster = np.arange(g * m) // m
        hits = {r: [] for r in readings}
        widths = {r: [] for r in readings}
        effects, no_estimate = [], 0
        for i in range(replicates):
            try:
                fit = fit_bradley_terry(
                    names[a[i]], names[b[i]], y[i], cluster=cluster, models=names
                )
            except ValueError:  # a model that never lost: no finite estimate, no interval
                no_estimate += 1
                continue
            draws = (
                cluster_bootstrap(fit, bootstrap_replicates, rng=rng)
                if bootstrap_replicates
                else None
            )
            for r, (hit, width) in _interval_hits(fit, draws, truth, z, readings, level).items():
                hits[r].append(hit)
                widths[r].append(width)
            naive, blocked = (rating_differences(fit, r)[1] for r in ("per_battle", "clustered"))
            upper = np.triu_indices(len(truth), k=1)
            effects.append(np.mean((blocked[upper] / naive[upper]) ** 2))
        for r in readings:
            covered = np.array(hits[r], dtype=float)
            per_replicate = covered.mean(axis=1)
            rows.append(
                {
                    "design": design,
                    "prompts": g,
                    "per_prompt": m,
                    "prompt_sd": sd,
                    "battles": g * m,
                    "reading": r,
                    "coverage": float(covered.mean()),
                    "mc_se": float(per_replicate.std(ddof=1) / np.sqrt(len(per_replicate))),
                    "worst_pair": float(covered.mean(axis=0).min()),
                    "mean_width": float(np.mean(widths[r]) * 400 / np.log(10)),
                    "design_effect": float(np.mean(effects)),
                    "replicates": replicates,
                    "no_estimate": no_estimate / replicates,
                }
            )
    return pd.DataFrame(rows)
