"""The claims read by confidence sets and by costs: ``best``/``top k`` against the confidence
sets for the best and the top k, the claimed model's score corrected for its selection, and the
two cost claims.

**The set reading** (``reading = "mcb"``) of ``best: A`` and ``top k: A``. A ``best: A`` claim
is supported only when the confidence set for the best (Hsu's MCB,
:func:`evalbars.stats.best.sets.best_set`) is {A}, contradicted when A is not in it, and not
supported otherwise; the row's estimate and interval are A's score minus the best score of the
others and Hsu's constrained interval of it, and its note lists the set. A ``top k: A`` claim
is supported when A is significantly better than at least K - k models at the simultaneous
critical value of :func:`evalbars.stats.best.sets.top_k_set` (so its rank is at most k),
contradicted when A is not in the confidence set for the top k, and not supported otherwise.
Both are read on the questions every model answered (in the claim's category, if it names one),
with the paired covariance of :mod:`evalbars.readings.leaderboard.best`; a confidence set at
level :math:`1-\\alpha` needs no adjustment for the family.

**The claimed model's score** (:func:`claim_scores`, ``claim_scores.csv``): for each ``best``
and ``top k`` claim, A's score as if chosen in advance (naive) beside the selection-corrected
readings: conditional on A's observed rank r (the polyhedral event "A below the r - 1 models
above it and above the rest", :func:`evalbars.stats.best.winners.selection_truncation` with
``above``) and the hybrid of Andrews, Kitagawa and McCloskey (2024), which conditions as well
on the projection interval; for the top model also the zoom interval. A model the claim names
but that was not selected (a ``best: A`` whose A is not the top, a ``top k: A`` ranked below k)
gets the naive reading only, with a note.

**The cost claims** ``A >= B - d at <= x cost`` and ``A on frontier``
(:func:`evalbars.stats.cost.cost_claim_p`, on the questions every costed model has a score and
a cost for, :func:`evalbars.readings.leaderboard.cost.cost_board`) enter the claims' family as
the pair claims do: their doubled one-sided p in the paired reading, adjusted with the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, LEVEL, SEED
from evalbars.readings.claims.parsing import COST_KINDS, Claim, ClaimError
from evalbars.readings.leaderboard.best import shared_board
from evalbars.readings.leaderboard.cost import cost_board
from evalbars.stats.best.sets import best_set, pair_standard_errors, top_k_set
from evalbars.stats.best.winners import (
    winner_conditional,
    winner_hybrid,
    winner_naive,
    winner_table,
)
from evalbars.stats.cost import cost_claim_p, frontier_rival_p

__all__ = [
    "SET_READING",
    "CLAIM_SCORE_COLUMNS",
    "set_reading",
    "cost_test",
    "refuse_costless",
    "claim_scores",
]

#: The ``reading`` of the confidence-set rows of ``best`` and ``top k`` claims.
SET_READING = "mcb"
#: Columns of ``claim_scores.csv``.
CLAIM_SCORE_COLUMNS = [
    "claim",
    "model",
    "rank",
    "models",
    "questions",
    "method",
    "observed",
    "se",
    "estimate",
    "ci_low",
    "ci_high",
    "note",
]


def _names(names, shown: int = 6) -> str:
    names = [str(n) for n in names]
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f" and {len(names) - shown:,} more"


def set_reading(claim: Claim, wide: WideScores, alpha: float = ALPHA, seed: int = SEED) -> dict:
    """The set reading of a ``best`` or ``top k`` claim: its verdict, estimate and note.

    Parameters
    ----------
    claim : Claim
        A ``best`` or ``top`` claim.
    wide : WideScores
        The scores of the claim's scope (its category's questions, if it names one).
    alpha : float
        Level of the sets.
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    dict
        ``verdict``, ``note`` (the set's members), and for ``best`` the estimate and Hsu's
        interval (points) of A's score minus the best score of the others, ``ci_level``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.readings.claims.parsing import parse_claim
    >>> rng = np.random.default_rng(0)
    >>> scores = (rng.random((800, 3)) < [0.85, 0.60, 0.58]).astype(float)
    >>> wide = WideScores(scores, list("abc"), np.arange(800).astype(str), np.array(["x"] * 800))
    >>> set_reading(parse_claim("best: a"), wide)["verdict"]
    'supported'
    >>> reading = set_reading(parse_claim("best: b"), wide)
    >>> reading["verdict"], reading["note"]
    ('contradicted', 'set: a')
    """
    board = shared_board(wide)
    if board.scores.shape[0] < 2:
        return {"verdict": "n/a", "note": "no set: fewer than two questions every model answered"}
    cov = board.covariance()
    means = board.scores.mean(axis=0)
    a = board.models.index(claim.model_a)
    if claim.kind == "best":
        table = best_set(means, cov, board.models, alpha=alpha, seed=seed)
        members = table.loc[table["in_set"], "model"].tolist()
        verdict = (
            "supported"
            if members == [claim.model_a]
            else ("contradicted" if claim.model_a not in members else "not supported")
        )
        others = np.delete(means, a)
        return {
            "verdict": verdict,
            "note": f"set: {_names(members)}",
            "estimate_points": 100 * float(means[a] - others.max()),
            "ci_low_points": 100 * float(table["mcb_low"].iloc[a]),
            "ci_high_points": 100 * float(table["mcb_high"].iloc[a]),
            "ci_level": 1 - alpha,
        }
    k = claim.k
    table = top_k_set(means, cov, k, board.models, alpha=alpha, seed=seed)
    members = table.loc[table["in_set"], "model"].tolist()
    critical = float(table["critical_value"].iloc[0])
    beaten = int((means[a] - means > critical * pair_standard_errors(cov)[a]).sum())
    verdict = (
        "supported"
        if beaten >= len(means) - k
        else ("contradicted" if claim.model_a not in members else "not supported")
    )
    return {
        "verdict": verdict,
        "note": f"top-{k} set: {_names(members)}; better than {beaten} of {len(means) - 1}",
    }


def refuse_costless(claim: Claim, costs: pd.DataFrame | None, wide: WideScores | None) -> None:
    """A :class:`~evalbars.readings.claims.parsing.ClaimError` for a cost claim the data cannot
    read: no costs in the run, or a model it names without a cost."""
    if claim.kind not in COST_KINDS:
        return
    if costs is None:  # (wide None: checked before the data are read)
        raise ClaimError(
            claim.text,
            "needs a cost per question: give a price table (config `prices:`, or --prices "
            "FILE) for predictions that record token usage, or a cost column",
        )
    costed = set(costs.dropna(subset=["cost"])["model"].astype(str))
    for name in (claim.model_a, claim.model_b):
        if name is not None and name not in costed:
            raise ClaimError(claim.text, f"model {name!r} has no cost (no usage and no price)")
    if claim.kind == "on_frontier" and wide is not None and len(costed & set(wide.models)) < 2:
        raise ClaimError(claim.text, "needs two or more models with a cost")


def cost_test(claim: Claim, wide: WideScores, costs: pd.DataFrame) -> dict:
    """One-sided p of a cost claim and of its opposite, and the pair whose gap the row shows.

    Parameters
    ----------
    claim : Claim
        ``noninferior_at_cost`` or ``on_frontier``.
    wide : WideScores
        The scores of the claim's scope.
    costs : DataFrame
        ``model, question_id, cost`` per question (``data/costs.parquet``).

    Returns
    -------
    dict
        ``p``, ``p_opposite`` (one-sided, :func:`evalbars.stats.cost.cost_claim_p`), ``pair``
        (column indices of ``wide``: A and B, or A and its deciding rival) and ``divisor`` 1.
    """
    board = cost_board(wide, costs)
    models = board.models
    a = models.index(claim.model_a)
    options = {
        "kind": claim.kind,
        "margin": claim.margin / 100,
        "cost_ratio": claim.cost_ratio,
        "clusters": board.clusters,
    }
    arguments = (board.correct, board.cost, models, claim.model_a, claim.model_b)
    p = cost_claim_p(*arguments, **options)
    p_opposite = cost_claim_p(*arguments, **options, opposite=True)
    if claim.kind == "on_frontier":
        rivals = [m for m in models if m != claim.model_a]
        per_rival = frontier_rival_p(board.correct, board.cost, a, board.clusters)
        rival = rivals[int(np.argmax(per_rival))]
    else:
        rival = claim.model_b
    pair = (wide.models.index(claim.model_a), wide.models.index(rival))
    return {"p": p, "p_opposite": p_opposite, "pair": pair, "divisor": 1}


def _reading_rows(claim: Claim, readings, rank: int, board, note: str = "") -> list[dict]:
    return [
        {
            "claim": claim.label,
            "model": claim.model_a,
            "rank": rank,
            "models": len(board.models),
            "questions": board.scores.shape[0],
            "method": r.method,
            "observed": r.observed,
            "se": r.se,
            "estimate": r.estimate,
            "ci_low": r.low,
            "ci_high": r.high,
            "note": note,
        }
        for r in readings
    ]


def claim_scores(
    wide: WideScores, claims, *, level: float = LEVEL, seed: int = SEED
) -> pd.DataFrame:
    """``claim_scores.csv``: the score of the model each ``best``/``top k`` claim names, naive
    and corrected for its selection (see the module docstring).

    Parameters
    ----------
    wide : WideScores
        The question-by-model scores.
    claims : sequence of Claim
        The parsed claims; those of other kinds are passed over.
    level : float
        Level of the intervals.
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    DataFrame
        :data:`CLAIM_SCORE_COLUMNS`, one row per (claim, reading), on the questions every model
        answered (in the claim's category, if it names one); ``rank`` is A's observed rank there.

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.readings.claims.parsing import parse_claim
    >>> rng = np.random.default_rng(2)
    >>> scores = (rng.random((500, 4)) < [0.70, 0.69, 0.60, 0.50]).astype(float)
    >>> wide = WideScores(scores, list("abcd"), np.arange(500).astype(str), np.array(["x"] * 500))
    >>> table = claim_scores(wide, [parse_claim("top 2: a")])
    >>> table[["model", "rank", "method", "estimate", "ci_low", "ci_high"]].round(3)
      model  rank       method  estimate  ci_low  ci_high
    0     a     2        naive     0.684   0.643    0.725
    1     a     2  conditional     0.690   0.644    0.763
    2     a     2       hybrid     0.690   0.643    0.748

    A model ranked second is below the first: conditioning on that pulls its estimate up.
    """
    rows = []
    alpha = 1 - level
    for claim in claims:
        if claim.kind not in ("best", "top"):
            continue
        scoped = wide if claim.category is None else wide.rows(wide.categories == claim.category)
        board = shared_board(scoped)
        if board.scores.shape[0] < 2:
            continue
        cov = board.covariance()
        means = board.scores.mean(axis=0)
        a = board.models.index(claim.model_a)
        above = means > means[a]
        rank = int(above.sum()) + 1
        if rank == 1:
            table = winner_table(
                board.scores,
                board.models,
                board.categories if board.clustered else None,
                alpha=alpha,
                winner=claim.model_a,
                seed=seed,
            )
            rows += [
                {
                    "claim": claim.label,
                    "rank": rank,
                    "note": "",
                    **row,
                }
                for row in table.rename(columns={"plausible_winners": "_z"}).to_dict("records")
            ]
            continue
        if rank > claim.k:
            note = f"not selected: ranked {rank}, below {claim.k}; no selection to correct"
            reading = winner_naive(means, cov, a, alpha)
            rows += _reading_rows(claim, [reading], rank, board, note)
            continue
        readings = [
            winner_naive(means, cov, a, alpha),
            winner_conditional(means, cov, a, alpha, above=above),
            winner_hybrid(means, cov, a, alpha, seed=seed, above=above),
        ]
        rows += _reading_rows(claim, readings, rank, board)
    table = pd.DataFrame(rows).reindex(columns=CLAIM_SCORE_COLUMNS)
    if len(table):
        table["note"] = table["note"].fillna("")
        if np.nanmin(wide.scores) >= 0 and np.nanmax(wide.scores) <= 1:
            # scores in [0, 1] have their true means there too: clipping loses no coverage
            table["ci_low"] = table["ci_low"].clip(lower=0.0)
            table["ci_high"] = table["ci_high"].clip(upper=1.0)
    return table
