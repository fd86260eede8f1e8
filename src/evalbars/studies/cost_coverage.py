r"""Coverage of the cost readings, and the type-I error of the cost claims, by seeded simulation.

Four models answer ``questions`` questions. Model k is right on question i when
:math:`\theta_k + u_{kg} - b_i + e_{ik} > 0` (:math:`b_i, e_{ik} \sim N(0, 1)`; the model x
category effect :math:`u_{kg} \sim N(0, \tau^2)` over ``categories`` equal categories), so its
true accuracy is :math:`\Phi(\theta_k / \sqrt{2 + \tau^2})`. Its cost on the question is
:math:`c_k \exp(s\,\ell_i + s\,\epsilon_{ik} + v_{kg} - s^2 - \tau^2/2)`, a length
:math:`\ell_i` shared by every model (costs are paired, as token counts of one prompt are), with
:math:`s = 0.5` and :math:`v_{kg} \sim N(0, \tau^2)`: its true mean cost is :math:`c_k`.

:data:`MODELS` are placed so that the true cost-accuracy frontier is A, B and C (each cheaper
and less accurate than the one before) and D is dominated by B (less accurate and dearer).
Each board is read as the workflow reads it (:func:`evalbars.stats.cost.cost_table`,
:func:`~evalbars.stats.cost.frontier_set`, :func:`~evalbars.stats.cost.cost_claim_p`,
clustered by category where there are categories), and records:

- whether each model's accuracy, mean-cost and accuracy-per-dollar interval holds the truth
  (the least of the four models is reported);
- whether the frontier set holds the whole true frontier {A, B, C};
- whether a claim that is false at its boundary is supported (the claims' rule: the doubled
  one-sided p below alpha): ``B >= A - d at <= 0.5 cost`` with d the true gap (the accuracy part
  on its boundary, the cost part true), and ``B >= A - 50 at <= x cost`` with x the true cost
  ratio (the cost part on its boundary).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.cost import cost_claim_p, cost_table, frontier_set

__all__ = ["MODELS", "SETTINGS", "simulate_cost_coverage", "cost_coverage_table"]

#: The models: latent ability theta and true mean cost per question (dollars).
MODELS = pd.DataFrame(
    {
        "model": ["A", "B", "C", "D"],
        "theta": [0.9, 0.6, 0.0, 0.3],
        "cost": [3e-4, 3e-5, 5e-6, 1e-4],
    }
)
#: The true frontier (:data:`MODELS`): D is less accurate and dearer than B.
TRUE_FRONTIER = ("A", "B", "C")
#: Settings of :func:`cost_coverage_table`: (questions, categories, tau); 0 categories: none.
SETTINGS = (
    (20, 0, 0.0),
    (100, 0, 0.0),
    (500, 0, 0.0),
    (100, 5, 0.3),
    (500, 14, 0.3),
    (1400, 57, 0.3),
)
#: The spread of a question's cost (log scale): shared length and the model's own variation.
COST_SPREAD = 0.5


def _board(rng, questions: int, categories: int, tau: float):
    """One board: 0/1 scores, costs and the questions' categories (None without)."""
    groups = max(categories, 1)
    per = questions // groups
    size = len(MODELS)
    theta = MODELS["theta"].to_numpy()
    difficulty = rng.standard_normal((per * groups, 1))
    effect = np.repeat(tau * rng.standard_normal((groups, size)), per, axis=0)
    correct = theta + effect - difficulty + rng.standard_normal((per * groups, size)) > 0
    s = COST_SPREAD
    length = rng.standard_normal((per * groups, 1))
    shift = np.repeat(tau * rng.standard_normal((groups, size)), per, axis=0)
    log_cost = s * length + s * rng.standard_normal((per * groups, size)) + shift
    cost = MODELS["cost"].to_numpy() * np.exp(log_cost - s * s - tau * tau / 2)
    clusters = np.repeat(np.arange(groups), per) if categories else None
    return correct.astype(float), cost, clusters


def simulate_cost_coverage(
    questions: int,
    categories: int = 0,
    tau: float = 0.0,
    replicates: int = 1000,
    *,
    alpha: float = ALPHA,
    seed: int = 0,
) -> dict:
    """Coverage of the cost readings and type-I error of the cost claims in one setting.

    Parameters
    ----------
    questions : int
        Questions per board (rounded down to a multiple of ``categories``).
    categories : int, default 0
        Equal categories the readings cluster by; 0: none (independent questions).
    tau : float, default 0.0
        SD of the model x category effects on accuracy (latent scale) and on log cost.
    replicates : int, default 1000
        Boards drawn.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Error rate of the intervals, the frontier set and the claims.
    seed : int, default 0
        Study seed (:func:`evalbars.seeding.setting_rng`, study ``cost_coverage``).

    Returns
    -------
    dict
        ``questions, categories, tau, replicates``; ``accuracy, cost, accuracy_per_dollar``
        (the least coverage over the four models of each interval), ``frontier_set`` (the set
        holds A, B and C), ``accuracy_boundary`` and ``cost_boundary`` (the share of boards where
        the claim false at that boundary is supported; the rule's level is alpha / 2), and
        ``mc_se`` (the Monte Carlo SE of a 95% coverage).

    Examples
    --------
    >>> row = simulate_cost_coverage(100, replicates=40)
    >>> sorted(k for k in row if k not in ("questions", "categories", "tau", "replicates"))
    ['accuracy', 'accuracy_boundary', 'accuracy_per_dollar', 'cost', 'cost_boundary', 'frontier_set', 'mc_se']
    """
    rng = setting_rng(seed, "cost_coverage", questions, categories, tau, replicates)
    names = MODELS["model"].tolist()
    truth_accuracy = special.ndtr(MODELS["theta"].to_numpy() / np.sqrt(2.0 + tau**2))
    truth_cost = MODELS["cost"].to_numpy()
    truths = {
        "accuracy": truth_accuracy,
        "cost": truth_cost,
        "accuracy_per_dollar": truth_accuracy / truth_cost,
    }
    bounds = {"accuracy": "accuracy", "cost": "cost", "accuracy_per_dollar": "apd"}
    gap = float(truth_accuracy[0] - truth_accuracy[1])  # A's lead over B: the boundary's d
    ratio = float(truth_cost[1] / truth_cost[0])  # B's cost over A's: the boundary's x
    covered = {name: [] for name in (*truths, "frontier_set")}
    supported = {"accuracy_boundary": [], "cost_boundary": []}
    for _ in range(replicates):  # each board is read as the workflow reads one
        correct, cost, clusters = _board(rng, questions, categories, tau)
        table = cost_table(correct, cost, names, clusters, alpha=alpha)
        for name, truth in truths.items():
            low, high = table[f"{bounds[name]}_low"], table[f"{bounds[name]}_high"]
            covered[name].append(((low <= truth) & (truth <= high)).to_numpy())
        frontier = frontier_set(correct, cost, names, clusters, alpha=alpha, seed=seed)
        kept = set(frontier.loc[frontier["in_frontier_set"], "model"])
        covered["frontier_set"].append(set(TRUE_FRONTIER) <= kept)
        for name, margin, x in (("accuracy_boundary", gap, 0.5), ("cost_boundary", 0.5, ratio)):
            p = cost_claim_p(
                correct, cost, names, "B", "A", kind="noninferior_at_cost", margin=margin,
                cost_ratio=x, clusters=clusters,
            )  # fmt: skip
            supported[name].append(2 * p < alpha)
    row = {
        "questions": questions // max(categories, 1) * max(categories, 1),
        "categories": categories,
        "tau": tau,
        "replicates": replicates,
    }
    for name in truths:
        row[name] = float(np.asarray(covered[name]).mean(axis=0).min())
    row["frontier_set"] = share_and_se(covered["frontier_set"])[0]
    row |= {name: share_and_se(values)[0] for name, values in supported.items()}
    row["mc_se"] = float(np.sqrt(0.95 * 0.05 / replicates))
    return row


def cost_coverage_table(replicates: int = 1000, settings=SETTINGS, seed: int = 0) -> pd.DataFrame:
    """:func:`simulate_cost_coverage` over ``settings`` (default :data:`SETTINGS`), a row each."""
    return pd.DataFrame(
        [simulate_cost_coverage(n, g, tau, replicates, seed=seed) for n, g, tau in settings]
    )
