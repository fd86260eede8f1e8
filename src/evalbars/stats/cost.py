"""Cost beside accuracy: the cost per question, accuracy per dollar, the cost-accuracy frontier.

A cost is known per (model, question): tokens times a price
(:func:`evalbars.data.prices.token_cost`, the price per million input and output tokens, never
guessed), or a cost the logs record. Accuracy and cost
of every model are then means over the same questions, and their joint covariance
(:func:`evalbars.stats.best.winners.mean_covariance` of the stacked matrix ``[correct, cost]``,
paired, and CR2-clustered by category where there are categories) carries both the pairing
across models and the correlation of a model's accuracy with its own cost.

- :func:`cost_table`: per model, the mean cost per question with its interval, and accuracy per
  dollar :math:`r = \\bar a/\\bar c` with a delta-method interval,
  :math:`\\operatorname{Var}(r) \\approx r^2 [V_a/\\bar a^2 + V_c/\\bar c^2 - 2 V_{ac}/(\\bar a
  \\bar c)]`.
- :func:`frontier_set`: which models are on the observed Pareto frontier (no other model at
  least as accurate and at most as costly, one of them strictly), and a confidence set that
  holds the whole true frontier with probability at least :math:`1-\\alpha`. A model leaves the
  set only when some model is significantly more accurate **and** significantly cheaper, every
  such statement made at one critical value c simultaneous over all pairs and both measures. A
  true frontier model is dominated by no model, so leaving it out needs a false statement, and
  all statements hold together with probability :math:`1-\\alpha` (the simultaneous-pairs
  argument of Mogstad, Romano, Shaikh and Wilhelm 2024, applied to dominance).
- :func:`cost_claim_p`: the one-sided p of the two cost claims evalbars tests:
  ``A >= B - d at <= x cost`` (non-inferior accuracy at no more than x times B's cost), an
  intersection-union test, :math:`p = \\max(p_{acc}, p_{cost})` with :math:`p_{acc}` for
  :math:`H_0: \\mu_A - \\mu_B \\le -d` and :math:`p_{cost}` for :math:`H_0: c_A - x\\,c_B \\ge 0`
  (Berger 1982); and ``A on frontier``: for every other model B, evidence that B does not
  dominate A (A significantly more accurate, or significantly cheaper: the smaller of the two
  p-values, doubled for the two ways), the largest over B.

References
----------
.. [1] Berger, R. L. (1982). Multiparameter hypothesis testing and acceptance sampling.
   Technometrics 24(4), 295-300 (intersection-union tests).
.. [2] Mogstad, M., Romano, J. P., Shaikh, A. M. and Wilhelm, D. (2024). Inference for ranks.
   Review of Economic Studies 91(1), 476-518.
.. [3] Oehlert, G. W. (1992). A note on the delta method. The American Statistician 46(1),
   27-29.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA, SEED
from evalbars.stats.best.winners import (
    mean_covariance,
    mean_variance,
    simultaneous_critical_value,
)

__all__ = [
    "joint_covariance",
    "cost_table",
    "frontier_set",
    "cost_claim_p",
    "frontier_rival_p",
    "reference_df",
]


def joint_covariance(correct, cost, clusters=None) -> np.ndarray:
    """Covariance of the 2K means ``[accuracy_1..K, cost_1..K]`` on shared questions.

    Parameters
    ----------
    correct, cost : array_like, shape (n, K)
        Per-question scores and costs of K models on the same n questions.
    clusters : array_like, shape (n,), optional
        Category of each question (CR2-clustered covariance).

    Returns
    -------
    ndarray, shape (2K, 2K)
        Blocks accuracy-accuracy, accuracy-cost, cost-cost
        (:func:`evalbars.stats.best.winners.mean_covariance` of the stacked matrix).
    """
    return mean_covariance(
        np.hstack([np.asarray(correct, float), np.asarray(cost, float)]), clusters
    )


def cost_table(correct, cost, models, clusters=None, alpha: float = ALPHA) -> pd.DataFrame:
    """Per model: accuracy, mean cost per question and accuracy per dollar, with intervals.

    Parameters
    ----------
    correct, cost : array_like, shape (n, K)
        Per-question scores and costs on shared questions.
    models : sequence of str
        The K names.
    clusters : array_like, shape (n,), optional
        Category of each question.
    alpha : float
        Error rate of each interval (t reference on :func:`reference_df` degrees of freedom).

    Returns
    -------
    DataFrame
        ``model, questions, accuracy, accuracy_se, accuracy_low, accuracy_high, mean_cost,
        cost_se, cost_low, cost_high, accuracy_per_dollar, apd_low, apd_high`` (accuracy per
        dollar: NaN with a zero cost; its interval by the delta method, clipped at 0); the
        accuracy and cost intervals are t ones (:func:`reference_df`) from the same covariance, clipped to [0, 1]
        and at 0.

    Examples
    --------
    >>> import numpy as np
    >>> correct = np.array([[1, 0], [1, 1], [0, 1], [1, 1.]])
    >>> cost = np.array([[0.02, 0.01], [0.03, 0.01], [0.02, 0.02], [0.01, 0.01]])
    >>> cost_table(correct, cost, ["a", "b"])[["model", "mean_cost"]].round(4).values.tolist()
    [['a', 0.02], ['b', 0.0125]]
    """
    correct = np.asarray(correct, float)
    cost = np.asarray(cost, float)
    size = correct.shape[1]
    cov = joint_covariance(correct, cost, clusters)
    accuracy, mean_cost = correct.mean(axis=0), cost.mean(axis=0)
    var_a = np.diag(cov)[:size]
    var_c = np.diag(cov)[size:]
    cov_ac = np.diag(cov[:size, size:])
    z = special.stdtrit(reference_df(correct.shape[0], clusters), 1 - alpha / 2)
    cost_se = np.sqrt(var_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mean_cost > 0, accuracy / mean_cost, np.nan)
        relative = var_a / accuracy**2 + var_c / mean_cost**2 - 2 * cov_ac / (accuracy * mean_cost)
        ratio_se = np.abs(ratio) * np.sqrt(np.clip(relative, 0.0, None))
    accuracy_se = np.sqrt(np.clip(var_a, 0.0, None))
    return pd.DataFrame(
        {
            "model": list(models),
            "questions": correct.shape[0],
            "accuracy": accuracy,
            "accuracy_se": accuracy_se,
            "accuracy_low": np.clip(accuracy - z * accuracy_se, 0.0, 1.0),
            "accuracy_high": np.clip(accuracy + z * accuracy_se, 0.0, 1.0),
            "mean_cost": mean_cost,
            "cost_se": cost_se,
            "cost_low": np.maximum(mean_cost - z * cost_se, 0.0),
            "cost_high": mean_cost + z * cost_se,
            "accuracy_per_dollar": ratio,
            "apd_low": np.maximum(ratio - z * ratio_se, 0.0),
            "apd_high": ratio + z * ratio_se,
        }
    )


def _observed_frontier(accuracy, mean_cost) -> np.ndarray:
    """True for the models no other model weakly dominates (at least as accurate, at most as
    costly, one strictly)."""
    at_least = accuracy[None, :] >= accuracy[:, None]  # [m, j]: j at least as accurate as m
    at_most = mean_cost[None, :] <= mean_cost[:, None]
    strictly = (accuracy[None, :] > accuracy[:, None]) | (mean_cost[None, :] < mean_cost[:, None])
    dominated = at_least & at_most & strictly
    return ~dominated.any(axis=1)


def frontier_set(
    correct, cost, models, clusters=None, alpha: float = ALPHA, seed: int = SEED
) -> pd.DataFrame:
    """The observed cost-accuracy frontier and a confidence set for the true one.

    Parameters
    ----------
    correct, cost : array_like, shape (n, K)
        Per-question scores and costs on shared questions.
    models : sequence of str
        The K names.
    clusters : array_like, shape (n,), optional
        Category of each question.
    alpha : float
        The set holds every true frontier model with probability at least :math:`1-\\alpha`.
    seed : int
        Seed of the simultaneous critical value's draws.

    Returns
    -------
    DataFrame
        One row per model: ``model, accuracy, mean_cost, on_frontier`` (observed),
        ``in_frontier_set`` (the confidence set), ``dominated_by`` (the model that
        significantly dominates it, the most accurate such, or empty), ``critical_value``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> correct = (rng.random((500, 3)) < [0.8, 0.6, 0.79]).astype(float)
    >>> cost = np.column_stack([np.full(500, 3.0), np.full(500, 1.0), np.full(500, 0.5)])
    >>> cost += rng.normal(0, 0.1, (500, 3))
    >>> frontier_set(correct, cost, list("abc"))[["model", "in_frontier_set"]].values.tolist()
    [['a', True], ['b', False], ['c', True]]
    """
    correct = np.asarray(correct, float)
    cost = np.asarray(cost, float)
    size = correct.shape[1]
    models = list(models)
    accuracy, mean_cost = correct.mean(axis=0), cost.mean(axis=0)
    on_frontier = _observed_frontier(accuracy, mean_cost)
    if size == 1:
        critical = np.nan
        dominated = np.zeros((1, 1), bool)
    else:
        cov = joint_covariance(correct, cost, clusters)
        first, second = np.triu_indices(size, k=1)
        pairs = first.size
        contrast = np.zeros((2 * pairs, 2 * size))
        rows = np.arange(pairs)
        contrast[rows, first], contrast[rows, second] = 1.0, -1.0
        contrast[pairs + rows, size + first], contrast[pairs + rows, size + second] = 1.0, -1.0
        critical = simultaneous_critical_value(contrast @ cov @ contrast.T, alpha, seed=seed)
        diagonal = np.diag(cov)
        se_acc = np.sqrt(
            np.clip(
                diagonal[:size, None] + diagonal[None, :size] - 2 * cov[:size, :size], 0.0, None
            )
        )
        cost_block = cov[size:, size:]
        se_cost = np.sqrt(
            np.clip(diagonal[size:, None] + diagonal[None, size:] - 2 * cost_block, 0.0, None)
        )
        # [m, j]: j significantly more accurate than m and significantly cheaper.
        more_accurate = accuracy[None, :] - accuracy[:, None] > critical * se_acc
        cheaper = mean_cost[:, None] - mean_cost[None, :] > critical * se_cost
        dominated = more_accurate & cheaper
        np.fill_diagonal(dominated, False)
    by_accuracy = np.where(dominated, accuracy[None, :], -np.inf)
    dominator = np.where(dominated.any(axis=1), by_accuracy.argmax(axis=1), -1)
    return pd.DataFrame(
        {
            "model": models,
            "accuracy": accuracy,
            "mean_cost": mean_cost,
            "on_frontier": on_frontier,
            "in_frontier_set": ~dominated.any(axis=1),
            "dominated_by": [models[j] if j >= 0 else "" for j in dominator],
            "critical_value": critical,
        }
    )


def reference_df(questions: int, clusters=None) -> float:
    """Degrees of freedom of the t reference of the cost readings: G - 1 with G >= 2 categories
    (the clustered SE rests on G category sums), else n - 1 (at least 1).

    A normal reference under-covers where the SE rests on few units: with 5 categories the
    cost intervals covered 84% to 87% and the cost claims false at their boundary were supported
    5.4% to 6.2% of the time at a level of 2.5% (:mod:`evalbars.studies.cost_coverage`).

    Examples
    --------
    >>> reference_df(20), reference_df(100, [0] * 50 + [1] * 50)
    (19.0, 1.0)
    """
    groups = np.unique(clusters).size if clusters is not None else 0
    return float(max(groups - 1 if groups >= 2 else questions - 1, 1))


def _one_sided_p(values, clusters, null: float = 0.0) -> np.ndarray:
    """One-sided p of :math:`H_0: \\text{mean} \\le` ``null`` for each column of per-question
    values (t reference on :func:`reference_df` degrees of freedom, the SE of :func:`evalbars.stats.best.winners.mean_variance`); 1 where
    the SE is zero, which is no evidence of precision."""
    values = np.asarray(values, float)
    column = values.ndim == 1
    values = values[:, None] if column else values
    se = np.sqrt(mean_variance(values, clusters))
    df = reference_df(values.shape[0], clusters)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, special.stdtr(df, -(values.mean(axis=0) - null) / se), 1.0)
    return float(p[0]) if column else p


def cost_claim_p(
    correct,
    cost,
    models,
    first: str,
    second: str | None = None,
    *,
    kind: str,
    margin: float = 0.0,
    cost_ratio: float = 1.0,
    clusters=None,
    opposite: bool = False,
) -> float:
    """One-sided p of a cost claim (small p supports it), or of its opposite.

    Parameters
    ----------
    correct, cost : array_like, shape (n, K)
        Per-question scores and costs on shared questions.
    models : sequence of str
        The K names.
    first, second : str
        The claim's models: A and (for ``noninferior_at_cost``) B.
    kind : {"noninferior_at_cost", "on_frontier"}
        ``A >= B - d at <= x cost`` or ``A on frontier``.
    margin : float
        d, as a proportion (0.02 for 2 points).
    cost_ratio : float
        x: A's cost may be at most x times B's.
    clusters : array_like, shape (n,), optional
        Category of each question.
    opposite : bool
        The p of the claim's opposite instead (small p contradicts the claim): for
        ``noninferior_at_cost``, "A is worse than B by more than d, or costs more than x times
        B", :math:`\\min(1, 2\\min(q_{acc}, q_{cost}))` (Bonferroni over the two ways); for
        ``on_frontier``, "some B is more accurate and cheaper than A",
        :math:`\\min(1, (K-1)\\min_B \\max(q_{acc,B}, q_{cheaper,B}))` (each B an
        intersection-union test, Bonferroni over the K - 1 rivals).

    Returns
    -------
    float
        The intersection-union p (see the module docstring), or its opposite's.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> correct = (rng.random((2000, 2)) < [0.80, 0.81]).astype(float)
    >>> cost = np.column_stack([np.full(2000, 0.2), np.full(2000, 1.0)])
    >>> p = cost_claim_p(correct, cost, ["a", "b"], "a", "b", kind="noninferior_at_cost",
    ...                  margin=0.05, cost_ratio=0.5)
    >>> p < 0.05
    True
    """
    correct = np.asarray(correct, float)
    cost = np.asarray(cost, float)
    models = list(models)
    a = models.index(first)
    if kind == "noninferior_at_cost":
        b = models.index(second)
        if opposite:
            q_accuracy = _one_sided_p(correct[:, b] - correct[:, a], clusters, margin)
            q_cost = _one_sided_p(cost[:, a] - cost_ratio * cost[:, b], clusters)
            return float(min(1.0, 2 * min(q_accuracy, q_cost)))
        p_accuracy = _one_sided_p(correct[:, a] - correct[:, b], clusters, -margin)
        p_cost = _one_sided_p(cost_ratio * cost[:, b] - cost[:, a], clusters)
        return max(p_accuracy, p_cost)
    if kind == "on_frontier":
        rivals = np.arange(len(models)) != a
        if not rivals.any():
            return 1.0 if opposite else 0.0
        per_rival = frontier_rival_p(correct, cost, a, clusters, opposite=opposite)
        if opposite:
            return float(min(1.0, int(rivals.sum()) * per_rival.min()))
        return float(per_rival.max())
    raise ValueError(f"unknown cost claim kind {kind!r}")


def frontier_rival_p(correct, cost, model: int, clusters=None, opposite: bool = False):
    """Per rival B of ``model`` (A), the one-sided p that B does not dominate A, or (with
    ``opposite``) that it does.

    Parameters
    ----------
    correct, cost : array_like, shape (n, K)
        Per-question scores and costs on shared questions.
    model : int
        A's column.
    clusters : array_like, shape (n,), optional
        Category of each question.
    opposite : bool
        The p of "B is more accurate and cheaper than A" (intersection-union: the larger of
        the two one-sided p) instead of "A is more accurate, or cheaper, than B" (the smaller,
        doubled for the two ways).

    Returns
    -------
    ndarray, shape (K - 1,)
        One p per rival, the other columns in their order; :func:`cost_claim_p` of
        ``on_frontier`` is their largest (the claim), or K - 1 times their smallest (the
        opposite).

    Examples
    --------
    >>> import numpy as np
    >>> correct = np.array([[1, 0, 1], [1, 1, 0], [1, 0, 0], [0, 0, 1.]])
    >>> cost = np.array([[1, 2, 3], [1, 2, 3], [1.5, 2, 3], [1, 2, 3.5]])
    >>> frontier_rival_p(correct, cost, 0).round(4).tolist()
    [0.004, 0.0015]
    """
    correct = np.asarray(correct, float)
    cost = np.asarray(cost, float)
    rivals = np.arange(correct.shape[1]) != model
    if opposite:
        q_accuracy = _one_sided_p(correct[:, rivals] - correct[:, [model]], clusters)
        q_cheaper = _one_sided_p(cost[:, [model]] - cost[:, rivals], clusters)
        return np.maximum(q_accuracy, q_cheaper)
    p_accuracy = _one_sided_p(correct[:, [model]] - correct[:, rivals], clusters)
    p_cheaper = _one_sided_p(cost[:, rivals] - cost[:, [model]], clusters)
    return np.minimum(1.0, 2 * np.minimum(p_accuracy, p_cheaper))
