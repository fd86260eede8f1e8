r"""What Bradley-Terry ratings of battles support: pairs, letters, tiers, ranks, claims, plans.

Every reading takes a fit (:func:`fit_battles`, :func:`evalbars.stats.bradley_terry.fit_bradley_terry`)
and one of its covariances, named by the reading:

``clustered``
    CR1 by prompt (or by voter: ``cluster="judge"``); the reading to quote when a prompt is
    battled more than once (Arena-Hard-Auto judges every prompt twice);
``per_battle``
    HC0, every battle independent (arena-rank's sandwich);
``model``
    the inverse information;
``bootstrap``
    the prompt-cluster bootstrap's replicates (:func:`evalbars.stats.bradley_terry.cluster_bootstrap`),
    where a function takes ``draws``.

Differences are reported in Elo points (:data:`~evalbars.stats.bradley_terry.ELO_SCALE` per
log-odds unit), models best first.

Pairs and letters
-----------------
:func:`pairwise_table` tests every difference with :math:`z = d/\mathrm{se}(d)`, two-sided p,
Holm over the :math:`K(K-1)/2` pairs; :func:`battle_letters` draws the compact letter display of
the Holm decisions (:func:`evalbars.readings.leaderboard.letters.compact_letters`).

Tiers (simultaneous over adjacent pairs)
----------------------------------------
With the models ordered by rating and :math:`t_j = d_j/\mathrm{se}(d_j)` the K - 1 adjacent
gaps, a gap is separated when :math:`|t_j| > c`, with c the :math:`1-\alpha` quantile of
:math:`\max_j |T_j|`: under the joint normal of the adjacent differences (``critical="normal"``,
:math:`T = D Z`, Z drawn from the fit's covariance, seeded) or over the bootstrap replicates
(``critical="bootstrap"``, :math:`T_{rj} = (d^*_{rj} - \hat d_j)/\mathrm{se}^*_j`), as arenakit
does. Tiers are blocks no separated gap splits (:func:`evalbars.readings.ranks.unpaired.tiers_from_separated`).
The family is conditional on the estimated order, as in arenakit.

Rank intervals
--------------
:func:`rank_intervals`: for model i, the :math:`1-\alpha` simultaneous intervals of
:math:`\theta_j - \theta_i` over :math:`j \ne i` (critical value of
:math:`\max_{j \ne i}|T_{ij}|`) give :math:`\mathrm{rank}_{low} = 1 + \#\{j: \theta_j - \theta_i
> 0\}` and :math:`\mathrm{rank}_{high} = K - \#\{j: \theta_j - \theta_i < 0\}` (Mogstad, Romano,
Shaikh and Wilhelm 2024, marginal rank intervals); ``simultaneous=True`` takes the maximum over
all pairs (intervals for all ranks at once). With ``draws``, the bootstrap's central rank
ranges and P(first) are added (:func:`evalbars.readings.ranks.unpaired.rank_ranges`).

Claims
------
:func:`battle_claims` gives, for every claim of :mod:`evalbars.readings.claims.parsing` (margins in
Elo points), the one-sided p of the claim and of its opposite under each reading, by the rules
of :mod:`evalbars.readings.claims.verdicts`: a pair claim from
:math:`\Phi(-(d - s)/\mathrm{se})`; ``top k: A`` from the sorted p of "A > X":
:math:`p = \min(1, k\,p_{(K-k)})` and its opposite :math:`\min(1, (K-k)\,q_{(k)})`; ``in
CATEGORY`` refits on that category's battles.

Planning
--------
:func:`battles_needed`: head-to-head battles for a gap d (log-odds) to be separated with power
:math:`1-\beta`: the mean score :math:`\bar y` of n battles of the pair estimates
:math:`p = \sigma(d)` with variance :math:`\mathrm{deff}\,v/n`, :math:`v = p(1-p) - t/4` (a tie
rate t scores 1/2), so :math:`\mathrm{logit}(\bar y)` has variance
:math:`\mathrm{deff}\,v/\{n\,p^2(1-p)^2\}` and
:math:`n = (z_{1-\alpha/2} + z_{1-\beta})^2\,\mathrm{deff}\,v / \{p^2(1-p)^2 d^2\}`
(:func:`evalbars.stats.planning.sample_size.questions_for_effect`). The design effect
:math:`\mathrm{deff}` is the clustered over the per-battle variance of the pair's difference.

References
----------
.. [1] Mogstad, M., Romano, J. P., Shaikh, A. M. and Wilhelm, D. (2024). Inference for ranks
   with applications to mobility across neighbourhoods and academic achievement across
   countries. Review of Economic Studies 91(1), 476-518.
.. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand J Stat
   6, 65-70.
.. [3] Kish, L. (1965). Survey Sampling. Wiley (the design effect).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.battles import STYLE_A, STYLE_B
from evalbars.defaults import ALPHA, POWER, SEED
from evalbars.errors import InputError
from evalbars.readings.claims.parsing import parse_claims
from evalbars.readings.leaderboard.letters import compact_letters, letter_strings, separated_matrix
from evalbars.readings.ranks.unpaired import rank_ranges, tiers_from_separated
from evalbars.stats.bradley_terry import (
    ELO_SCALE,
    BootstrapDraws,
    BradleyTerryFit,
    fit_bradley_terry,
    rating_differences,
)
from evalbars.stats.pairwise import adjust_pvalues
from evalbars.stats.planning.sample_size import questions_for_effect

__all__ = [
    "READINGS",
    "STYLE_NAMES",
    "style_features",
    "fit_battles",
    "reading_differences",
    "pairwise_table",
    "battle_letters",
    "adjacent_tiers",
    "rank_intervals",
    "naive_vs_clustered",
    "battle_claims",
    "battles_needed",
    "battle_plan",
]

#: Readings of a fit (the covariance behind each; ``bootstrap`` needs draws).
READINGS = ("clustered", "per_battle", "model", "bootstrap")
#: Names of the style features (:data:`evalbars.data.battles.STYLE_A` order).
STYLE_NAMES = ("length", "headers", "lists", "bold")
#: Normal draws behind a simulated critical value of ``max |t|`` (the Monte Carlo SE of its 95%
#: point is about 0.01).
CRITICAL_DRAWS = 50_000


def style_features(side_a, side_b) -> np.ndarray:
    """LMArena's style features: per feature :math:`(a - b)/(a + b + 1)`, then standardised.

    Parameters
    ----------
    side_a, side_b : array_like, shape (n, f)
        Each battle's answer features for model_a and model_b (tokens, header, list and bold
        counts as LMArena publishes them in ``conv_metadata``).

    Returns
    -------
    ndarray, shape (n, f)
        Each column centred and divided by its (population) standard deviation (1 where that
        is 0), as FastChat's ``construct_style_matrices`` and arena-rank do.

    Examples
    --------
    >>> style_features([[10], [30]], [[30], [10]]).ravel().round(3).tolist()
    [-1.0, 1.0]
    """
    a, b = (np.asarray(v, dtype=float) for v in (side_a, side_b))
    ratio = (a - b) / (a + b + 1.0)
    spread = ratio.std(axis=0)
    return (ratio - ratio.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def fit_battles(
    frame: pd.DataFrame,
    *,
    ties: str = "half",
    cluster: str | None = "prompt_id",
    style: bool = False,
    category: str | None = None,
) -> BradleyTerryFit:
    """Fit a battle frame (:func:`evalbars.data.battles.read_battles`) with its weights.

    Parameters
    ----------
    frame : DataFrame
        Battles (``model_a, model_b, outcome, weight``, and the ``cluster`` column).
    ties : str
        :data:`~evalbars.stats.bradley_terry.TIE_MODELS`.
    cluster : str or None
        Column of the clusters (``prompt_id``; ``judge`` clusters by voter); None: no
        clustered covariance.
    style : bool
        Fit LMArena's style control (length and markdown features beside the ratings).
    category : str, optional
        Fit that category's battles only.

    Returns
    -------
    BradleyTerryFit

    Examples
    --------
    >>> frame = pd.DataFrame({"model_a": ["x", "y", "x", "y"], "model_b": ["y", "x", "y", "x"],
    ...                       "outcome": [1.0, 1.0, 1.0, 0.0], "weight": 1.0,
    ...                       "prompt_id": ["p", "p", "q", "q"]})
    >>> round(fit_battles(frame).difference("x", "y")[0], 4)
    1.0986
    """
    source = frame.attrs.get("source_path", "battles")
    if category is not None:
        frame = frame[frame["category"] == category]
        if frame.empty:
            raise InputError(source, f"no battles in category {category!r}")
    clusters = None
    if cluster is not None:
        if cluster not in frame.columns or frame[cluster].isna().any():
            raise InputError(
                source, f"battles without a {cluster} cannot be clustered by it; pass cluster=None"
            )
        clusters = frame[cluster].astype(str).to_numpy()
    features = None
    if style:
        missing = [c for c in (*STYLE_A, *STYLE_B) if c not in frame.columns]
        if missing or frame[[*STYLE_A, *STYLE_B]].isna().any().any():
            raise InputError(source, "style control needs the style columns on every battle")
        features = pd.DataFrame(
            style_features(frame[list(STYLE_A)], frame[list(STYLE_B)]), columns=STYLE_NAMES
        )
    try:
        return fit_bradley_terry(
            frame["model_a"].to_numpy(),
            frame["model_b"].to_numpy(),
            frame["outcome"].to_numpy(dtype=float),
            weight=frame["weight"].to_numpy(dtype=float) if "weight" in frame.columns else None,
            cluster=clusters,
            ties=ties,
            features=features,
        )
    except ValueError as exc:
        raise InputError(source, str(exc)) from None


def reading_differences(fit: BradleyTerryFit, reading: str, draws: BootstrapDraws | None = None):
    """``(diff, se)``, K x K in Elo points, under a reading (module docstring)."""
    if reading == "bootstrap":
        if draws is None:
            raise ValueError("the bootstrap reading needs draws (cluster_bootstrap)")
        return ELO_SCALE * rating_differences(fit, "model")[0], ELO_SCALE * draws.difference_se()
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    diff, se = rating_differences(fit, reading)
    return ELO_SCALE * diff, ELO_SCALE * se


def _covariance(fit: BradleyTerryFit, reading: str, draws: BootstrapDraws | None) -> np.ndarray:
    """K x K covariance of the strengths under a reading, in Elo points squared."""
    k = len(fit.models)
    if reading == "bootstrap":
        if draws is None:
            raise ValueError("the bootstrap reading needs draws (cluster_bootstrap)")
        return ELO_SCALE**2 * np.cov(draws.ok(), rowvar=False)
    return ELO_SCALE**2 * fit.covariances[reading][:k, :k]


def _order(fit: BradleyTerryFit) -> np.ndarray:
    """Models best first (ties by name)."""
    return np.lexsort((np.array(fit.models), -fit.theta))


def pairwise_table(
    fit: BradleyTerryFit,
    reading: str = "clustered",
    *,
    draws: BootstrapDraws | None = None,
    alpha: float = ALPHA,
    adjust: str = "holm",
) -> pd.DataFrame:
    """Every pair's difference (Elo), SE, z, two-sided p, adjusted p and (1 - alpha) interval.

    Pairs in rating order (``model_a`` rated higher). ``separated`` is ``p_adjusted < alpha``.

    Examples
    --------
    >>> fit = fit_bradley_terry(["a", "b", "c"] * 30, ["b", "c", "a"] * 30, [1, 0.5, 0.5] * 30)
    >>> pairwise_table(fit, "model")[["model_a", "model_b"]].values.tolist()
    [['a', 'c'], ['a', 'b'], ['c', 'b']]
    """
    diff, se = reading_differences(fit, reading, draws)
    order = _order(fit)
    i, j = (order[x] for x in np.triu_indices(len(order), k=1))
    d, s = diff[i, j], se[i, j]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, d / s, 0.0)
    p = 2 * special.ndtr(-np.abs(z))
    half = special.ndtri(1 - alpha / 2) * s
    p_adjusted = adjust_pvalues(p, adjust) if len(p) else p
    return pd.DataFrame(
        {
            "model_a": np.array(fit.models)[i],
            "model_b": np.array(fit.models)[j],
            "reading": reading,
            "diff": d,
            "se": s,
            "ci_low": d - half,
            "ci_high": d + half,
            "z": z,
            "p": p,
            "p_adjusted": p_adjusted,
            "separated": p_adjusted < alpha,
        }
    )


def battle_letters(pairs: pd.DataFrame, models) -> pd.DataFrame:
    """Compact letters from a :func:`pairwise_table` (``models`` best first).

    Examples
    --------
    >>> pairs = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
    ...                       "separated": [False, True, False]})
    >>> battle_letters(pairs, ["a", "b", "c"])["letters"].tolist()
    ['a', 'ab', 'b']
    """
    models = list(models)
    separated = separated_matrix(models, pairs["model_a"], pairs["model_b"], pairs["separated"])
    return pd.DataFrame({"model": models, "letters": letter_strings(compact_letters(separated))})


def _normal_draws(cov, seed, draws=CRITICAL_DRAWS) -> np.ndarray:
    """Seeded draws (draws x K) of a normal vector with covariance ``cov`` (rank K - 1: only
    differences vary), by its eigen-decomposition."""
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return np.random.default_rng(seed).standard_normal((draws, len(cov))) @ root.T


def _max_abs_quantile(z, first, second, se, level) -> float:
    r"""The ``level`` quantile over the draws ``z`` of :math:`\max_j |T_j|`,
    :math:`T_j = (z_{first_j} - z_{second_j}) / se_j`."""
    return float(np.quantile(np.max(np.abs((z[:, first] - z[:, second]) / se), axis=1), level))


def adjacent_tiers(
    fit: BradleyTerryFit,
    reading: str = "clustered",
    *,
    draws: BootstrapDraws | None = None,
    alpha: float = ALPHA,
    critical: str = "normal",
    seed: int = SEED,
) -> pd.DataFrame:
    """Tiers from adjacent gaps under max-t simultaneous control (module docstring).

    Returns
    -------
    DataFrame
        Best first: ``model, rating`` (Elo, mean 1000), ``gap`` to the next model, ``gap_se``,
        ``t``, ``separated``, ``tier``; ``attrs["critical"]`` is c and
        ``attrs["separated_one_at_a_time"]`` how many gaps a plain 1.96 would separate.
    """
    order = _order(fit)
    k = len(order)
    diff, se = reading_differences(fit, reading, draws)
    gap = np.append(diff[order[:-1], order[1:]], np.nan)
    gap_se = np.append(se[order[:-1], order[1:]], np.nan)
    t = gap / gap_se
    if critical == "bootstrap":
        if draws is None:
            raise ValueError("critical='bootstrap' needs draws")
        replicate = ELO_SCALE * (draws.ok()[:, order[:-1]] - draws.ok()[:, order[1:]])
        moved = (replicate - gap[:-1]) / gap_se[:-1]
        c = float(np.quantile(np.max(np.abs(moved), axis=1), 1 - alpha))
    elif critical == "normal":
        z = _normal_draws(_covariance(fit, reading, draws), seed)
        c = _max_abs_quantile(z, order[:-1], order[1:], gap_se[:-1], 1 - alpha) if k > 1 else np.nan
    else:
        raise ValueError(f"critical must be 'normal' or 'bootstrap', got {critical!r}")
    separated = np.abs(t) > c
    table = pd.DataFrame(
        {
            "model": np.array(fit.models)[order],
            "rating": 1000 + ELO_SCALE * (fit.theta[order] - fit.theta.mean()),
            "gap": gap,
            "gap_se": gap_se,
            "t": t,
            "separated": np.where(np.isnan(t), False, separated),
            "tier": tiers_from_separated(np.where(np.isnan(t), False, separated)),
        }
    )
    table.attrs.update(
        critical=c, separated_one_at_a_time=int((np.abs(t) > special.ndtri(1 - alpha / 2)).sum())
    )
    return table


def rank_intervals(
    fit: BradleyTerryFit,
    reading: str = "clustered",
    *,
    alpha: float = ALPHA,
    simultaneous: bool = False,
    draws: BootstrapDraws | None = None,
    seed: int = SEED,
) -> pd.DataFrame:
    """Rank intervals from simultaneous intervals of the differences (module docstring).

    Returns
    -------
    DataFrame
        Best first: ``model, rank, rank_low, rank_high``; with ``draws`` also
        ``p_first, boot_rank_low, boot_rank_high`` (central ``1 - alpha`` bootstrap ranges).
    """
    order = _order(fit)
    k = len(order)
    diff, se = reading_differences(fit, reading, draws)
    z = _normal_draws(_covariance(fit, reading, draws), seed)
    others = [np.delete(np.arange(k), i) for i in range(k)]
    if simultaneous:  # the largest |T| over all pairs, one model's pairs at a time
        largest = np.zeros(len(z))
        for i in range(k - 1):
            rest = np.arange(i + 1, k)
            t_i = np.abs((z[:, rest] - z[:, [i]]) / se[rest, i])
            largest = np.maximum(largest, t_i.max(axis=1))
        critical = np.full(k, np.quantile(largest, 1 - alpha))
    else:
        critical = np.array(
            [_max_abs_quantile(z, others[i], [i], se[others[i], i], 1 - alpha) for i in range(k)]
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        t = diff / se  # t[j, i] > c_i: j above i
    above = (t > critical[None, :]).sum(axis=0)
    below = (t < -critical[None, :]).sum(axis=0)
    table = pd.DataFrame(
        {
            "model": np.array(fit.models)[order],
            "rank": np.arange(1, k + 1),
            "rank_low": 1 + above[order],
            "rank_high": k - below[order],
        }
    )
    if draws is not None:
        ranges = rank_ranges([draws.ok()], len(draws.ok()), level=1 - alpha)
        table["p_first"] = ranges["p_first"].to_numpy()[order]
        table["boot_rank_low"] = ranges["rank_low"].to_numpy()[order]
        table["boot_rank_high"] = ranges["rank_high"].to_numpy()[order]
    return table


def naive_vs_clustered(
    fit: BradleyTerryFit, *, alpha: float = ALPHA, adjust: str = "holm"
) -> pd.DataFrame:
    """Per-battle against prompt-clustered intervals of every pair, side by side.

    Returns
    -------
    DataFrame
        ``model_a, model_b, diff, se_per_battle, se_clustered, design_effect`` (the variance
        ratio), each reading's interval and Holm-adjusted ``separated_*``;
        ``attrs["separations"]`` counts the pairs each reading separates.
    """
    naive = pairwise_table(fit, "per_battle", alpha=alpha, adjust=adjust)
    blocked = pairwise_table(fit, "clustered", alpha=alpha, adjust=adjust)
    table = pd.DataFrame(
        {
            "model_a": naive["model_a"],
            "model_b": naive["model_b"],
            "diff": naive["diff"],
            "se_per_battle": naive["se"],
            "se_clustered": blocked["se"],
            "design_effect": (blocked["se"] / naive["se"]) ** 2,
            "ci_low_per_battle": naive["ci_low"],
            "ci_high_per_battle": naive["ci_high"],
            "ci_low_clustered": blocked["ci_low"],
            "ci_high_clustered": blocked["ci_high"],
            "separated_per_battle": naive["separated"],
            "separated_clustered": blocked["separated"],
        }
    )
    table.attrs["separations"] = {
        "per_battle": int(naive["separated"].sum()),
        "clustered": int(blocked["separated"].sum()),
    }
    return table


def _one_sided(diff, se, a, b, shift) -> float:
    """One-sided p of :math:`H_1: R_a - R_b > s` (Elo points)."""
    if se[a, b] <= 0:
        return float(diff[a, b] <= shift)
    return float(special.ndtr(-(diff[a, b] - shift) / se[a, b]))


def _claim_test(claim, diff, se, index) -> dict:
    """p of a claim and of its opposite, its estimate's pair (verdicts' rules)."""
    a = index[claim.model_a]
    m = claim.margin
    if claim.kind in ("best", "top"):
        others = [i for i in range(len(index)) if i != a]
        k, need = claim.k, len(others) + 1 - claim.k
        p = np.array([_one_sided(diff, se, a, x, 0.0) for x in others])
        q = np.array([_one_sided(diff, se, x, a, 0.0) for x in others])
        order_p, order_q = np.argsort(p, kind="stable"), np.argsort(q, kind="stable")
        p_claim = min(1.0, k * p[order_p[need - 1]])
        p_opposite = min(1.0, need * q[order_q[k - 1]])
        rival = others[order_p[need - 1]] if p_claim <= p_opposite else others[order_q[k - 1]]
        return {"p": p_claim, "p_opposite": p_opposite, "pair": (a, rival)}
    b = index[claim.model_b]
    if claim.kind == "superiority":
        p, q = _one_sided(diff, se, a, b, m), _one_sided(diff, se, b, a, -m)
    elif claim.kind == "noninferiority":
        p, q = _one_sided(diff, se, a, b, -m), _one_sided(diff, se, b, a, m)
    else:
        p = max(_one_sided(diff, se, a, b, -m), _one_sided(diff, se, b, a, -m))
        q = min(_one_sided(diff, se, a, b, m), _one_sided(diff, se, b, a, m))
    return {"p": p, "p_opposite": q, "pair": (a, b)}


def battle_claims(
    frame: pd.DataFrame,
    claims,
    *,
    readings=("clustered", "per_battle"),
    ties: str = "half",
    cluster: str = "prompt_id",
    style: bool = False,
) -> pd.DataFrame:
    """One-sided p of every claim and of its opposite under each reading (module docstring).

    Parameters
    ----------
    frame : DataFrame
        Battles (:func:`evalbars.data.battles.read_battles`).
    claims : iterable of str
        Claims in the grammar of :mod:`evalbars.readings.claims.parsing`; margins are Elo points.
    readings : sequence of str
        Of ``clustered``, ``per_battle``, ``model``.
    ties, cluster, style
        As :func:`fit_battles`.

    Returns
    -------
    DataFrame
        One row per (claim, reading): ``claim, kind, model_a, model_b, category, margin_elo,
        k, reading, battles, rival, estimate, se`` (Elo points, the claim's pair or A against
        the deciding rival), ``p`` and ``p_opposite`` (one-sided; the claims machinery doubles
        and adjusts them).

    Examples
    --------
    >>> frame = pd.DataFrame({"model_a": ["x", "y", "z"] * 40, "model_b": ["y", "z", "x"] * 40,
    ...                       "outcome": [1.0, 1.0, 0.5] * 40, "weight": 1.0,
    ...                       "prompt_id": [str(i // 3) for i in range(120)]})
    >>> battle_claims(frame, ["x > z"], readings=["per_battle"])[["estimate", "se"]].round(1)
       estimate    se
    0     262.8  41.9
    """
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    categories = sorted(frame["category"].dropna().unique()) if "category" in frame else []
    parsed = parse_claims(claims, models, categories)
    fits, rows = {}, []
    for claim in parsed:
        if claim.category not in fits:
            fits[claim.category] = fit_battles(
                frame, ties=ties, cluster=cluster, style=style, category=claim.category
            )
        fit = fits[claim.category]
        for name in (claim.model_a, claim.model_b):
            if name is not None and name not in fit.models:
                raise InputError(
                    f"claim {claim.text!r}", f"{name!r} has no battles in {claim.category!r}"
                )
        index = {m: i for i, m in enumerate(fit.models)}
        for reading in readings:
            diff, se = reading_differences(fit, reading)
            test = _claim_test(claim, diff, se, index)
            a, b = test["pair"]
            rows.append(
                {
                    "claim": claim.text,
                    "kind": claim.kind,
                    "model_a": claim.model_a,
                    "model_b": claim.model_b,
                    "category": claim.category,
                    "margin_elo": claim.margin,
                    "k": claim.k,
                    "reading": reading,
                    "battles": fit.n_battles,
                    "rival": fit.models[b],
                    "estimate": diff[a, b],
                    "se": se[a, b],
                    "p": test["p"],
                    "p_opposite": test["p_opposite"],
                }
            )
    return pd.DataFrame(rows)


def battles_needed(
    difference, *, tie_rate=0.0, design_effect=1.0, alpha: float = ALPHA, power: float = POWER
):
    """Head-to-head battles for a gap of ``difference`` Elo points to be separated (module
    docstring, Planning).

    Examples
    --------
    >>> int(np.ceil(battles_needed(35.0)))  # 35 Elo points: 55% to 45%
    782
    >>> int(np.ceil(battles_needed(35.0, tie_rate=0.3, design_effect=2.0)))
    1090
    """
    d = np.abs(np.asarray(difference, dtype=float)) / ELO_SCALE
    p = special.expit(d)
    variance = p * (1 - p) - np.asarray(tie_rate, dtype=float) / 4
    if np.any(variance <= 0):
        raise ValueError("tie_rate is too high for this gap (the score would have no variance)")
    per_battle = np.asarray(design_effect, dtype=float) * variance / (p * (1 - p)) ** 2
    return questions_for_effect(d, per_battle, alpha=alpha, power=power)


def battle_plan(
    fit: BradleyTerryFit, *, alpha: float = ALPHA, power: float = POWER, family: int | None = None
) -> pd.DataFrame:
    """Battles each adjacent pair needs to be separated, given its tie rate and clustering.

    Each test is at level :math:`\alpha/m` (Bonferroni over ``family`` tests, default the
    K - 1 adjacent pairs).

    Returns
    -------
    DataFrame
        Best first: ``model_a, model_b, gap`` (Elo), ``battles`` (head to head so far) and
        ``tie_rate`` (both weighted: fit with ``strong_weight=1`` to count Arena-Hard-Auto's
        strong verdicts once), ``design_effect``, ``battles_needed`` (head to head, rounded up) and
        ``scale_up`` (the factor by which all battles must grow, in the same design, for the
        clustered interval of the gap to reach it: :math:`((z_{1-\alpha/2m} + z_{1-\beta})
        \\,\\mathrm{se}/|d|)^2`).
    """
    if fit.units is None:
        raise ValueError("the plan needs a fit without style features")
    order = _order(fit)
    k = len(order)
    family = k - 1 if family is None else family
    level = alpha / max(family, 1)
    diff, se_naive = reading_differences(fit, "per_battle")
    se = reading_differences(fit, "clustered")[1] if "clustered" in fit.covariances else se_naive
    a, b = order[:-1], order[1:]
    counts = fit.units.pair_counts()
    low, high = np.minimum(a, b), np.maximum(a, b)
    found = {
        (lo, hi): i
        for i, (lo, hi) in enumerate(zip(fit.units.pair_low, fit.units.pair_high, strict=True))
    }
    pair_counts = np.array(
        [counts[found[x]] if x in found else np.zeros(3) for x in zip(low, high, strict=True)]
    )
    battles = pair_counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ties = np.where(battles > 0, pair_counts[:, 1] / battles, 0.0)
        deff = (se[a, b] / se_naive[a, b]) ** 2
        z = special.ndtri(1 - level / 2) + special.ndtri(power)
        scale_up = (z * se[a, b] / np.abs(diff[a, b])) ** 2
    return pd.DataFrame(
        {
            "model_a": np.array(fit.models)[a],
            "model_b": np.array(fit.models)[b],
            "gap": diff[a, b],
            "battles": battles,
            "tie_rate": ties,
            "design_effect": deff,
            "battles_needed": np.ceil(
                battles_needed(
                    diff[a, b], tie_rate=ties, design_effect=deff, alpha=level, power=power
                )
            ),
            "scale_up": scale_up,
        }
    )
