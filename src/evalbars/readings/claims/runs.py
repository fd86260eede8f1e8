"""The claims' reading with runs as a random effect, where a model was evaluated more than once.

A model read in two or more runs (``runs: all``) gives each pair claim (``A > B``, with a
margin, non-inferiority, equivalence) one more row in the claims table, reading ``runs``: the
paired difference of the two models' scores over every run and sample on their shared
questions, with a standard error that adds each model's run-to-run variance,
:math:`SE^2 = SE_q^2 + \\sigma^2_{r,A}/R_A + \\sigma^2_{r,B}/R_B`
(:func:`evalbars.stats.repeats.run_variance.run_aware_difference`; Satterthwaite df), so that
its verdict says whether the claim would survive a rerun. Its one-sided p at the claim's
threshold :math:`s` is :math:`P(t_\\nu > (\\hat\\Delta - s)/SE)`, doubled and compared with
alpha as every reading's (:mod:`evalbars.readings.claims.verdicts`); no family adjustment.
Its ``note`` gives the gap's sign in every pair of runs and whether it holds in all of them
(:func:`evalbars.stats.repeats.run_variance.gap_sign_by_run`). ``best``/``top k`` claims and a
pair with one run of a model (the run variance is then not estimable) get the row ``n/a``
with the reason; so do a claim ``at pass@K`` and every claim of a run whose readings read an
item score over k samples (``score: pass@5``): the reading is of each run's mean score, and a
run may hold fewer than k samples of a question (``run_aware.csv`` has it whatever the score).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA
from evalbars.readings.claims.parsing import Claim, parse_claims
from evalbars.readings.claims.verdicts import CLAIM_COLUMNS, claim_identity
from evalbars.stats.cluster_robust import clustering_applicable
from evalbars.stats.repeats.run_variance import gap_sign_by_run, run_aware_difference

__all__ = ["RUNS", "has_runs", "runs_rows", "with_runs_rows"]

#: The reading's name in the claims table's ``reading`` column.
RUNS = "runs"


def has_runs(samples: pd.DataFrame | None) -> bool:
    """Whether some model of ``samples`` (``model, run`` per sample) was read in two or more
    runs.

    >>> has_runs(pd.DataFrame({"model": ["a", "a"], "run": ["1", "2"]}))
    True
    """
    if samples is None or "run" not in samples.columns or samples.empty:
        return False
    return bool((samples.groupby("model", observed=True)["run"].nunique() > 1).any())


def _thresholds(claim: Claim) -> list[tuple[float, float]]:
    """``(shift of the claim, shift of its opposite)`` pairs whose one-sided p make the claim's
    p (the larger, for equivalence) and its opposite's (the smaller)."""
    d = claim.margin / 100
    if claim.kind == "superiority":
        return [(d, d)]
    if claim.kind == "noninferiority":
        return [(-d, -d)]
    return [(-d, -d), (d, d)]  # equivalence: -d < Delta < d


def _p_values(claim: Claim, estimate: float, se: float, df: float) -> tuple[float, float]:
    """Doubled one-sided p of the claim and of its opposite at the run-aware t."""

    def above(shift):  # P(Delta > shift) is the claim side: p of H1 Delta > shift
        return float(special.stdtr(df, -(estimate - shift) / se))

    def below(shift):
        return float(special.stdtr(df, (estimate - shift) / se))

    if claim.kind == "equivalence":
        d = claim.margin / 100
        p = max(above(-d), below(d))
        q = min(below(-d), above(d))
    else:
        shift = _thresholds(claim)[0][0]
        p, q = above(shift), below(shift)
    return min(1.0, 2 * p), min(1.0, 2 * q)


def runs_rows(
    claims,
    samples: pd.DataFrame,
    models,
    categories,
    *,
    alpha: float = ALPHA,
    score: str = "mean",
) -> list[dict]:
    """One ``runs`` row (:data:`evalbars.readings.claims.verdicts.CLAIM_COLUMNS`) per claim.

    Parameters
    ----------
    claims : sequence of str or Claim
        The claims (checked against ``models`` and ``categories``).
    samples : DataFrame
        One row per sample: ``model, question_id, category, run, correct``.
    models, categories : sequence of str
        The data's.
    alpha : float
        Level of the verdicts; the interval is at 1 - alpha.
    score : str
        The item score the other readings read; other than ``mean``, every row is ``n/a``.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> q = np.repeat(np.arange(60), 4)
    >>> rows = pd.DataFrame({"model": np.repeat(["A", "B"], q.size),
    ...     "question_id": np.tile(q, 2), "category": "c",
    ...     "run": np.tile(np.tile(["1", "1", "2", "2"], 60), 2),
    ...     "correct": np.concatenate([rng.random(q.size) < 0.8, rng.random(q.size) < 0.4])})
    >>> (row,) = runs_rows(["A > B"], rows, ["A", "B"], ["c"])
    >>> row["reading"], row["verdict"], row["note"].startswith("the gap is positive in every")
    ('runs', 'supported', True)
    """
    rows = []
    for claim in parse_claims(list(claims), list(models), list(categories)):
        rows.append(_row(claim, samples, alpha, score))
    return rows


def _row(claim: Claim, samples: pd.DataFrame, alpha: float, score: str) -> dict:
    row = (
        dict.fromkeys(CLAIM_COLUMNS, np.nan)
        | claim_identity(claim)
        | {
            "reading": RUNS,
            "adjustment": "none",
            "family_size": 1,
            "rival": "",
            "verdict": "n/a",
            "note": "",
        }
    )
    if claim.kind in ("best", "top"):
        return row | {"note": "not applicable (pair claims only)"}
    if (claim.score or score) != "mean":
        return row | {
            "note": f"not applicable to {claim.score or score} scores (the runs reading is of "
            "each run's mean score: run_aware.csv)"
        }
    pair = samples[samples["model"].isin([claim.model_a, claim.model_b])]
    if claim.category is not None:
        pair = pair[pair["category"] == claim.category]
    runs = pair.groupby("model")["run"].nunique()
    one = [m for m in (claim.model_a, claim.model_b) if runs.get(m, 0) < 2]
    signs = gap_sign_by_run(pair, claim.model_a, claim.model_b)
    row["note"] = _signs_note(signs)
    if one:
        return row | {
            "note": f"not applicable ({' and '.join(one)} read in one run); " + row["note"]
        }
    clusters = "category" if clustering_applicable(pair["category"]).applicable else None
    try:
        fit = run_aware_difference(
            pair, claim.model_a, claim.model_b, clusters=clusters, level=1 - alpha
        )
    except ValueError as error:
        return row | {"note": f"not applicable ({error})"}
    p, q = _p_values(claim, fit.difference, fit.se_with_runs, fit.df)
    verdict = "supported" if p < alpha else "contradicted" if q < alpha else "not supported"
    shared = pair.groupby("question_id")["model"].nunique()
    return row | {
        "questions": int((shared == 2).sum()),
        "estimate_points": 100 * fit.difference,
        "ci_low_points": float(np.clip(100 * fit.ci_low, -100, 100)),
        "ci_high_points": float(np.clip(100 * fit.ci_high, -100, 100)),
        "ci_level": 1 - alpha,
        "p": p,
        "p_adjusted": p,
        "p_opposite_adjusted": q,
        "verdict": verdict,
    }


def _signs_note(signs) -> str:
    """The gap's sign in every compared pair of runs, in words."""
    marks = "".join({1: "+", -1: "-", 0: "0"}[int(s)] for s in signs.table["sign"])
    pairs = len(signs.table)
    if signs.holds_in_every_run:
        side = "positive" if signs.gap > 0 else "negative"
        return f"the gap is {side} in every one of {pairs} run pairs ({marks})"
    return f"the gap's sign is not the same in every run ({marks} over {pairs} run pairs)"


def with_runs_rows(table: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    """The claims table with each claim's ``runs`` row after its other rows."""
    if not rows:
        return table
    extra = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    order = {claim: i for i, claim in enumerate(dict.fromkeys(table["claim"]))}
    combined = pd.concat([table, extra], ignore_index=True)
    position = combined["claim"].map(order)
    return combined.iloc[np.argsort(position.to_numpy(), kind="stable")].reset_index(drop=True)
