"""What repeated samples and reruns mean for a comparison: which pairs to draw curves for, how
each pair's gap fares when runs are a random effect, and its sign in every run.

:func:`curve_pairs` chooses the pairs whose pass@k difference is drawn over k
(:func:`evalbars.stats.repeats.passk_band.passk_difference_band`): the pairs the claims
compare, else every model against a baseline, else each model against the next in the order
of their scores. :func:`run_readings` gives, for those pairs, the reading that treats runs as
a random effect (:func:`evalbars.stats.repeats.run_variance.run_aware_difference`: its
interval includes each model's run-to-run variance, so it says whether the gap would survive
a rerun) and the sign of the gap in each run
(:func:`evalbars.stats.repeats.run_variance.gap_sign_by_run`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.readings.claims.parsing import parse_claims
from evalbars.stats.cluster_robust import clustering_applicable
from evalbars.stats.repeats.run_variance import gap_sign_by_run, run_aware_difference

__all__ = ["Pair", "curve_pairs", "run_readings", "RUN_READING_COLUMNS", "RUN_SIGN_COLUMNS"]


@dataclass(frozen=True)
class Pair:
    """Two models compared, A minus B, on every question or one category's."""

    model_a: str
    model_b: str
    category: str | None = None
    source: str = ""


def curve_pairs(claims, models_by_score, *, baseline=None, categories=None) -> list[Pair]:
    """The pairs to compare over k and over runs.

    Parameters
    ----------
    claims : sequence of str
        The claims (already checked against the data).
    models_by_score : sequence of str
        The models, best first.
    baseline : str, optional
        A model every other model is compared with (``repeats.baseline``, like ``evalbars
        compare --baseline``).
    categories : sequence of str, optional
        The data's categories (for the claims' ``in CATEGORY``).

    Returns
    -------
    list of Pair
        The claims' pairs (``A > B``, ``A >= B - d``, ``|A - B| < d``: A and B, on the claim's
        category; ``best: A`` and ``top k: A``: A against every other model), in claim order;
        then each model against ``baseline``; or, with neither, each model against the next
        best. A pair is listed once.

    Examples
    --------
    >>> [(p.model_a, p.model_b) for p in curve_pairs(["B > A"], ["A", "B", "C"])]
    [('B', 'A')]
    >>> [(p.model_a, p.model_b) for p in curve_pairs([], ["A", "B", "C"], baseline="C")]
    [('A', 'C'), ('B', 'C')]
    >>> [(p.model_a, p.model_b) for p in curve_pairs([], ["A", "B", "C"])]
    [('A', 'B'), ('B', 'C')]
    """
    models = list(models_by_score)
    pairs: list[Pair] = []
    for claim in parse_claims(list(claims), models, categories):
        rivals = [claim.model_b] if claim.model_b else [m for m in models if m != claim.model_a]
        pairs += [Pair(claim.model_a, b, claim.category, f"claim {claim.label}") for b in rivals]
    if baseline is not None:
        if baseline not in models:
            raise ValueError(f"baseline {baseline!r} is not a model here; models: {models}")
        pairs += [Pair(m, baseline, None, "baseline") for m in models if m != baseline]
    if not pairs:
        pairs = [Pair(a, b, None, "next best") for a, b in zip(models, models[1:], strict=False)]
    unique = {}
    for pair in pairs:
        unique.setdefault((pair.model_a, pair.model_b, pair.category), pair)
    return list(unique.values())


#: Columns of :func:`run_readings`' first table.
RUN_READING_COLUMNS = [
    "model_a",
    "model_b",
    "category",
    "source",
    "difference",
    "se_questions",
    "df_questions",
    "runs_a",
    "runs_b",
    "var_run_a",
    "var_run_b",
    "se_with_runs",
    "df",
    "ci_low",
    "ci_high",
    "p_value",
    "decided_without_runs",
    "survives_rerun",
    "run_pairs",
    "pairing",
    "holds_in_every_run",
    "note",
]
#: Columns of :func:`run_readings`' second table.
RUN_SIGN_COLUMNS = [
    "model_a",
    "model_b",
    "category",
    "run_a",
    "run_b",
    "accuracy_a",
    "accuracy_b",
    "gap",
    "sign",
    "pairing",
    "holds_in_every_run",
]


def run_readings(
    samples: pd.DataFrame, pairs, *, level: float = LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each pair's gap with runs as a random effect, and its sign in every run.

    Parameters
    ----------
    samples : DataFrame
        One row per sample: ``model, question_id, category, run, correct``.
    pairs : sequence of Pair
        From :func:`curve_pairs`.
    level : float
        Confidence level of the interval.

    Returns
    -------
    (DataFrame, DataFrame)
        :data:`RUN_READING_COLUMNS`, one row per pair: the paired difference on the shared
        questions (scores over every run and sample), its question-level CR2 SE (clustered by
        category where there are two or more), the SE with each model's run variance added
        (``se_with_runs``, NaN where a model has one run: a run shift is then not
        estimable, ``note`` says so), its t interval and p, whether the interval decides
        without and with the runs (``survives_rerun``), and whether the gap has the pooled
        gap's sign in every run (``holds_in_every_run``). :data:`RUN_SIGN_COLUMNS`, one row
        per pair of runs compared.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "question_id": ["x", "y"] * 4,
    ...     "category": "c", "run": ["1", "1", "2", "2"] * 2,
    ...     "correct": [1, 1, 1, 0, 0, 1, 1, 0]})
    >>> aware, signs = run_readings(rows, [Pair("A", "B")])
    >>> signs["gap"].tolist(), bool(aware["holds_in_every_run"].iloc[0])
    ([0.5, 0.0], False)
    """
    readings, signs = [], []
    for pair in pairs:
        rows = samples[samples["model"].isin([pair.model_a, pair.model_b])]
        if pair.category is not None:
            rows = rows[rows["category"] == pair.category]
        runs = rows.groupby("model", observed=True)["run"].nunique()
        clusters = "category" if clustering_applicable(rows["category"]).applicable else None
        signed = gap_sign_by_run(rows, pair.model_a, pair.model_b)
        signs.append(
            signed.table.assign(
                model_a=pair.model_a,
                model_b=pair.model_b,
                category=pair.category,
                pairing=signed.pairing,
                holds_in_every_run=signed.holds_in_every_run,
            )
        )
        try:
            aware = run_aware_difference(
                rows, pair.model_a, pair.model_b, clusters=clusters, level=level
            )
        except ValueError as error:  # too few questions for a fit
            readings.append(_row(pair, {"note": str(error)}, signed))
            continue
        one_run = [m for m in (pair.model_a, pair.model_b) if runs.get(m, 0) < 2]
        note = (
            f"{' and '.join(one_run)} read in one run: the run-to-run variance is not estimable"
            if one_run
            else ""
        )
        readings.append(_row(pair, vars(aware) | {"note": note}, signed))
    aware_table = pd.DataFrame(readings, columns=RUN_READING_COLUMNS)
    sign_table = (
        pd.concat(signs, ignore_index=True)[RUN_SIGN_COLUMNS]
        if signs
        else pd.DataFrame(columns=RUN_SIGN_COLUMNS)
    )
    return aware_table, sign_table


def _row(pair: Pair, values: dict, signed) -> dict:
    row = dict.fromkeys(RUN_READING_COLUMNS, np.nan) | {
        key: value for key, value in values.items() if key in RUN_READING_COLUMNS
    }
    return row | {
        "model_a": pair.model_a,
        "model_b": pair.model_b,
        "category": pair.category,
        "source": pair.source,
        "run_pairs": len(signed.table),
        "pairing": signed.pairing,
        "holds_in_every_run": signed.holds_in_every_run,
        "note": values.get("note", ""),
    }
