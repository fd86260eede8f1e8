"""The claims table for people: the one-sentence answer, the display table, Markdown and JSON."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.readings.claims.sets import SET_READING
from evalbars.readings.claims.verdicts import (
    ADJUSTMENT_TITLES,
    CLAIM_COLUMNS,
    JUDGE_CORRECTED,
    Reading,
    rows_of,
    table_readings,
)
from evalbars.render.tables import to_markdown
from evalbars.stats.bayes import Z_UNDERCOVERS_BELOW_N
from evalbars.stats.pairwise import ITEM_SCORE, NOT_BINARY, REPEATED_SAMPLES

__all__ = [
    "claims_display",
    "claims_headline",
    "claims_markdown",
    "claims_json",
    "read_claims_table",
]


#: The reasons the exact readings do not apply (a note names one in brackets): repeated
#: samples, partial credit, or an item score over k samples ("pass@5 scores").
_EXACT = (REPEATED_SAMPLES, NOT_BINARY)
_ITEM_SCORE = re.compile(r"\((" + re.escape(ITEM_SCORE).replace(r"\{\}", r"[^()\s]+") + r")\)")


def _exact_reasons(note: str) -> list[str]:
    """The reasons a note gives for the exact readings not applying.

    >>> _exact_reasons("not applicable (pass@5 scores)"), _exact_reasons("n/a")
    (['pass@5 scores'], [])
    """
    return [r for r in _EXACT if f"({r})" in note] + _ITEM_SCORE.findall(note)


def _paired_adjusted(table: pd.DataFrame) -> Reading:
    """The paired reading with the family's adjustment (Holm by default)."""
    return next(
        (r for r in table_readings(table) if r.kind == "paired" and r.adjusted),
        Reading("paired", "holm"),
    )


def _quoted(table: pd.DataFrame) -> tuple[Reading, str]:
    """The reading the answer quotes and its name: the judge-corrected one with the family's
    adjustment where the scores are a judge's with human labels, else the paired one."""
    corrected = next((r for r in table_readings(table) if r.kind == JUDGE_CORRECTED), None)
    if corrected and (rows_of(table, corrected)["verdict"] != "n/a").any():
        return corrected, "judge-corrected reading"
    return _paired_adjusted(table), "paired reading"


def _corrected_fallback(table: pd.DataFrame) -> str:
    """The sentence that leads when the judge-corrected reading decides nothing: why, and that
    the quoted reading is of the judge's own scores."""
    if "note" not in table:
        return ""
    rows = table[table["reading"] == JUDGE_CORRECTED]
    notes = rows.loc[rows["verdict"] == "n/a", "note"]
    if rows.empty or (rows["verdict"] != "n/a").any() or not notes.astype(bool).any():
        return ""
    return (
        f"The judge-corrected reading decides nothing ({notes[notes.astype(bool)].iloc[0]}): "
        "the verdicts are of the judge's own scores, biased as the judge is. "
    )


def _points(value: float) -> str:
    return f"{value:+.1f}"


def _note(row) -> str:
    """The row's ``note`` ("" where it has none, or in a table written before notes)."""
    note = row.get("note", "")
    return note if isinstance(note, str) else ""


def _cell(row) -> str:
    verdict = row["verdict"]
    if verdict == "n/a":
        # The exact readings where the data have no 2x2 table, and a judge-corrected reading
        # that decides nothing, say why; the other readings that do not apply to a kind of
        # claim are the notes under the table.
        note = _note(row)
        if _exact_reasons(note):
            return note
        return f"n/a: {note}" if note and row["reading"] == JUDGE_CORRECTED else "n/a"
    if row["reading"] == SET_READING:
        return f"{verdict} ({_note(row)})"
    if row["reading"] == "bootstrap":
        low, high = int(row["rank_low"]), int(row["rank_high"])
        ranks = f"rank {low}" if low == high else f"ranks {low}-{high}"
        return f"{verdict} ({ranks}; P {row['p_top']:.2f})"
    p = row["p_adjusted"]
    shown = f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"
    if verdict == "contradicted":
        q = row["p_opposite_adjusted"]
        shown = f"{q:.3f}" if q >= 0.001 else f"{q:.0e}"
    return f"{verdict} (p {shown})"


def claims_display(table: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: the paired estimate and interval, each reading's verdict, questions
    needed."""
    rows = []
    for claim, group in table.groupby("claim", sort=False):
        by = {Reading(r["reading"], r["adjustment"]): r for _, r in group.iterrows()}
        paired = by[Reading("paired")]
        if np.isfinite(paired["ci_low_points"]):
            interval = f"{_points(paired['ci_low_points'])} to {_points(paired['ci_high_points'])}"
        else:  # a zero SE: no interval, and the note says why
            interval = _note(paired) or "no interval"
        estimate = f"{_points(paired['estimate_points'])} ({interval})"
        if isinstance(paired["rival"], str) and paired["rival"]:
            estimate += f" vs {paired['rival']}"
        holm = by[_paired_adjusted(table)]
        needed = holm["questions_needed"]
        if holm["verdict"] != "not supported":
            plan = "decided"
        elif np.isfinite(needed):
            plan = f"{int(needed):,} (+{int(holm['more_questions']):,})"
        elif _note(paired).startswith("no interval"):  # no spread of the differences to plan on
            plan = "no number (no spread: " + _note(paired).partition(": ")[2] + ")"
        else:
            plan = "no number (observed gap at the threshold)"
        rows.append(
            {"claim": claim, "questions": int(paired["questions"]), "gap, points (CI)": estimate}
            | {r.title: _cell(by[r]) for r in table_readings(table)}
            | {"questions needed": plan}
        )
    return pd.DataFrame(rows)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def claims_headline(table: pd.DataFrame) -> str:
    """The answer in one sentence: the verdicts of the reading to quote, the paired reading
    with Holm over the claims made (the README's recommendation; on judge scores with human
    labels the judge-corrected reading with Holm), and plainly when no claim survives that
    adjustment; how many the unadjusted paired reading supports beside it. The other readings
    are in the table.

    Examples
    --------
    >>> table = pd.DataFrame({"claim": ["a", "a", "b", "b"], "reading": "paired",
    ...     "adjustment": ["none", "holm"] * 2, "verdict": ["supported", "not supported"] * 2,
    ...     "family_size": [1, 2, 1, 2], "questions": 1497})
    >>> claims_headline(table)
    'No claim survives the Holm adjustment for 2 claims; 2 are supported before it (paired reading).'
    """
    n = table["claim"].nunique()
    if not n:
        return "No claims to test."
    reading, name = _quoted(table)
    holm = rows_of(table, reading)
    paired = rows_of(table, Reading("paired"))["verdict"]
    family = int(holm["family_size"].max()) if len(holm) else n
    adjusted = int((holm["verdict"] == "supported").sum())
    before = int((paired == "supported").sum())
    title = ADJUSTMENT_TITLES[reading.adjustment]
    scope = f"the {title} adjustment for {_count(family, 'claim')}"
    if family != n:
        scope = f"the {title} adjustment for {family} tests"
    small = _corrected_fallback(table) + _small_sample_sentence(table)
    best = _best_set_sentence(table)
    best = f" {best}" if best else ""
    if not adjusted and family == 1:
        return small + f"The claim is not supported by the {name}." + best
    if not adjusted:
        tail = (
            f"; {before} {'is' if before == 1 else 'are'} supported before it (paired reading)"
            if before
            else ", nor any before it"
        )
        return f"{small}No claim survives {scope}{tail}.{best}"
    first = f"{adjusted} of {_count(n, 'claim')}" if n > 1 else "The claim"
    verb = "is" if adjusted == 1 else "are"
    after = f" after {scope}" if family > 1 else ""
    return f"{small}{first} {verb} supported by the {name}{after}.{best}"


def _best_set_sentence(table: pd.DataFrame) -> str:
    """For the ``best:`` claims whose confidence set for the best is not the claimed model
    alone: that a ``best:`` claim is supported only when it is, and what the set holds.

    Examples
    --------
    >>> table = pd.DataFrame({"claim": "best: a", "kind": "best", "reading": "mcb",
    ...     "adjustment": "none", "verdict": ["not supported"], "note": ["set: a, b"]})
    >>> _best_set_sentence(table)
    "A 'best:' claim is supported only when the confidence set for the best (Hsu's MCB) is that model alone: for 'best: a' it holds a, b."
    """
    if "kind" not in table:
        return ""
    rows = table[
        (table["kind"] == "best")
        & (table["reading"] == SET_READING)
        & (table["verdict"].isin(["not supported", "contradicted"]))
    ]
    if rows.empty:
        return ""
    said = "; ".join(
        f"for '{row['claim']}' it holds {_note(row).removeprefix('set: ')}"
        for _, row in rows.iterrows()
    )
    return (
        "A 'best:' claim is supported only when the confidence set for the best (Hsu's MCB) is "
        f"that model alone: {said}."
    )


def _small_sample_sentence(table: pd.DataFrame) -> str:
    """Below :data:`evalbars.stats.bayes.Z_UNDERCOVERS_BELOW_N` questions, the sentence that
    leads: the z readings under-cover, and what the exact and Bayesian readings say."""
    questions = int(table["questions"].max())
    if questions >= Z_UNDERCOVERS_BELOW_N:
        return ""
    counts, reasons, barred = [], {}, 0
    for kind, title in (("mcnemar", "exact McNemar"), ("bayes", "Bayesian")):
        rows = table[table["reading"] == kind]
        live = rows["verdict"] != "n/a"
        if live.any():
            supported = int((rows["verdict"] == "supported").sum())
            counts.append(f"{supported} of {int(live.sum())} by the {title} reading")
        notes = rows["note"] if "note" in rows else pd.Series(dtype=str)
        found = [_exact_reasons(note) for note in notes.astype(str)]
        reasons |= dict.fromkeys(r for listed in found for r in listed)
        barred = max(barred, sum(bool(listed) for listed in found))
    said = ("; supported: " + ", ".join(counts)) if counts else ""
    if reasons:  # the exact readings do not apply to some claims: the z readings are the answer
        why = "; ".join(reasons)
        claims = table["claim"].nunique()
        whom = "" if barred == claims else f" to {_count(barred, 'claim')}"
        said += f"; the exact McNemar and Bayesian readings do not apply{whom} ({why})"
    verb = "can be" if reasons and not counts else "are"
    return (
        f"With {_count(questions, 'question')} (fewer than {Z_UNDERCOVERS_BELOW_N}) the z "
        f"readings' intervals {verb} too narrow{said}. "
    )


def claims_markdown(table: pd.DataFrame, alpha: float = ALPHA, family: str = "claims") -> str:
    """The claims table as Markdown: headline, one row per claim, and how to read it."""
    if table.empty:
        return "No claims configured (config key `claims`, or `evalbars claims --claim`).\n"
    adjusted = _paired_adjusted(table)
    holm = rows_of(table, adjusted)["family_size"]
    size = int(holm.iloc[0]) if len(holm) else 0
    title = ADJUSTMENT_TITLES[adjusted.adjustment]
    members = "the claims made" if family == "claims" else "the claims made and all pairs"
    notes = (
        f"Verdicts at alpha = {alpha:g}: supported when the claim's (adjusted) p < alpha, "
        "contradicted when the opposite's is, else not supported; p is the doubled one-sided p "
        f"of the claim (Bayesian: twice the posterior probability that it is false). {title} "
        f"family: {members} ({_count(size, 'test')}). Gap: the paired estimate with its "
        f"{1 - alpha:.0%} interval, in accuracy points (for best/top k: to the deciding rival). "
        "Bootstrap: the claim's central rank interval and P(rank <= k). Questions needed: for the "
        f"paired {title} verdict to be decided with the configured power if the true gap were the "
        "observed one, with the shortfall of the claim's scope in brackets."
    )
    runs = table[table["reading"] == "runs"]
    if len(runs):
        notes += (
            " Runs: the paired gap with each model's run-to-run variance added to its SE "
            "(runs as a random effect; unadjusted): a claim it supports would survive a rerun. "
            + " ".join(
                f"{row.claim}: {row.note}."
                for row in runs.itertuples()
                if isinstance(row.note, str) and row.note
            )
        )
    return (
        claims_headline(table) + "\n\n" + to_markdown(claims_display(table)) + "\n" + notes + "\n"
    )


_TEXT_COLUMNS = (
    "claim",
    "kind",
    "model_a",
    "model_b",
    "category",
    "reading",
    "adjustment",
    "rival",
    "verdict",
    "note",
)


def read_claims_table(path) -> pd.DataFrame:
    """Read ``claims.csv`` back: text columns stay text (``n/a`` and a model called ``NA`` too)."""
    numeric = [c for c in CLAIM_COLUMNS if c not in _TEXT_COLUMNS]
    table = pd.read_csv(path, keep_default_na=False, na_values={c: [""] for c in numeric})
    return table.astype({c: str for c in _TEXT_COLUMNS if c in table})


def claims_json(table: pd.DataFrame, alpha: float, family: str) -> str:
    """The claims table as JSON: settings, headline and one record per (claim, reading)."""
    document = {
        "alpha": alpha,
        "family": family,
        "headline": claims_headline(table),
        "rows": json.loads(table.to_json(orient="records", double_precision=15)),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
