r"""Claims about battles' ratings, with verdicts: the claims table of a battles run.

The claims are those of :mod:`evalbars.readings.claims.parsing` (``A > B``, ``A > B + d``,
``A >= B - d``, ``|A - B| < d``, ``best: A``, ``top k: A``, ``... in CATEGORY``) with their
margins in **Elo points** (``unit="elo"``). Each is tested on the Bradley-Terry ratings
(:func:`evalbars.readings.battles.battle_claims`: the one-sided p of the claim and of its
opposite from :math:`\Phi(-(d - s)/\mathrm{se})`, ``top k`` by the rule of
:mod:`evalbars.readings.claims.verdicts`, ``in CATEGORY`` refitted on that category's battles)
and decided as every claim is (:mod:`evalbars.readings.claims.verdicts`): each one-sided p is
doubled, the family of the claims made is adjusted (Holm by default), a claim is
**supported** when its (adjusted) p < alpha, **contradicted** when its opposite's is, and **not
supported** otherwise.

Readings (each a :class:`~evalbars.readings.claims.verdicts.Reading`; the table's ``reading``
and ``adjustment`` columns):

``per_battle``
    the per-battle sandwich (HC0), every battle independent: the naive reading;
``clustered``
    CR1 by prompt (by voter on LMArena's files, or as configured): battles of one prompt may
    agree, the reading to quote;
``per_battle`` and ``clustered`` with ``<adjust>``
    the same, the family adjusted; the answer quotes the clustered one.

Intervals are :math:`d \pm z_{1-\ell/2}\,\mathrm{se}` with :math:`\ell = \alpha` unadjusted and
:math:`\alpha/(mk)` adjusted over m claims (k for ``top k``, as for accuracy). On the quoted
row, ``battles_needed`` is the head-to-head battles for the verdict to be decided with the
configured power if the true gap were the observed one
(:func:`evalbars.readings.battles.battles_needed`, at level :math:`\alpha/(mk)`, with the
pair's tie rate and design effect, the clustered over the per-battle variance of its
difference), and ``more_battles`` what the pair lacks when the claim is not supported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA, POWER
from evalbars.readings.battles import battle_claims, battles_needed
from evalbars.readings.claims.parsing import parse_claims
from evalbars.readings.claims.verdicts import (
    ADJUSTMENT_TITLES,
    ADJUSTMENTS,
    Reading,
    rows_of,
    table_readings,
)
from evalbars.render.tables import to_markdown
from evalbars.stats.pairwise import adjust_pvalues

__all__ = [
    "BATTLE_CLAIM_COLUMNS",
    "battle_readings",
    "quoted_reading",
    "battle_verdicts",
    "battle_claims_display",
    "battle_claims_headline",
    "battle_claims_markdown",
]

#: Columns of a battles run's claims table, in order (those of the accuracy claims table
#: where they mean the same, Elo points for accuracy points, battles for questions).
BATTLE_CLAIM_COLUMNS = [
    "claim",
    "kind",
    "model_a",
    "model_b",
    "category",
    "margin_elo",
    "k",
    "battles",
    "reading",
    "adjustment",
    "family_size",
    "estimate_elo",
    "se_elo",
    "ci_low_elo",
    "ci_high_elo",
    "ci_level",
    "rival",
    "p",
    "p_adjusted",
    "p_opposite_adjusted",
    "verdict",
    "pair_battles",
    "tie_rate",
    "design_effect",
    "battles_needed",
    "more_battles",
    "note",
]


def battle_readings(adjust: str = "holm") -> tuple[Reading, ...]:
    """The readings of a battles claims table, in table order.

    Examples
    --------
    >>> [r.title for r in battle_readings()]
    ['per-battle', 'clustered', 'per-battle, Holm', 'clustered, Holm']
    """
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"adjust must be one of {ADJUSTMENTS}, got {adjust!r}")
    return (
        Reading("per_battle"),
        Reading("clustered"),
        Reading("per_battle", adjust),
        Reading("clustered", adjust),
    )


def quoted_reading(table: pd.DataFrame) -> Reading:
    """The reading the answer quotes: the clustered one with the family's adjustment."""
    return next(
        (r for r in table_readings(table) if r.kind == "clustered" and r.adjusted),
        Reading("clustered", "holm"),
    )


def _verdict(p_adjusted: float, p_opposite_adjusted: float, alpha: float) -> str:
    if p_adjusted < alpha:
        return "supported"
    if p_opposite_adjusted < alpha:
        return "contradicted"
    return "not supported"


def _pair_counts(frame: pd.DataFrame, a: str, b: str, category) -> tuple[float, float]:
    """The weighted battles of a pair (in ``category``) and the share of them that are ties,
    as :func:`evalbars.readings.battles.battle_plan` counts them."""
    if category is not None:
        frame = frame[frame["category"] == category]
    pair = ((frame["model_a"] == a) & (frame["model_b"] == b)) | (
        (frame["model_a"] == b) & (frame["model_b"] == a)
    )
    weight = frame.loc[pair, "weight"].to_numpy(dtype=float)
    ties = weight[frame.loc[pair, "outcome"].to_numpy(dtype=float) == 0.5].sum()
    total = weight.sum()
    return float(total), float(ties / total) if total > 0 else 0.0


def _effect(kind: str, estimate: float, margin: float) -> float:
    """The distance of the estimate from the claim's null boundary (Elo points)."""
    if kind == "noninferiority":
        return abs(estimate + margin)
    if kind == "equivalence":
        return abs(margin - abs(estimate))
    return abs(estimate - margin) if kind == "superiority" else abs(estimate)


def _plan(row: dict, frame: pd.DataFrame, deff: float, alpha: float, power: float) -> dict:
    """``battles_needed`` and ``more_battles`` of the quoted row (module docstring)."""
    total, ties = _pair_counts(frame, row["model_a"], row["rival"] or row["model_b"],
                               row["category"] or None)  # fmt: skip
    divisor = row["k"] if row["kind"] in ("best", "top") else 1
    if row["kind"] in ("best", "top") and row["verdict"] == "contradicted":
        divisor = row["_models"] - row["k"]
    level = alpha / (row["family_size"] * divisor)
    effect = _effect(row["kind"], row["estimate_elo"], row["margin_elo"])
    if row["kind"] == "equivalence" and row["estimate_elo"] == 0:
        power = 1 - (1 - power) / 2  # both one-sided tests must reject
    needed = np.nan
    if effect > 0 and np.isfinite(deff):
        try:
            needed = float(np.ceil(battles_needed(row["estimate_elo"], tie_rate=ties,
                design_effect=deff, alpha=level, power=power, effect=effect)))  # fmt: skip
        except ValueError:  # a tie rate that leaves the gap's score no variance
            needed = np.nan
    more = 0.0 if row["verdict"] != "not supported" else max(0.0, needed - total)
    return {
        "pair_battles": total,
        "tie_rate": ties,
        "design_effect": deff,
        "battles_needed": needed,
        "more_battles": more,
    }


def battle_verdicts(
    frame: pd.DataFrame,
    claims,
    *,
    alpha: float = ALPHA,
    adjust: str = "holm",
    power: float = POWER,
    ties: str = "half",
    cluster: str = "cluster",
    style: bool = False,
    note: str = "",
) -> pd.DataFrame:
    """Verdicts of every claim about battles under every reading (module docstring).

    Parameters
    ----------
    frame : DataFrame
        Battles (:func:`evalbars.data.battles.read_battles`) with the column ``cluster`` they
        are clustered by (:func:`evalbars.readings.battles.with_clusters`).
    claims : iterable of str
        Claims, margins in Elo points.
    alpha, adjust, power
        The verdicts' level, the family's adjustment (:data:`~evalbars.readings.claims.verdicts.ADJUSTMENTS`),
        the power of ``battles_needed``.
    ties, style
        As :func:`evalbars.readings.battles.fit_battles`.
    note : str
        How the battles are clustered, for the clustered rows' ``note``.

    Returns
    -------
    DataFrame
        :data:`BATTLE_CLAIM_COLUMNS`, one row per (claim, reading).

    Examples
    --------
    >>> from evalbars.data.battles import read_battles
    >>> from evalbars.readings.battles import with_clusters
    >>> battles, how = with_clusters(read_battles("tests/data/battles/clustered.csv"))
    >>> table = battle_verdicts(battles, ["model-a > model-f"], note=how)
    >>> table[["reading", "adjustment", "verdict"]].values.tolist()[-1]
    ['clustered', 'holm', 'supported']
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    names = battle_readings(adjust)
    claims = list(claims)
    if not claims:
        return pd.DataFrame(columns=BATTLE_CLAIM_COLUMNS)
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    categories = sorted(frame["category"].dropna().unique()) if "category" in frame else []
    parsed = parse_claims(claims, models, categories, unit="elo")
    tested = battle_claims(
        frame, parsed, readings=("per_battle", "clustered"), ties=ties, cluster=cluster,
        style=style,
    )  # fmt: skip
    by_kind = {kind: tested[tested["reading"] == kind].reset_index(drop=True)
               for kind in ("per_battle", "clustered")}  # fmt: skip
    deff = (by_kind["clustered"]["se"] / by_kind["per_battle"]["se"]) ** 2
    rows = {}
    for reading in names:
        base = by_kind[reading.kind]
        p = np.minimum(1.0, 2 * base["p"].to_numpy())
        q = np.minimum(1.0, 2 * base["p_opposite"].to_numpy())
        family = len(parsed) if reading.adjusted else 1
        p_adj, q_adj = (
            (adjust_pvalues(p, reading.adjustment), adjust_pvalues(q, reading.adjustment))
            if reading.adjusted
            else (p, q)
        )
        for i, claim in enumerate(parsed):
            source = base.iloc[i]
            divisor = claim.k if claim.kind in ("best", "top") else 1
            level = alpha / (divisor * family)
            half = special.ndtri(1 - level / 2) * source["se"]
            pair = claim.kind in ("best", "top")
            row = {
                "claim": claim.label,
                "kind": claim.kind,
                "model_a": claim.model_a,
                "model_b": claim.model_b or "",
                "category": claim.category or "",
                "margin_elo": claim.margin,
                "k": claim.k if pair else np.nan,
                "battles": int(source["battles"]),
                "reading": reading.kind,
                "adjustment": reading.adjustment,
                "family_size": family,
                "estimate_elo": source["estimate"],
                "se_elo": source["se"],
                "ci_low_elo": source["estimate"] - half,
                "ci_high_elo": source["estimate"] + half,
                "ci_level": 1 - level,
                "rival": source["rival"] if pair else "",
                "p": p[i],
                "p_adjusted": p_adj[i],
                "p_opposite_adjusted": q_adj[i],
                "verdict": _verdict(p_adj[i], q_adj[i], alpha),
                "note": note if reading.kind == "clustered" else "",
            }
            if reading == names[-1]:
                extra = row | {"_models": len(models)}
                row |= _plan(extra, frame, float(deff.iloc[i]), alpha, power)
            rows[i, reading] = row
    ordered = [rows[i, reading] for i in range(len(parsed)) for reading in names]
    return pd.DataFrame(ordered, columns=BATTLE_CLAIM_COLUMNS)


def _elo(value: float) -> str:
    return f"{value:+.1f}"


def _cell(row) -> str:
    p = row["p_opposite_adjusted"] if row["verdict"] == "contradicted" else row["p_adjusted"]
    return f"{row['verdict']} (p {p:.3f})" if p >= 0.001 else f"{row['verdict']} (p {p:.0e})"


def battle_claims_display(table: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: the clustered estimate and interval in Elo points, each reading's
    verdict, and the head-to-head battles the quoted verdict needs."""
    quoted = quoted_reading(table)
    rows = []
    for claim, group in table.groupby("claim", sort=False):
        by = {Reading(r["reading"], r["adjustment"]): r for _, r in group.iterrows()}
        clustered = by[Reading("clustered")]
        gap = (
            f"{_elo(clustered['estimate_elo'])} ({_elo(clustered['ci_low_elo'])} to "
            f"{_elo(clustered['ci_high_elo'])})"
        )
        if clustered["rival"]:
            gap += f" vs {clustered['rival']}"
        plan = by[quoted]
        if plan["verdict"] != "not supported":
            needed = "decided"
        elif np.isfinite(plan["battles_needed"]):
            needed = f"{plan['battles_needed']:,.0f} (+{plan['more_battles']:,.0f})"
        else:
            needed = "no number (observed gap at the threshold)"
        rows.append(
            {"claim": claim, "battles": int(clustered["battles"]), "gap, Elo (CI)": gap}
            | {r.title: _cell(by[r]) for r in table_readings(table)}
            | {"battles needed (head to head)": needed}
        )
    return pd.DataFrame(rows)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def battle_claims_headline(table: pd.DataFrame) -> str:
    """The answer in one sentence: the verdicts of the clustered reading with the family's
    adjustment, and how many the per-battle reading supports before it.

    Examples
    --------
    >>> table = pd.DataFrame({"claim": ["a"] * 4, "reading": ["per_battle", "clustered"] * 2,
    ...     "adjustment": ["none", "none", "holm", "holm"], "family_size": [1, 1, 1, 1],
    ...     "verdict": ["supported", "not supported", "supported", "not supported"]})
    >>> battle_claims_headline(table)
    'The claim is not supported by the clustered reading; the per-battle reading, which takes every battle as independent, supports it.'
    """
    n = table["claim"].nunique()
    if not n:
        return "No claims to test."
    quoted = quoted_reading(table)
    adjusted = rows_of(table, quoted)
    supported = int((adjusted["verdict"] == "supported").sum())
    naive = int((rows_of(table, Reading("per_battle"))["verdict"] == "supported").sum())
    title = ADJUSTMENT_TITLES[quoted.adjustment]
    after = f" after the {title} adjustment for {_count(n, 'claim')}" if n > 1 else ""
    if n == 1:
        said = "supported" if supported else "not supported"
        head = f"The claim is {said} by the clustered reading"
        tail = ""
        if naive and not supported:
            tail = "; the per-battle reading, which takes every battle as independent, supports it"
        return head + tail + "."
    head = f"{supported} of {_count(n, 'claim')} {'is' if supported == 1 else 'are'} supported"
    tail = f"; the per-battle reading, unadjusted, supports {naive}" if naive != supported else ""
    return f"{head} by the clustered reading{after}{tail}."


def battle_claims_markdown(table: pd.DataFrame, alpha: float = ALPHA) -> str:
    """The claims table as Markdown: headline, one row per claim, and how to read it."""
    if table.empty:
        return "No claims configured (config key `claims`, or `evalbars report --claim`).\n"
    quoted = quoted_reading(table)
    title = ADJUSTMENT_TITLES[quoted.adjustment]
    notes = (
        f"Verdicts at alpha = {alpha:g}: supported when the claim's (adjusted) p < alpha, "
        "contradicted when the opposite's is, else not supported; p is the doubled one-sided p "
        f"of the claim, the {title} family the claims made. Gap: the clustered estimate with its "
        f"{1 - alpha:.0%} interval, in Elo points (for best/top k: to the deciding rival). "
        f"Battles needed: head to head, for the clustered {title} verdict to be decided with the "
        "configured power if the true gap were the observed one (the pair's shortfall in "
        "brackets)."
    )
    return (
        battle_claims_headline(table)
        + "\n\n"
        + to_markdown(battle_claims_display(table))
        + "\n"
        + notes
        + "\n"
    )
