r"""Bradley-Terry ratings from pairwise battles: the fit, ties, weights and three intervals.

The model
---------
Model k has a log-strength :math:`\theta_k`; in a battle of a against b,

.. math::

   P(a \text{ beats } b) = \sigma(\eta), \qquad \eta = \theta_a - \theta_b, \qquad
   \sigma(x) = 1 / (1 + e^{-x})

(Bradley and Terry 1952). Only differences are identified. Ratings are reported on the Elo
scale, :math:`R_k = c + (400 / \ln 10)\,\theta_k` (:data:`ELO_SCALE`), anchored where the
user says: the mean rating at ``anchor_rating`` (1000 by default) or one model at it.

Ties (``ties=``):

- ``"half"`` (default; LMArena, Arena-Hard-Auto's BT): a tie is half a win and half a loss,
  :math:`\ell = \sum_i w_i \{y_i \eta_i - \log(1 + e^{\eta_i})\}` with
  :math:`y_i \in \{1, \tfrac12, 0\}`. It is a quasi-likelihood (ties are not modelled).
- ``"rao_kupper"`` (Rao and Kupper 1967; Arena-Hard-Auto's ``rk`` loss):
  :math:`P(a \succ b) = \sigma(\eta - \tau)`, :math:`P(b \succ a) = \sigma(-\eta - \tau)`,
  :math:`P(\text{tie}) = 1 - P(a \succ b) - P(b \succ a)`, :math:`\tau > 0`
  (Rao and Kupper's threshold is :math:`\log\theta_{RK} = \tau`).
- ``"davidson"`` (Davidson 1970): :math:`P(a \succ b) = e^{\eta/2}/D`,
  :math:`P(b \succ a) = e^{-\eta/2}/D`, :math:`P(\text{tie}) = \nu / D`,
  :math:`D = e^{\eta/2} + e^{-\eta/2} + \nu`; the tie parameter is reported as :math:`\nu`.

Weights :math:`w_i` multiply a battle's log-likelihood. Arena-Hard-Auto counts a strong verdict
(``A>>B``) as three identical battles (``show_result.py``, ``weight=3``): a weight of 3 gives
the same estimates. The per-battle and clustered variances below treat a weighted battle as one
observation (its score is :math:`w_i s_i`), not as three independent ones.

The fit
-------
Without style features every battle enters through the counts of wins, ties and losses of its
(cluster, pair) unit (:func:`aggregate_battles`): these are sufficient for the estimates and
for all three variances, so a fit costs O(pairs) per Newton step however many battles there
are. Newton-Raphson on :math:`\theta_2, \dots, \theta_K` (and :math:`\tau` or
:math:`\log\nu`), :math:`\theta_1 = 0`, halving steps that lower the log-likelihood; the
Hessian is a graph Laplacian. The maximum-likelihood estimate
exists iff every split of the models into two groups has a win or a tie each way (Ford 1957):
the directed "won or tied against" graph is strongly connected; otherwise a ValueError names a
group that never lost to the rest.

Style control (``features=``) is the contextual model
:math:`\eta_i = \theta_{a_i} - \theta_{b_i} + z_i^\top\gamma` with battle-level features
:math:`z_i` (LMArena's style control: differences of answer length and markdown counts,
:func:`evalbars.readings.battles.style_features`), ties as half; it is fitted battle by
battle (Newton, sparse design) and the ratings are net of style.

Intervals
---------
With :math:`H` the negative Hessian of :math:`\ell` and :math:`s_i` battle i's score,

- ``model``: :math:`H^{-1}` (inverse observed information; for ``half`` the Fisher's);
- ``per_battle``: the sandwich :math:`H^{-1} (\sum_i w_i^2 s_i s_i^\top) H^{-1}` (HC0; what
  arena-rank's ``ci_method="sandwich"`` computes, without its :math:`10^{-5}N` ridge);
- ``clustered``: :math:`H^{-1} \{\tfrac{G}{G-1}\sum_g U_g U_g^\top\} H^{-1}` with
  :math:`U_g = \sum_{i \in g} w_i s_i` summed over cluster g (a prompt, or a voter): CR1 on the
  score contributions (Cameron and Miller 2015; R's ``sandwich::vcovCL(type = "HC0",
  cadjust = TRUE)``). Battles of one prompt share the prompt's difficulty and style, and
  Arena-Hard-Auto judges every prompt twice with the positions swapped, so they are not
  independent: the per-battle variance understates the uncertainty when they agree.
- the cluster bootstrap (:func:`cluster_bootstrap`): clusters drawn with replacement, each
  replicate's counts a weighted sum of the clusters' counts, all refitted at once by Newton.

Differences :math:`\theta_a - \theta_b` and their variances :math:`(e_a - e_b)^\top V (e_a -
e_b)` do not depend on the identification; a rating's interval is that of its difference from
the anchor.

References
----------
.. [1] Bradley, R. A. and Terry, M. E. (1952). Rank analysis of incomplete block designs: I.
   The method of paired comparisons. Biometrika 39, 324-345.
.. [2] Ford, L. R. (1957). Solution of a ranking problem from binary comparisons. American
   Mathematical Monthly 64(8), 28-33.
.. [3] Rao, P. V. and Kupper, L. L. (1967). Ties in paired-comparison experiments: a
   generalization of the Bradley-Terry model. JASA 62, 194-204.
.. [4] Davidson, R. R. (1970). On extending the Bradley-Terry model to accommodate ties in
   paired comparison experiments. JASA 65, 317-328.
.. [5] Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to cluster-robust
   inference. Journal of Human Resources 50(2), 317-372.
.. [6] Chiang, W.-L. et al. (2024). Chatbot Arena: an open platform for evaluating LLMs by
   human preference. ICML 2024, arXiv:2403.04132 (Elo scale, sandwich intervals, style
   control).
.. [7] Li, T. et al. (2024). From crowdsourced data to high-quality benchmarks: Arena-Hard
   and BenchBuilder pipeline. arXiv:2406.11939.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse, special
from scipy.sparse import csgraph

from evalbars.defaults import LEVEL, SEED

__all__ = [
    "ELO_SCALE",
    "TIE_MODELS",
    "COVARIANCES",
    "BattleUnits",
    "aggregate_battles",
    "BradleyTerryFit",
    "fit_bradley_terry",
    "rating_differences",
    "elo_ratings",
    "BootstrapDraws",
    "cluster_bootstrap",
]

#: Elo points per unit of log-strength: 400 / ln 10 (a 400-point gap is 10:1 odds).
ELO_SCALE = 400.0 / np.log(10.0)
#: Tie models of :func:`fit_bradley_terry`.
TIE_MODELS = ("half", "rao_kupper", "davidson")
#: Covariances a fit carries (``clustered`` only when clusters are given).
COVARIANCES = ("model", "per_battle", "clustered")
#: Replicates refitted together by :func:`cluster_bootstrap` (bounds the memory of one batch).
_BATCH_CELLS = 4_000_000


@dataclass(frozen=True)
class BattleUnits:
    """Battles aggregated into (cluster, pair) units: the sufficient statistics of a fit.

    Pairs are unordered, ``(pair_low, pair_high)`` with ``pair_low < pair_high`` (model codes);
    ``counts[u]`` holds the summed weights of unit u's wins, ties and losses of ``pair_low``,
    ``squares[u]`` the sums of squared weights (the per-battle variance needs them).
    """

    models: tuple
    pair_low: np.ndarray
    pair_high: np.ndarray
    unit_pair: np.ndarray
    unit_cluster: np.ndarray
    counts: np.ndarray
    squares: np.ndarray
    n_clusters: int
    n_battles: int

    def pair_counts(self) -> np.ndarray:
        """Counts per pair (pairs x 3), over all clusters."""
        out = np.zeros((len(self.pair_low), 3))
        np.add.at(out, self.unit_pair, self.counts)
        return out


def _codes(model_a, model_b, models):
    """Model codes of both columns and the model names (sorted unless ``models`` is given)."""
    a, b = np.asarray(model_a, dtype=object), np.asarray(model_b, dtype=object)
    names = pd.Index(sorted(set(a) | set(b)) if models is None else list(models))
    ca, cb = names.get_indexer(a), names.get_indexer(b)
    if (ca < 0).any() or (cb < 0).any():
        raise ValueError("model_a and model_b name models that are not in models")
    if (ca == cb).any():
        raise ValueError(f"battle {int(np.argmax(ca == cb))} has a model battling itself")
    return ca, cb, tuple(names)


def aggregate_battles(model_a, model_b, outcome, *, weight=None, cluster=None, models=None):
    """Battles as (cluster, pair) units of weighted win, tie and loss counts.

    Parameters
    ----------
    model_a, model_b : array_like of str
        The two models of each battle.
    outcome : array_like of float
        Score of ``model_a``: 1 (won), 0.5 (tie), 0 (lost).
    weight : array_like of float, optional
        Weight of each battle (default 1).
    cluster : array_like, optional
        Cluster of each battle (a prompt, a voter); default: each battle its own.
    models : sequence of str, optional
        The models' order (default sorted names).

    Returns
    -------
    BattleUnits

    Examples
    --------
    >>> units = aggregate_battles(["x", "y", "x"], ["y", "x", "y"], [1, 1, 0.5])
    >>> units.pair_counts().tolist()
    [[1.0, 1.0, 1.0]]
    """
    ca, cb, names = _codes(model_a, model_b, models)
    y = np.asarray(outcome, dtype=float)
    index = np.select([y == 1.0, y == 0.5, y == 0.0], [0, 1, 2], -1)  # a won, tie, b won
    if (index < 0).any():
        raise ValueError("outcome must be 1 (a won), 0.5 (tie) or 0 (b won)")
    n = len(ca)
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError("weight must be finite and non-negative, one per battle")
    low, high = np.minimum(ca, cb), np.maximum(ca, cb)
    # Outcomes from the lower code's side: a win of b is a loss of the lower model when b < a.
    index = np.where(ca < cb, index, 2 - index)
    pair_key, pair = np.unique(low * len(names) + high, return_inverse=True)
    if cluster is None:
        groups, n_groups = np.arange(n), n
    else:
        groups, uniques = pd.factorize(pd.Series(np.asarray(cluster, dtype=object)), sort=True)
        if (groups < 0).any():
            raise ValueError("cluster must not be null")
        n_groups = len(uniques)
    unit_key, unit = np.unique(groups.astype(np.int64) * len(pair_key) + pair, return_inverse=True)
    cells = unit * 3 + index
    size = len(unit_key) * 3
    counts = np.bincount(cells, w, minlength=size).reshape(-1, 3)
    squares = np.bincount(cells, w * w, minlength=size).reshape(-1, 3)
    return BattleUnits(
        models=names,
        pair_low=(pair_key // len(names)).astype(np.int64),
        pair_high=(pair_key % len(names)).astype(np.int64),
        unit_pair=(unit_key % len(pair_key)).astype(np.int64),
        unit_cluster=(unit_key // len(pair_key)).astype(np.int64),
        counts=counts,
        squares=squares,
        n_clusters=int(n_groups),
        n_battles=int(n),
    )


def _outcome_terms(eta, tau, ties):
    """Per outcome (win, tie, loss of the lower model) on the last axis: log p, its first
    derivatives in (eta, tau) and second derivatives (ee, et, tt)."""
    eta = eta[..., None]
    if ties == "half":
        p = special.expit(eta)
        logp = np.concatenate(
            [-np.logaddexp(0, -eta), -0.5 * (np.logaddexp(0, -eta) + np.logaddexp(0, eta)),
             -np.logaddexp(0, eta)], axis=-1)  # fmt: skip
        d_eta = np.concatenate([1 - p, 0.5 - p, -p], axis=-1)
        d_ee = np.broadcast_to(-p * (1 - p), d_eta.shape)
        zero = np.zeros_like(d_eta)
        return logp, d_eta, zero, d_ee, zero, zero
    tau = tau[..., None, None] if np.ndim(tau) else tau
    if ties == "rao_kupper":
        a, b = special.expit(eta - tau), special.expit(-eta - tau)
        t = np.maximum(1 - a - b, 1e-300)
        ga, gb = a * (1 - a), b * (1 - b)
        ha, hb = ga * (1 - 2 * a), gb * (1 - 2 * b)
        t_e, t_t = gb - ga, ga + gb
        t_ee = t_tt = -ha - hb
        t_et = ha - hb
        logp = np.concatenate(
            [-np.logaddexp(0, -(eta - tau)), np.log(t), -np.logaddexp(0, eta + tau)], axis=-1
        )
        d_eta = np.concatenate([1 - a, t_e / t, -(1 - b)], axis=-1)
        d_tau = np.concatenate([-(1 - a), t_t / t, -(1 - b)], axis=-1)
        d_ee = np.concatenate([-ga, t_ee / t - t_e**2 / t**2, -gb], axis=-1)
        d_et = np.concatenate([ga, t_et / t - t_e * t_t / t**2, -gb], axis=-1)
        d_tt = np.concatenate([-ga, t_tt / t - t_t**2 / t**2, -gb], axis=-1)
        return logp, d_eta, d_tau, d_ee, d_et, d_tt
    # Davidson, with tau = log(nu).
    log_d = np.logaddexp(np.logaddexp(eta / 2, -eta / 2), tau + 0 * eta)
    qw, ql, qt = np.exp(eta / 2 - log_d), np.exp(-eta / 2 - log_d), np.exp(tau - log_d)
    logp = np.concatenate([eta / 2 - log_d, tau - log_d, -eta / 2 - log_d], axis=-1)
    half_gap = (qw - ql) / 2
    d_eta = np.concatenate([0.5 - half_gap, -half_gap, -0.5 - half_gap], axis=-1)
    d_tau = np.concatenate([-qt, 1 - qt, -qt], axis=-1)
    shape = d_eta.shape
    d_ee = np.broadcast_to(-((qw + ql) / 4 - half_gap**2), shape)
    d_et = np.broadcast_to(qt * half_gap, shape)
    d_tt = np.broadcast_to(-(qt - qt**2), shape)
    return logp, d_eta, d_tau, d_ee, d_et, d_tt


def _per_model(values, low, high, k):
    """R x K sums of ``values`` (R x pairs): + at each pair's lower model, - at its higher."""
    r = values.shape[0]
    base = (np.arange(r) * k)[:, None]
    plus = np.bincount((base + low).ravel(), values.ravel(), r * k)
    return (plus - np.bincount((base + high).ravel(), values.ravel(), r * k)).reshape(r, k)


def _laplacian(values, low, high, k):
    """Stack of K x K weighted Laplacians: ``values`` (R x pairs) on the edges (low, high),
    each pair once."""
    r = values.shape[0]
    out = np.zeros((r, k, k))
    out[:, low, high] = out[:, high, low] = -values
    base = (np.arange(r) * k)[:, None]
    degree = np.bincount((base + low).ravel(), values.ravel(), r * k)
    degree += np.bincount((base + high).ravel(), values.ravel(), r * k)
    out.reshape(r, k * k)[:, :: k + 1] = degree.reshape(r, k)
    return out


def _state(counts, theta, tau, low, high, ties, derivatives=True):
    """Log-likelihood (and, with ``derivatives``, the gradient and negative Hessian over the
    free parameters: theta without the reference, then tau) of a stack of fits: ``counts``
    R x pairs x 3, ``theta`` R x K."""
    k = theta.shape[1]
    eta = theta[:, low] - theta[:, high]
    if ties == "half":  # sufficient: each pair's weight n and score s = wins + ties / 2
        n, s = counts.sum(axis=2), counts[..., 0] + 0.5 * counts[..., 1]
        loglik = np.sum(s * eta - n * np.logaddexp(0, eta), axis=1)
        if not derivatives:
            return loglik
        p = special.expit(eta)
        neg_hess = _laplacian(n * p * (1 - p), low, high, k)[:, 1:, 1:]
        return loglik, _per_model(s - n * p, low, high, k)[:, 1:], neg_hess
    logp, d_eta, d_tau, d_ee, d_et, d_tt = _outcome_terms(eta, tau, ties)
    loglik = np.einsum("rpo,rpo->r", counts, logp)
    if not derivatives:
        return loglik
    grad = _per_model(np.einsum("rpo,rpo->rp", counts, d_eta), low, high, k)[:, 1:]
    neg_hess = -_laplacian(np.einsum("rpo,rpo->rp", counts, d_ee), low, high, k)[:, 1:, 1:]
    cross = _per_model(np.einsum("rpo,rpo->rp", counts, d_et), low, high, k)[:, 1:]
    h_tt = np.einsum("rpo,rpo->r", counts, d_tt)
    grad = np.concatenate([grad, np.einsum("rpo,rpo->r", counts, d_tau)[:, None]], axis=1)
    edge = -np.concatenate([cross, h_tt[:, None]], axis=1)
    neg_hess = np.concatenate([neg_hess, edge[:, :-1, None]], axis=2)
    return loglik, grad, np.concatenate([neg_hess, edge[:, None, :]], axis=1)


def _solve(neg_hess, grad, live):
    """Newton steps of the live fits; a fit whose Hessian is singular is no longer live."""
    step = np.zeros_like(grad)
    live &= np.all(np.isfinite(neg_hess), axis=(1, 2))
    try:
        step[live] = np.linalg.solve(neg_hess[live], grad[live][..., None])[..., 0]
    except np.linalg.LinAlgError:  # rare: the singular ones are those of rank below full
        rank = np.linalg.matrix_rank(neg_hess[live])
        live[np.flatnonzero(live)[rank < neg_hess.shape[1]]] = False
        step[live] = np.linalg.solve(neg_hess[live], grad[live][..., None])[..., 0]
    return step


def _newton(counts, low, high, ties, theta, tau, max_iter=100, tol=1e-10):
    """Newton-Raphson with step halving for a stack of fits sharing their pairs.

    ``counts`` is R x pairs x 3; ``theta`` (R x K, column 0 held at 0) and ``tau`` (R,) are the
    starts. Returns ``(theta, tau, loglik, neg_hess, converged)``; a fit whose Hessian is
    singular or whose strengths run off (a model that never lost) is not converged.
    """
    k = theta.shape[1]
    theta, tau = theta.astype(float), tau.astype(float)
    live = np.ones(len(theta), dtype=bool)
    converged = np.zeros(len(theta), dtype=bool)
    loglik, grad, neg_hess = _state(counts, theta, tau, low, high, ties)
    for _ in range(max_iter):
        step = _solve(neg_hess, grad, live)
        if not live.any():
            break
        size = np.where(live, 1.0, 0.0)
        for _ in range(60):
            new_theta = theta.copy()
            new_theta[:, 1:] += size[:, None] * step[:, : k - 1]
            new_tau = tau + size * step[:, -1] if ties != "half" else tau
            # Rao-Kupper's threshold stays positive; a step past 0 is halved like a worse one.
            bad = new_tau <= 0 if ties == "rao_kupper" else np.zeros(len(tau), dtype=bool)
            kept_tau = np.where(bad, tau, new_tau)
            trial = _state(counts, new_theta, kept_tau, low, high, ties, False)
            worse = bad | ~np.isfinite(trial) | (trial < loglik - 1e-12 * np.abs(loglik))
            if not (worse & live).any():
                break
            size = np.where(worse, size / 2, size)
        theta, tau = new_theta, new_tau
        loglik, grad, neg_hess = _state(counts, theta, tau, low, high, ties)
        converged |= live & (np.max(np.abs(size[:, None] * step), axis=1) < tol)
        live &= ~converged & (np.max(np.abs(theta), axis=1) < 40)
    return theta, tau, loglik, neg_hess, converged


def _check_estimable(units: BattleUnits, ties: str) -> None:
    """Refuse data whose estimate does not exist (Ford 1957), naming a group that never lost."""
    k = len(units.models)
    counts = units.pair_counts()
    beat = np.zeros((k, k), dtype=bool)  # beat[i, j]: i won or tied against j at least once
    beat[units.pair_low, units.pair_high] = (counts[:, 0] + counts[:, 1]) > 0
    beat[units.pair_high, units.pair_low] = (counts[:, 2] + counts[:, 1]) > 0
    n_parts, labels = csgraph.connected_components(beat, directed=True, connection="strong")
    if n_parts > 1:
        # A strongly connected part that no model outside it ever beat never lost to the rest.
        condensed = np.zeros((n_parts, n_parts), dtype=bool)
        rows, cols = np.nonzero(beat)
        condensed[labels[rows], labels[cols]] = True
        np.fill_diagonal(condensed, False)
        top = int(np.flatnonzero(~condensed.any(axis=0))[0])
        group = [units.models[i] for i in np.flatnonzero(labels == top)]
        raise ValueError(
            f"no finite ratings: {group} never lost or tied a battle against the other models "
            "(every split of the models into two groups needs a win or a tie each way)"
        )
    if ties != "half":
        total = counts.sum(axis=0)
        if total[1] <= 0 or total[0] + total[2] <= 0:
            raise ValueError(f"ties={ties!r} needs both ties and decided battles in the data")


@dataclass(frozen=True)
class BradleyTerryFit:
    """A fitted Bradley-Terry model on the natural-log scale (``theta[0]`` is 0).

    ``covariances`` maps each of :data:`COVARIANCES` the fit has to a matrix over ``theta``
    (the first row and column zero), then :math:`\\tau` (Rao-Kupper), :math:`\\log\\nu`
    (Davidson) or ``gamma`` (style features).
    ``tie_parameter`` is Rao-Kupper's :math:`\\tau` or Davidson's :math:`\\nu` (NaN for
    ``half``); ``loglik`` is the (quasi-)log-likelihood at the estimate.
    """

    models: tuple
    ties: str
    theta: np.ndarray
    tie_parameter: float
    features: tuple
    gamma: np.ndarray
    covariances: dict
    loglik: float
    n_battles: int
    n_clusters: int
    units: BattleUnits | None = field(default=None, repr=False)

    def index(self, model) -> int:
        """Position of a model in :attr:`models`."""
        return self.models.index(model)

    def difference(self, a, b, covariance: str = "clustered") -> tuple[float, float]:
        """:math:`\\theta_a - \\theta_b` and its SE under ``covariance`` (log-odds units)."""
        diff, se = rating_differences(self, covariance)
        return float(diff[self.index(a), self.index(b)]), float(se[self.index(a), self.index(b)])


def _sparse(parts, n_rows, n_cols):
    """CSR matrix from (rows, cols, values) parts; repeated cells are summed."""
    rows, cols, vals = (np.concatenate([np.ravel(p[i]) for p in parts]) for i in range(3))
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_cols))


def _meats(units, theta, tau, ties, extra):
    """Per-battle (HC0) and clustered (CR1) meats over theta then tau (if any)."""
    k = len(units.models)
    low, high = units.pair_low[units.unit_pair], units.pair_high[units.unit_pair]
    _, d_eta, d_tau, *_ = _outcome_terms(theta[low] - theta[high], tau, ties)
    rows = np.arange(3 * len(low)).reshape(-1, 3)
    root = np.sqrt(units.squares)  # a battle's score enters squared, with its weight squared
    ends = [np.broadcast_to(m, rows.shape) for m in (low[:, None], high[:, None], np.array([[k]]))]
    parts = [
        (rows, end, sign * root * d)
        for end, sign, d in zip(ends, (1, -1, 1), (d_eta, d_eta, d_tau), strict=True)
    ]
    scores = _sparse(parts, rows.size, k + 1)[:, : k + extra]  # tau's column is 0 for "half"
    cluster, g = units.unit_cluster, units.n_clusters
    sums = [np.einsum("uo,uo->u", units.counts, d) for d in (d_eta, -d_eta, d_tau)]
    parts = [(cluster, end[:, 0], total) for end, total in zip(ends, sums, strict=True)]
    sums = _sparse(parts, g, k + 1)[:, : k + extra]
    per_battle, clustered = ((m.T @ m).toarray() for m in (scores, sums))
    return per_battle, clustered * (g / (g - 1) if g > 1 else np.nan)


def _covariances(neg_hess, meats: dict) -> dict:
    """Model and sandwich covariances over all parameters, the reference's row and column 0
    (``neg_hess`` is over the free parameters, each meat over all)."""
    bread = np.linalg.inv(neg_hess)
    size = bread.shape[0] + 1
    out = {}
    for name, free in [("model", bread)] + [
        (name, bread @ meat[1:, 1:] @ bread) for name, meat in meats.items()
    ]:
        full = np.zeros((size, size))
        full[1:, 1:] = (free + free.T) / 2
        out[name] = full
    return out


def fit_bradley_terry(
    model_a,
    model_b,
    outcome,
    *,
    weight=None,
    cluster=None,
    ties: str = "half",
    features=None,
    models=None,
    max_iter: int = 100,
) -> BradleyTerryFit:
    """Fit the Bradley-Terry model (module docstring) by Newton-Raphson.

    Parameters
    ----------
    model_a, model_b : array_like of str
        The two models of each battle.
    outcome : array_like of float
        Score of ``model_a``: 1 (won), 0.5 (tie), 0 (lost).
    weight : array_like of float, optional
        Weight of each battle (Arena-Hard-Auto gives a strong verdict 3); default 1.
    cluster : array_like, optional
        Cluster of each battle (prompt, or voter) for the ``clustered`` covariance.
    ties : {"half", "rao_kupper", "davidson"}
        How ties enter (module docstring).
    features : array_like or DataFrame, shape (n, f), optional
        Battle-level features beside the ratings (style control; ``ties="half"`` only). A
        DataFrame names them by its columns.
    models : sequence of str, optional
        Order of the models (default: sorted names); the first is the internal reference.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    BradleyTerryFit

    Raises
    ------
    ValueError
        No estimate (a group of models never lost to the rest), or no convergence.

    Examples
    --------
    >>> fit = fit_bradley_terry(["a", "a", "b", "b"], ["b", "b", "a", "a"], [1, 1, 1, 0])
    >>> round(fit.difference("a", "b", "model")[0], 6)  # 3 wins of 4: log 3
    1.098612
    """
    if ties not in TIE_MODELS:
        raise ValueError(f"ties must be one of {TIE_MODELS}, got {ties!r}")
    units = aggregate_battles(
        model_a, model_b, outcome, weight=weight, cluster=cluster, models=models
    )
    _check_estimable(units, ties)
    if features is not None:
        if ties != "half":
            raise ValueError("style features are fitted with ties='half' only")
        return _fit_contextual(
            model_a, model_b, outcome, weight, cluster, features, units, max_iter
        )
    counts = units.pair_counts()
    t = counts[:, 1].sum() / counts.sum()
    with np.errstate(divide="ignore"):  # start where equal strengths give the tie share t
        start = {"rao_kupper": np.log1p(t) - np.log1p(-t), "davidson": np.log(2 * t / (1 - t))}
    theta, tau, loglik, neg_hess, converged = _newton(
        counts[None], units.pair_low, units.pair_high, ties, np.zeros((1, len(units.models))),
        np.array([start.get(ties, 0.0)]), max_iter,
    )  # fmt: skip
    if not converged[0]:
        raise ValueError(f"the Bradley-Terry fit did not converge in {max_iter} Newton steps")
    theta, tau = theta[0], float(tau[0])
    per_battle, clustered = _meats(units, theta, tau, ties, int(ties != "half"))
    meats = {"per_battle": per_battle} | ({"clustered": clustered} if cluster is not None else {})
    tie_parameter = {"half": np.nan, "rao_kupper": tau, "davidson": np.exp(tau)}[ties]
    return BradleyTerryFit(
        models=units.models,
        ties=ties,
        theta=theta,
        tie_parameter=float(tie_parameter),
        features=(),
        gamma=np.zeros(0),
        covariances=_covariances(neg_hess[0], meats),
        loglik=float(loglik[0]),
        n_battles=units.n_battles,
        n_clusters=units.n_clusters if cluster is not None else units.n_battles,
        units=units,
    )


def _fit_contextual(model_a, model_b, outcome, weight, cluster, features, units, max_iter):
    """Style control: ratings and feature coefficients in one logistic fit, battle by battle."""
    z, (ca, cb, _) = np.asarray(features, dtype=float), _codes(model_a, model_b, units.models)
    if z.ndim != 2 or not np.all(np.isfinite(z)):
        raise ValueError("features must be a finite 2-D array, one row per battle")
    (n, f), k = z.shape, len(units.models)
    names = tuple(getattr(features, "columns", [f"feature_{i + 1}" for i in range(f)]))
    y, rows = np.asarray(outcome, dtype=float), np.arange(n)
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    design = sparse.hstack(
        [_sparse([(rows, ca, np.ones(n)), (rows, cb, -np.ones(n))], n, k), sparse.csr_matrix(z)]
    ).tocsr()
    free = design[:, 1:]

    def state(beta):
        eta = free @ beta
        p = special.expit(eta)
        neg_hess = (free.T @ free.multiply((w * p * (1 - p))[:, None])).toarray()
        return float(np.sum(w * (y * eta - np.logaddexp(0, eta)))), free.T @ (w * (y - p)), neg_hess

    beta = np.zeros(k - 1 + f)
    loglik, grad, neg_hess = state(beta)
    if np.linalg.matrix_rank(neg_hess) < len(beta):
        raise ValueError(
            "the style features are collinear with the models' battles (each model always "
            "answers in the same style?): style control cannot tell them apart"
        )
    for _ in range(max_iter):
        step = np.linalg.solve(neg_hess, grad)
        size = 1.0
        while state(beta + size * step)[0] < loglik - 1e-12 * abs(loglik) and size > 1e-12:
            size /= 2
        beta = beta + size * step
        loglik, grad, neg_hess = state(beta)
        if np.max(np.abs(size * step)) < 1e-10:
            break
    else:
        raise ValueError(f"the style-controlled fit did not converge in {max_iter} Newton steps")
    residual = w * (y - special.expit(free @ beta))
    scores = design.multiply(residual[:, None]).tocsr()
    meats = {"per_battle": (scores.T @ scores).toarray()}
    if cluster is not None:
        groups, uniques = pd.factorize(pd.Series(np.asarray(cluster, dtype=object)), sort=True)
        g = len(uniques)
        sums = sparse.csr_matrix((np.ones(n), (groups, rows)), shape=(g, n)) @ scores
        meats["clustered"] = (sums.T @ sums).toarray() * (g / (g - 1) if g > 1 else np.nan)
    theta = np.concatenate([[0.0], beta[: k - 1]])
    return BradleyTerryFit(
        models=units.models,
        ties="half",
        theta=theta,
        tie_parameter=np.nan,
        features=names,
        gamma=beta[k - 1 :],
        covariances=_covariances(neg_hess, meats),
        loglik=loglik,
        n_battles=n,
        n_clusters=units.n_clusters if cluster is not None else n,
        units=None,
    )


def rating_differences(fit: BradleyTerryFit, covariance: str = "clustered"):
    """All differences :math:`\\theta_i - \\theta_j` and their SEs (K x K each, log-odds).

    Identification-free: :math:`\\mathrm{Var}(\\hat\\theta_i - \\hat\\theta_j) = V_{ii} + V_{jj}
    - 2V_{ij}`.

    Examples
    --------
    >>> fit = fit_bradley_terry(["a", "b", "c", "a"], ["b", "c", "a", "c"], [1, 1, 1, 0])
    >>> diff, se = rating_differences(fit, "model")
    >>> bool(np.allclose(diff, -diff.T))
    True
    """
    if covariance not in fit.covariances:
        raise ValueError(
            f"the fit has no {covariance!r} covariance (it has {list(fit.covariances)})"
        )
    k = len(fit.models)
    cov = fit.covariances[covariance][:k, :k]
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    return fit.theta[:, None] - fit.theta[None, :], np.sqrt(np.maximum(var, 0.0))


def elo_ratings(
    fit: BradleyTerryFit,
    covariance: str = "clustered",
    *,
    anchor=None,
    anchor_rating: float = 1000.0,
    level: float = LEVEL,
) -> pd.DataFrame:
    """Ratings on the Elo scale with normal intervals, best first.

    :math:`R_k = c + S(\\theta_k - \\bar\\theta)` with ``anchor=None`` (the mean at
    ``anchor_rating`` = c), or :math:`R_k = c + S(\\theta_k - \\theta_m)` with ``anchor=m``;
    :math:`S` = :data:`ELO_SCALE`. The SE is that of the contrast (the anchor's own is 0).

    Returns
    -------
    DataFrame
        ``model, rating, se, ci_low, ci_high`` (Elo points).

    Examples
    --------
    >>> fit = fit_bradley_terry(["a", "a", "b", "b"], ["b", "b", "a", "a"], [1, 1, 1, 0])
    >>> elo_ratings(fit, "model", anchor="b")["rating"].round(1).tolist()
    [1190.8, 1000.0]
    """
    k = len(fit.models)
    cov = fit.covariances[covariance][:k, :k]
    contrast = np.eye(k) - (
        np.full((k, k), 1.0 / k) if anchor is None else np.eye(k)[[fit.index(anchor)] * k]
    )
    estimate = contrast @ fit.theta
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", contrast, cov, contrast), 0.0))
    z = special.ndtri(0.5 + level / 2)
    table = pd.DataFrame(
        {
            "model": list(fit.models),
            "rating": anchor_rating + ELO_SCALE * estimate,
            "se": ELO_SCALE * se,
            "ci_low": anchor_rating + ELO_SCALE * (estimate - z * se),
            "ci_high": anchor_rating + ELO_SCALE * (estimate + z * se),
        }
    )
    return table.sort_values(["rating", "model"], ascending=[False, True], ignore_index=True)


@dataclass(frozen=True)
class BootstrapDraws:
    """Replicate estimates of a cluster bootstrap (log-odds; ``theta[:, 0]`` is 0).

    Rows of failed replicates (no finite estimate: a resample where a model never lost, or
    never played) are NaN and counted in ``failed``.
    """

    models: tuple
    theta: np.ndarray
    tie_parameter: np.ndarray
    failed: int
    scheme: str

    def ok(self) -> np.ndarray:
        """The successful replicates' strengths (R_ok x K)."""
        return self.theta[np.isfinite(self.theta).all(axis=1)]

    def difference_se(self) -> np.ndarray:
        """K x K bootstrap SEs of the differences (standard deviation over replicates)."""
        cov = np.cov(self.ok(), rowvar=False, ddof=1)
        var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
        return np.sqrt(np.maximum(var, 0.0))


def cluster_bootstrap(
    fit: BradleyTerryFit,
    replicates: int = 1000,
    *,
    seed: int = SEED,
    rng: np.random.Generator | None = None,
    scheme: str = "multinomial",
) -> BootstrapDraws:
    """Cluster bootstrap of a fit: resample clusters, refit every replicate (vectorised).

    Each replicate gives cluster g the weight :math:`m_g` (``multinomial``: the counts of G
    draws with replacement; ``poisson``: independent Poisson(1), Hanley and MacGibbon's
    approximation that keeps clusters independent); its win, tie and loss counts per pair are
    :math:`\\sum_g m_g c_{g,pair}`, one sparse product for a batch of replicates, and all are
    refitted at once by Newton from the full-data estimate.

    Parameters
    ----------
    fit : BradleyTerryFit
        A fit without style features (clustered by ``cluster``; a fit without clusters is
        resampled battle by battle).
    replicates : int
        Bootstrap replicates.
    seed : int
        Seed of :func:`numpy.random.default_rng` (ignored when ``rng`` is given).
    rng : numpy.random.Generator, optional
    scheme : {"multinomial", "poisson"}

    Returns
    -------
    BootstrapDraws

    Examples
    --------
    >>> fit = fit_bradley_terry(["a", "b", "c"] * 20, ["b", "c", "a"] * 20,
    ...                         [1, 1, 0.5] * 10 + [0, 1, 1] * 10, cluster=np.arange(60) // 3)
    >>> draws = cluster_bootstrap(fit, 200, seed=1)
    >>> draws.theta.shape, draws.failed
    ((200, 3), 0)
    """
    if fit.units is None:
        raise ValueError("the cluster bootstrap needs a fit without style features")
    if scheme not in ("multinomial", "poisson"):
        raise ValueError(f"scheme must be 'multinomial' or 'poisson', got {scheme!r}")
    rng = np.random.default_rng(seed) if rng is None else rng
    units = fit.units
    k, n_pairs, g = len(fit.models), len(units.pair_low), units.n_clusters
    by_cluster = _sparse(
        [(np.repeat(units.unit_cluster, 3), units.unit_pair[:, None] * 3 + np.arange(3),
          units.counts)], g, 3 * n_pairs)  # fmt: skip
    tau_hat = fit.tie_parameter if fit.ties == "rao_kupper" else np.log(fit.tie_parameter)
    batch = max(1, _BATCH_CELLS // max(g, 3 * n_pairs, k * k))
    thetas, taus = [], []
    for start in range(0, replicates, batch):
        size = min(batch, replicates - start)
        if scheme == "multinomial":  # G draws with replacement, counted
            drawn = rng.integers(0, g, (size, g)) + (np.arange(size) * g)[:, None]
            weights = np.bincount(drawn.ravel(), minlength=size * g).reshape(size, g).astype(float)
        else:
            weights = rng.poisson(1.0, size=(size, g)).astype(float)
        counts = np.ascontiguousarray((by_cluster.T @ weights.T).T).reshape(size, n_pairs, 3)
        played = _laplacian(counts.sum(axis=2), units.pair_low, units.pair_high, k)
        absent = (np.diagonal(played, axis1=1, axis2=2) == 0).any(axis=1)
        counts[absent] = units.pair_counts()  # refitted, then discarded
        theta, tau, _, _, converged = _newton(
            counts, units.pair_low, units.pair_high, fit.ties,
            np.tile(fit.theta, (size, 1)), np.full(size, 0.0 if fit.ties == "half" else tau_hat),
        )  # fmt: skip
        failed = absent | ~converged
        theta[failed], tau[failed] = np.nan, np.nan
        thetas.append(theta)
        taus.append(tau if fit.ties != "davidson" else np.exp(tau))
    theta = np.vstack(thetas)
    tie = np.concatenate(taus) if fit.ties != "half" else np.full(replicates, np.nan)
    return BootstrapDraws(
        models=fit.models,
        theta=theta,
        tie_parameter=tie,
        failed=int((~np.isfinite(theta).all(axis=1)).sum()),
        scheme=scheme,
    )
