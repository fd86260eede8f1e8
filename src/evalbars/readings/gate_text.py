"""The release gate's outputs: a pull-request comment, JSON and a CSV table.

:func:`compare_markdown`, :func:`compare_json` and :func:`compare_csv_table` render a
:class:`evalbars.readings.gate.Comparison` (:func:`evalbars.readings.gate.compare_models`), as
``evalbars compare`` prints it with ``--format markdown|json|csv``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalbars.stats.cluster_robust import sign_flip_can_reject, sign_flip_clusters_needed

if TYPE_CHECKING:
    from evalbars.readings.gate import Comparison

__all__ = ["compare_markdown", "compare_json", "compare_csv_table"]


def _ratio(value: float) -> str:
    return "inf" if value == np.inf else f"{value:.2f}"


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _interval(low: float, high: float) -> str:
    if not np.isfinite(low):
        return "none"
    return f"{100 * low:+.1f} to {100 * high:+.1f}"


def _unbounded(s: dict) -> bool:
    """Whether the reading is the sign-flip test with too few categories to reject."""
    return s["se_kind"] == "sign-flip" and not sign_flip_can_reject(s["clusters"], 1 - s["level"])


def _kind(s: dict) -> str:
    kind = s["se_kind"]
    if kind == "clustered":
        return f"category-clustered CR2 SE, t with {s['df']:.1f} df"
    if kind == "sign-flip":
        patterns = s["sign_patterns"]
        counted = (
            f"all {patterns:,} sign patterns"
            if patterns == 2 ** s["clusters"]
            else f"{patterns:,} sign patterns drawn"
        )
        return f"category sign-flip test, {s['clusters']} categories, {counted}"
    return {"exact": "exact: no flips", "none": "SE 0"}.get(kind, f"{kind} SE")


def _interval_cell(s: dict) -> str:
    if _unbounded(s):
        return (
            f"none: {s['clusters']} categories cannot bound it (category sign-flip test; "
            f"{sign_flip_clusters_needed(1 - s['level'])} needed)"
        )
    return f"{_interval(s['low'], s['high'])} ({_kind(s)})"


def _change_kinds(result: Comparison) -> tuple[str, str, str]:
    """The flips table's column and its two values, lower first."""
    if result.summary["flips_apply"]:
        return "flip", "pass->fail", "fail->pass"
    return "change", "lower", "higher"


def _flips_line(s: dict) -> str:
    if s["flips_apply"]:
        return (
            f"Flips: {s['pass_to_fail']:,} pass→fail, {s['fail_to_pass']:,} fail→pass "
            f"(exact McNemar p = {s['p_mcnemar']:.3g})."
        )
    return (
        f"Per-question means differ on {s['lower'] + s['higher']:,} questions: "
        f"{s['lower']:,} lower and {s['higher']:,} higher for the candidate (no flips; "
        f"exact McNemar: not applicable ({s['flips_note']}))."
    )


def _headline(s: dict) -> str:
    """What the verdict means, in words."""
    words = {
        "better": "the candidate is significantly better"
        + (f" by more than {100 * s['better_by']:g} points" if s["better_by"] else ""),
        "non-inferior": f"no regression beyond the {100 * s['margin']:g}-point margin",
        "regression": f"the candidate is worse by more than the {100 * s['margin']:g}-point margin",
        "inconclusive": "the data cannot tell a regression from none",
    }
    if s["se_kind"] in ("exact", "none"):
        words["inconclusive"] = (
            "the SE is 0 (the same difference on every shared question), and that few "
            "questions cannot bound the difference"
        )
    if _unbounded(s):
        words["inconclusive"] = s["note"]
    return words[s["verdict"]]


def _corrected_row(s: dict) -> str:
    """The judge-corrected row of the table, with why it decides nothing where it does not."""
    shown = (
        f"{_points(s['judge_corrected_diff'])} | "
        f"{_interval(s['judge_corrected_low'], s['judge_corrected_high'])} (lambda-hat "
        f"{s['lambda_hat']:.2f}"
    )
    if not np.isfinite(s["judge_corrected_diff"]):
        shown = f"none | none ({s['judge_corrected_note']}"
    elif s.get("judge_corrected_note"):
        shown += f"; {s['judge_corrected_note']}"
    return f"| judge-corrected (PPI++, {s['labels']:,} human labels) | | | {shown}) |"


def _table_rows(s: dict) -> list[str]:
    """The table's rows: the reading, the judge-corrected one, the anytime-valid one."""
    rows = [
        f"| accuracy | {100 * s['accuracy_baseline']:.1f}% | {100 * s['accuracy_candidate']:.1f}% "
        f"| {_points(s['diff'])} | {_interval_cell(s)} |"
    ]
    if "judge_corrected_diff" in s:
        rows.append(_corrected_row(s))
    if "cs_low" in s:
        decided = (
            f"decided after {s['cs_decided_at']:,} questions" if s["cs_decided_at"] else "undecided"
        )
        rows.append(f"| anytime-valid | | | | {_interval(s['cs_low'], s['cs_high'])} ({decided}) |")
    return rows


def _reading_lines(s: dict) -> list[str]:
    """The lines below the table: why this reading, the paired one beside it, the Bayesian
    reading, the judge's, and what would decide an inconclusive verdict."""
    lines = []
    if s["note"] and not _unbounded(s):
        lines.append(f"Note: {s['note']}.")
    if s["se_kind"] in ("sign-flip", "clustered"):
        lines.append(
            "Read with the questions as independent (paired SE; a reading of these categories' "
            f"questions, not of categories like them): "
            f"{_interval(s['paired_low'], s['paired_high'])} points, {s['paired_verdict']}"
            " (add `--categories fixed` to make it the verdict, if the claim is about these "
            "categories)."
        )
    if s["prob_candidate_better"] is not None:
        lines.append(
            f"Bayesian reading (uniform Dirichlet prior on the 2x2 table): P(candidate better) = "
            f"{s['prob_candidate_better']:.3f}. Discordant odds ratio {s['odds_ratio']:.2f} "
            f"({_ratio(s['odds_ratio_low'])} to {_ratio(s['odds_ratio_high'])}), Cohen's h "
            f"{s['cohens_h']:+.2f}."
        )
    if s.get("judge_corrected_note"):
        lines.append(
            f"The scores are an LLM judge's, and the judge-corrected reading has "
            f"{s['judge_corrected_note']}: the verdict is the judge's own scores', biased as "
            f"the judge is. At least {s['labels_to_decide']:,} human labels would let the "
            "corrected reading decide."
        )
    elif "judge_corrected_diff" in s:
        lines.append(
            f"The scores are an LLM judge's: the verdict is the judge-corrected reading's "
            f"(the judge's own scores say {s['judge_verdict']}); judge-human correlation of the "
            f"differences {s['rho']:.2f}, worth {s['effective_labels']:.0f} labels alone."
            + (
                f" About {s['labels_to_decide']:,} human labels would decide it with "
                f"{s.get('power', 0.8):.0%} power."
                if s.get("labels_to_decide")
                else ""
            )
        )
    if "runs_verdict" in s:
        kept = {
            True: "; the verdict would survive a rerun",
            False: "; the verdict might not survive a rerun",
            None: "",
        }[s["survives_rerun"]]
        every = (
            "the same sign in every run"
            if s["holds_in_every_run"]
            else "a sign that changes between runs"
        )
        lines.append(
            f"With runs as a random effect ({s['runs_candidate']} runs of the candidate, "
            f"{s['runs_baseline']} of the baseline): "
            f"{_interval(s['runs_low'], s['runs_high'])} points, {s['runs_verdict']}{kept}; "
            f"the difference has {every} ({s['run_signs']})."
        )
    if s["questions_to_decide"]:
        lines.append(
            f"About {s['questions_to_decide']:,} shared questions would decide it with "
            f"{s.get('power', 0.8):.0%} power if the true difference were the observed one "
            f"({s['questions_to_decide'] - s['questions']:+,} on these)."
        )
    return lines


def _category_lines(result: Comparison) -> list[str]:
    """The per-category table (``--by-category``)."""
    if result.by_category is None:
        return []
    flips = result.summary["flips_apply"]
    down, up = ("pass_to_fail", "fail_to_pass") if flips else ("lower", "higher")
    heads = "pass→fail | fail→pass" if flips else "lower | higher"
    lines = ["", f"| category | questions | difference | interval | {heads} |"]
    lines.append("|---|---:|---:|---|---:|---:|")
    for row in result.by_category.to_dict("records"):
        lines.append(
            f"| {row['category']} | {row['questions']:,} | {_points(row['diff'])} | "
            f"{_interval(row['low'], row['high'])} | {row[down]:,} | {row[up]:,} |"
        )
    return lines


def compare_markdown(result: Comparison, flip_ids: int = 10) -> str:
    """A pull-request comment: headline, one table, flips (the first ``flip_ids`` ids of each)."""
    s = result.summary
    level = f"{100 * s['level']:g}%"
    left = f", {s['left_out']:,} left out (not answered by both)" if s["left_out"] else ""
    lines = [
        f"**{s['verdict']}**: {_headline(s)} "
        f"(`{s['candidate']}` vs baseline `{s['baseline']}`, {s['questions']:,} shared "
        f"questions{left}).",
        "",
        "| | baseline | candidate | difference (points) | " + level + " interval |",
        "|---|---:|---:|---:|---|",
        *_table_rows(s),
        "",
        f"{_flips_line(s)} Non-inferiority at {100 * s['margin']:g} points: "
        f"p = {s['p_noninferiority']:.3g} (one-sided, level {(1 - s['level']) / 2:g}).",
        *_reading_lines(s),
    ]
    column, lower, higher = _change_kinds(result)
    for kind in (lower, higher):
        ids = result.flips.loc[result.flips[column] == kind, "question_id"].astype(str)
        if len(ids):
            more = f" and {len(ids) - flip_ids:,} more" if len(ids) > flip_ids else ""
            lines.append(f"- {kind}: {', '.join(ids.iloc[:flip_ids])}{more}")
    return "\n".join(lines + _category_lines(result)) + "\n"


def compare_json(result: Comparison) -> str:
    """The comparison as JSON: the summary, the changed question ids (flips, or lower and
    higher means) and the category table."""
    document = dict(result.summary)
    column, lower, higher = _change_kinds(result)
    for kind in (lower, higher):
        ids = result.flips.loc[result.flips[column] == kind, "question_id"]
        document[f"{kind.replace('->', '_to_').replace('-', '_')}_ids"] = [
            v.item() if hasattr(v, "item") else v for v in ids
        ]
    if result.by_category is not None:
        document["by_category"] = json.loads(result.by_category.to_json(orient="records"))
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def compare_csv_table(result: Comparison) -> pd.DataFrame:
    """One row ``scope = all`` with the summary, and one per category with ``--by-category``."""
    table = pd.DataFrame([{"scope": "all", **result.summary}])
    if result.by_category is not None:
        rows = result.by_category.rename(columns={"category": "scope"})
        table = pd.concat([table, rows], ignore_index=True)
    return table
