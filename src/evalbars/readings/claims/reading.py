"""The readings of a claim as values: what is computed (``kind``) and how the claims' family
adjusts it (``adjustment``), the two columns of ``claims.csv`` (:class:`Reading`), and the list
of readings a claims table holds (:func:`readings`). The verdicts under each reading are
:func:`evalbars.readings.claims.verdicts.evaluate_claims`'s."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalbars.readings.claims.sets import SET_READING

__all__ = [
    "ADJUSTMENTS",
    "FAMILIES",
    "JUDGE_CORRECTED",
    "UNADJUSTED",
    "ADJUSTMENT_TITLES",
    "READINGS",
    "Reading",
    "readings",
    "table_readings",
    "rows_of",
]

#: Multiplicity adjustments of the family (``claims_options.adjust``): Holm's step-down and
#: Bonferroni (family-wise error), Benjamini-Hochberg (false discovery rate).
ADJUSTMENTS = ("holm", "bonferroni", "bh")
FAMILIES = ("claims", "claims_and_all_pairs")


#: The prefix of the judge-corrected reading (PPI++ of the pair's differences).
JUDGE_CORRECTED = "judge_corrected"
#: The adjustment of a reading that is not adjusted for the family.
UNADJUSTED = "none"
#: How tables and figures name each adjustment.
ADJUSTMENT_TITLES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "BH"}
_KIND_TITLES = {
    "mcnemar": "McNemar",
    "bayes": "Bayesian",
    "bootstrap": "bootstrap ranks",
    "runs": "runs, random effect",
    SET_READING: "confidence set",
}


@dataclass(frozen=True)
class Reading:
    """One reading of a claim: what is computed (``kind``) and how the family adjusts it.

    Attributes
    ----------
    kind : str
        ``naive``, ``paired``, ``mcnemar``, ``bayes``, ``mixed``, ``bootstrap`` or
        ``judge_corrected``: the claims table's ``reading`` column.
    adjustment : str
        ``none``, or one of :data:`ADJUSTMENTS` over the family: its ``adjustment`` column.

    Examples
    --------
    >>> Reading("paired", "holm").title, Reading("bayes").title, Reading("paired").adjusted
    ('paired, Holm', 'Bayesian', False)
    """

    kind: str
    adjustment: str = UNADJUSTED

    @property
    def adjusted(self) -> bool:
        """True when the family's adjustment applies."""
        return self.adjustment != UNADJUSTED

    @property
    def title(self) -> str:
        """The reading's name in tables and figures (``paired, Holm``, ``McNemar``)."""
        kind = _KIND_TITLES.get(self.kind, self.kind.replace("_", "-"))
        return f"{kind}, {ADJUSTMENT_TITLES[self.adjustment]}" if self.adjusted else kind


def readings(adjust: str = "holm", labelled: bool = False) -> tuple[Reading, ...]:
    """The readings of a claims table whose family is adjusted by ``adjust``, in table order;
    with ``labelled`` (judge scores with human labels) the judge-corrected reading last."""
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"adjust must be one of {ADJUSTMENTS}, got {adjust!r}")
    return (
        Reading("naive"),
        Reading("paired"),
        Reading("mcnemar"),
        Reading("bayes"),
        Reading("paired", adjust),
        Reading("mixed", adjust),
        Reading("bootstrap"),
        Reading(SET_READING),
    ) + ((Reading(JUDGE_CORRECTED, adjust),) if labelled else ())


def table_readings(table: pd.DataFrame) -> list[Reading]:
    """The readings a claims table holds (its ``reading`` and ``adjustment`` columns), in
    table order."""
    pairs = zip(table["reading"], table["adjustment"], strict=True)
    return [Reading(kind, adjustment) for kind, adjustment in dict.fromkeys(pairs)]


def rows_of(table: pd.DataFrame, reading: Reading) -> pd.DataFrame:
    """The rows of a claims table read by ``reading``."""
    return table[(table["reading"] == reading.kind) & (table["adjustment"] == reading.adjustment)]


#: The readings with Holm's adjustment, the default.
READINGS = readings("holm")
