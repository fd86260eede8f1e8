"""Rank tables as text: shares as percentages, the headline, a readable view, Markdown and JSON."""

from __future__ import annotations

import json
import math

import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.readings.ranks.report import RankReport
from evalbars.render.tables import to_markdown

__all__ = [
    "percent_text",
    "headline",
    "display_table",
    "readings_display",
    "report_markdown",
    "readings_markdown",
    "report_json",
]


def _points(value: float, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"
    return text.replace("-", "−")


def _range_text(low, high) -> str:
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}–{int(high)}"


def percent_text(p: float, digits: int = 0) -> str:
    """A share as a percentage with ``digits`` decimals; never rounds a share below 1 up to
    100% (``">99%"``, ``">99.9%"``), nor one above 0 down to 0% (``"<1%"``, ``"<0.1%"``).

    Examples
    --------
    >>> percent_text(0.9712), percent_text(0.9996), percent_text(0.9996, digits=1)
    ('97%', '>99%', '>99.9%')
    >>> percent_text(0.0004, digits=1), percent_text(0.0)
    ('<0.1%', '0%')
    """
    # Thresholds parsed from text ("0.005", "0.995", ...): the exact floats of those literals.
    low, high = float(f"5e-{digits + 3}"), float(f"0.{'9' * (digits + 2)}5")
    if high <= p < 1:
        return f">{100 - 10**-digits:g}%"
    if 0 < p < low:
        return f"<{10**-digits:g}%"
    return f"{100 * p:.{digits}f}%"


def headline(table: pd.DataFrame) -> str:
    """``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.

    Systems with the leader's score and interval (a tie) are named together instead:
    ``"... A, B and C tie for first (first in 34%, 33%, 33% of plausible worlds)"``.

    Examples
    --------
    >>> t = pd.DataFrame({"name": ["a", "b"], "tier": [1, 2], "p_first": [0.9712, 0.0288]})
    >>> headline(t)
    '2 systems, 2 tiers; the leader (a) is first in 97% of plausible worlds'
    """
    n = len(table)
    tiers = int(table["tier"].max())
    leader = table.iloc[0]
    start = f"{n} system{'s' if n != 1 else ''}, {tiers} tier{'s' if tiers != 1 else ''}; "
    same = ["score", "ci_low", "ci_high"]  # the same score with the same interval: a tie
    if all(column in table for column in same):  # a tie at the top: no one leader to name
        top = table[(table[same] == leader[same]).all(axis=1)]
        if len(top) > 1:
            names = [str(name) for name in top["name"]]
            shares = ", ".join(percent_text(float(p)) for p in top["p_first"])
            return (
                start + f"{', '.join(names[:-1])} and {names[-1]} tie for first (first in "
                f"{shares} of plausible worlds)"
            )
    return (
        start + f"the leader ({leader['name']}) is first in "
        f"{percent_text(float(leader['p_first']))} of plausible worlds"
    )


def display_table(table: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """A human-readable view of a rank table: points for scores and gaps, ranges as text."""
    pct = f"{100 * level:g}%"
    rows = []
    for row in table.itertuples(index=False):
        gap = (
            "—"
            if pd.isna(row.gap)
            else f"{_points(row.gap, True)} ({_points(row.gap_low, True)} to {_points(row.gap_high, True)})"
        )
        rows.append(
            {
                "#": int(row.position),
                "system": row.name,
                "score %": _points(row.score),
                f"{pct} CI": f"{_points(row.ci_low)}–{_points(row.ci_high)}",
                f"gap to next, points ({pct} CI)": gap,
                "separated": "—" if pd.isna(row.separated) else ("yes" if row.separated else "no"),
                "tier": int(row.tier),
                "tier (anchored)": int(row.tier_anchored),
                "P(first)": percent_text(float(row.p_first), digits=1),
                f"{pct} rank range": _range_text(row.rank_low, row.rank_high),
                "note": row.note or "",
            }
        )
    return pd.DataFrame(rows)


def readings_display(table: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """Unpaired and paired readings side by side, one row per system (for Markdown)."""
    pct = f"{100 * level:g}%"
    # Plain records, not pandas rows: a thousand-model table formats in milliseconds.
    unpaired = table[table["reading"] == "unpaired"].to_dict("records")
    paired = {r["name"]: r for r in table[table["reading"] == "paired"].to_dict("records")}

    def gap_text(r):
        if r is None or pd.isna(r["gap"]):
            return "—"
        mark = " *" if bool(r["separated"]) else ""
        return f"{_points(r['gap_low'], True)} to {_points(r['gap_high'], True)}{mark}"

    rows = []
    for u in unpaired:
        p = paired.get(u["name"])
        rows.append(
            {
                "#": int(u["position"]),
                "model": u["name"],
                "score %": f"{_points(u['score'])} ({_points(u['ci_low'])}–{_points(u['ci_high'])})",
                "gap to next": _points(u["gap"], True) if not pd.isna(u["gap"]) else "—",
                "gap CI, unpaired": gap_text(u),
                "gap CI, paired": gap_text(p),
                "tier unpaired / paired": f"{int(u['tier'])} / {int(p['tier']) if p is not None else '—'}",
                "anchored tier unpaired / paired": f"{int(u['tier_anchored'])} / "
                + (f"{int(p['tier_anchored'])}" if p is not None else "—"),
                "P(first) unpaired / paired": f"{percent_text(u['p_first'], digits=1)} / "
                + (percent_text(p["p_first"], digits=1) if p is not None else "—"),
                f"{pct} rank range unpaired / paired": f"{_range_text(u['rank_low'], u['rank_high'])} / "
                + (_range_text(p["rank_low"], p["rank_high"]) if p is not None else "—"),
            }
        )
    return pd.DataFrame(rows)


def report_markdown(report: RankReport) -> str:
    """The headline, a Markdown table of the report and its method line."""
    shown = display_table(report.table, report.level)
    right = [c for c in shown.columns if c not in ("system", "note", "separated")]
    if not shown["note"].astype(bool).any():
        shown = shown.drop(columns="note")
    return f"{report.headline}\n\n" + to_markdown(shown, align_right=right) + f"\n{report.method}\n"


def readings_markdown(table: pd.DataFrame, reports) -> str:
    """Both readings side by side, with both headlines (the workflow's ranks.md)."""
    level = reports[0].level
    shown = readings_display(table, level)
    right = [c for c in shown.columns if c != "model"]
    lines = [f"- **{r.reading}**: {r.headline}. {r.method}" for r in reports]
    # Readings other than the two side by side (judge-corrected) follow as tables of their own.
    others = [r for r in reports if r.reading not in ("unpaired", "paired")]
    return (
        "\n".join(lines)
        + "\n\n"
        + to_markdown(
            shown,
            caption=f"Scores with {100 * level:g}% Wilson intervals; gap intervals to the next model "
            "(* = separated, the interval excludes zero); tiers start at every separated "
            "adjacent pair, anchored tiers at the first model separated from the tier's top; "
            "P(first) and central rank ranges over the plausible worlds.",
            align_right=right,
        )
        + "".join(f"\n**{r.reading}**\n\n" + report_markdown(r) for r in others)
    )


def report_json(report: RankReport) -> str:
    """The report as a JSON document: settings, headline and one record per system."""
    records = json.loads(report.table.to_json(orient="records", double_precision=15))
    document = {
        "headline": report.headline,
        "reading": report.reading,
        "level": report.level,
        "draws": report.draws,
        "seed": report.seed,
        "method": report.method,
        "systems": records,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
