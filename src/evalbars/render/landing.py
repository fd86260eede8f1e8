"""The first screen of the HTML report: the answer, in words and numbers, before anything else.

A reader who opens ``report.html`` sees, in this order: which models and questions were read,
the settings fitted to the data (:func:`evalbars.pipeline.smk.run_choices`), the verdict of each claim
(or, without claims, how many pairs the naive and the blocked readings separate, and the
tiers), the claims figure, the naive-vs-blocked headline and its table, and the per-model
accuracies. Every sentence is computed from the tables the workflow writes; this module only
words and lays them out.

A battles run (config ``data: battles``) has a first screen of its own
(:func:`battles_landing_html`): what was read and how it is clustered, the claims' verdicts
(or, without claims, how many pairs the per-battle and the clustered readings separate, and
the tiers), per-battle against clustered, and the ratings.
"""

from __future__ import annotations

import base64
import html

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.readings.battle_verdicts import battle_claims_display, battle_claims_headline
from evalbars.readings.claims import claims_display, claims_headline
from evalbars.readings.judge_corrected import judge_vs_corrected_display, labels_sentence
from evalbars.readings.leaderboard.best import best_set_sentence, winner_sentence
from evalbars.readings.leaderboard.cost import frontier_sentence
from evalbars.readings.naive_vs_blocked import naive_vs_blocked_display

__all__ = [
    "models_sentence",
    "samples_sentence",
    "run_variance_display",
    "no_claims_text",
    "naive_vs_blocked_headline",
    "separation_sentence",
    "tiers_sentence",
    "models_with_corrected_top",
    "landing_html",
    "battles_separation_sentence",
    "battles_tiers_sentence",
    "battles_landing_html",
]

#: Names listed in one sentence before "and N more".
NAMES_SHOWN = 12


def _names(names, shown: int = NAMES_SHOWN) -> str:
    names = [str(name) for name in names]
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f" and {len(names) - shown:,} more"


def models_sentence(models, questions: int, categories: int, samples: int) -> str:
    """``"6 models read: A, B, ... on 1,497 questions in 14 categories."`` (with the number of
    samples when questions were sampled more than once)."""
    repeated = f" ({samples:,} samples in all)" if samples > questions * len(models) else ""
    return (
        f"{len(models):,} model{'s' if len(models) != 1 else ''} read: {_names(models)}; "
        f"{questions:,} questions in {categories:,} "
        f"categor{'ies' if categories != 1 else 'y'}{repeated}."
    )


def samples_sentence(items: pd.DataFrame, score: str = "mean") -> str:
    """One line on the runs and samples read, where a question was sampled more than once or a
    model run more than once (``""`` otherwise), and the item score the readings read.

    Parameters
    ----------
    items : DataFrame
        ``model, question_id`` and ``run`` of every sample.
    score : str
        The item score (config ``score``).

    Examples
    --------
    >>> items = pd.DataFrame({"model": ["A"] * 6 + ["B"] * 6, "question_id": [1, 1, 1, 2, 2, 2] * 2,
    ...                       "run": ["x", "y", "y", "x", "y", "y"] * 2})
    >>> print(samples_sentence(items, "pass@2"))  # doctest: +NORMALIZE_WHITESPACE
    Runs and samples: 2 runs of each model, 3 samples of each question; the readings read
    pass@2 of each question's samples (pooled over runs).
    """
    runs = items.groupby("model", observed=True)["run"].nunique() if "run" in items else None
    per_question = items.groupby(["model", "question_id"], observed=True).size()
    if (runs is None or runs.max() <= 1) and per_question.max() <= 1:
        return ""

    def spread(values, what):
        low, high = int(values.min()), int(values.max())
        count = f"{low}" if low == high else f"{low} to {high}"
        return f"{count} {what}{'s' if high != 1 else ''}"

    run_part = spread(runs, "run") + " of each model" if runs is not None else "1 run"
    said = f"Runs and samples: {run_part}, {spread(per_question, 'sample')} of each question"
    if score != "mean":
        return said + f"; the readings read {score} of each question's samples (pooled over runs)."
    return said + "; the readings read each question's mean score over its samples."


def run_variance_display(table: pd.DataFrame) -> pd.DataFrame:
    """The run-to-run table of the first screen: per model its runs, run-to-run SD, the
    smallest gap reruns alone let a test detect, and its flaky questions."""
    return pd.DataFrame(
        {
            "model": table["model"],
            "runs": table["runs"],
            "run-to-run SD, points": table["sd_run_points"].map("{:.1f}".format),
            "detectable gap, points": table["detectable_gap_points"].map("{:.1f}".format),
            "flaky questions": [
                f"{int(n)} ({100 * s:.0f}%)"
                for n, s in zip(table["flaky_questions"], table["flaky_share"], strict=True)
            ],
        }
    )


def no_claims_text(notes, example: str | None) -> str:
    """What ``claims.md`` says when no claim is tested: why, and a claim to copy in the
    analysed models' own names."""
    lines = ["No claims tested."]
    lines += [str(note) for note in notes]
    if example:
        lines.append(
            f'To test one, list it under `claims:` in the config, e.g. `claims: ["{example}"]`, '
            f'or pass `--claim "{example}"` to `evalbars report` or `evalbars claims`.'
        )
    return "\n\n".join(lines) + "\n"


def _row(table: pd.DataFrame, quantity: str, procedure: str):
    rows = table[(table["quantity"] == quantity) & (table["procedure"] == procedure)]
    return rows.iloc[0] if len(rows) else None


def naive_vs_blocked_headline(table: pd.DataFrame, alpha: float = ALPHA) -> str:
    """One sentence from ``naive_vs_blocked.csv``: the paired SE against the naive one, and how
    many pairs each reading declares different.

    Returns an empty string when the table has none of those rows.
    """
    parts = []
    naive_se = _row(table, "contrast_se", "unpaired_z")
    paired_se = _row(table, "contrast_se", "paired_z")
    computable = naive_se is not None and paired_se is not None
    if computable and (pd.isna(naive_se["value"]) or pd.isna(paired_se["value"])):
        parts.append("no two models share a question, so no paired SE can be computed")
    elif computable:
        parts.append(
            f"pairing on the shared questions makes a gap's SE {paired_se['value']:.4f} instead "
            f"of {naive_se['value']:.4f} ({paired_se['ratio_to_naive']:.2f}× the naive)"
        )
    counts = [
        (label, _row(table, "significant_pairs", procedure))
        for label, procedure in (
            ("naive (unpaired z, unadjusted)", "unpaired_uncorrected"),
            ("paired z with Holm", "paired_holm"),
            ("the nested mixed model with Holm", "lmm_category_question_holm"),
        )
    ]
    counts = [(label, row) for label, row in counts if row is not None]
    if counts:
        total = int(counts[0][1]["n_pairs"])
        said = ", ".join(f"{row['value']:.0f} {label}" for label, row in counts)
        parts.append(f"of {total:,} pairs, declared different at α = {alpha:g}: {said}")
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def separation_sentence(pairwise: pd.DataFrame) -> str:
    """Without claims: how many pairs the naive and the blocked readings separate
    (``pairwise.csv``'s ``significant_unpaired`` and ``significant_holm``)."""
    n = len(pairwise)
    if n == 0:
        return "One model was read: there is no pair to compare, only its accuracy."
    if "n" in pairwise and not (pairwise["n"] > 0).any():
        return (
            f"No two models share a question: the {n:,} {'pair has' if n == 1 else 'pairs have'} "
            "no paired reading, and each model is read on its own questions."
        )
    naive = int(pairwise["significant_unpaired"].sum())
    blocked = int(pairwise["significant_holm"].sum())
    return (
        f"Of {n:,} {'pair' if n == 1 else 'pairs'}, {naive:,} "
        f"{'is' if naive == 1 else 'are'} separated by the naive reading (unpaired z, "
        f"unadjusted) and {blocked:,} by the blocked reading (paired z with Holm over all pairs)."
    )


def tiers_sentence(ranks: pd.DataFrame, reading: str = "paired") -> str:
    """The anchored tiers of one reading of ``ranks.csv``, best first: ``"Tier 1: A, B. Tier
    2: C."`` (each system unseparated from its tier's top)."""
    rows = ranks[ranks["reading"] == reading].sort_values("position")
    if rows.empty:
        return ""
    tiers = rows.groupby("tier_anchored", sort=True)["name"].apply(list)
    shown = [f"tier {tier}: {_names(names)}" for tier, names in tiers.head(NAMES_SHOWN).items()]
    more = f" ({len(tiers) - NAMES_SHOWN:,} more tiers)" if len(tiers) > NAMES_SHOWN else ""
    return f"{reading.capitalize()} tiers ({len(tiers):,}): " + "; ".join(shown) + more + "."


def models_with_corrected_top(
    models_table: pd.DataFrame, winner: pd.DataFrame | None, rows: int = 40
) -> pd.DataFrame:
    """The first screen's per-model accuracy: ``model, n, accuracy, interval`` in points, and,
    on the top model's row, its score corrected for being the top (the hybrid reading of
    ``winner.csv``, :func:`evalbars.readings.leaderboard.best.winner_readings`) with its interval.

    Examples
    --------
    >>> models = pd.DataFrame({"model": ["a", "b"], "n": [400, 400], "accuracy": [0.8, 0.7],
    ...                        "ci_low": [0.76, 0.65], "ci_high": [0.84, 0.74]})
    >>> winner = pd.DataFrame({"model": "a", "method": ["naive", "hybrid"],
    ...                        "estimate": [0.8, 0.79], "ci_low": [0.76, 0.74],
    ...                        "ci_high": [0.84, 0.84]})
    >>> models_with_corrected_top(models, winner).values.tolist()
    [['a', 400, '80.0%', '76.0–84.0%', '79.0% (74.0–84.0%)'], ['b', 400, '70.0%', '65.0–74.0%', '']]
    """
    shown = models_table.assign(
        accuracy=(100 * models_table["accuracy"]).map("{:.1f}%".format),
        interval=[
            f"{100 * low:.1f}–{100 * high:.1f}%"
            for low, high in zip(models_table["ci_low"], models_table["ci_high"], strict=True)
        ],
    )[["model", "n", "accuracy", "interval"]].head(rows)
    hybrid = None if winner is None else winner[winner["method"] == "hybrid"]
    if hybrid is None or hybrid.empty or not pd.notna(hybrid["estimate"].iloc[0]):
        return shown
    top = hybrid.iloc[0]
    corrected = (
        f"{100 * top['estimate']:.1f}% ({100 * top['ci_low']:.1f}–{100 * top['ci_high']:.1f}%)"
    )
    column = "corrected for being the top (hybrid)"
    shown[column] = np.where(shown["model"].astype(str) == str(top["model"]), corrected, "")
    return shown


def _table_html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, border=0, classes="evalbars", na_rep="", escape=True)


def _paragraph(text: str) -> str:
    return f"<p>{html.escape(text)}</p>" if text else ""


# Snakemake's report centres the front page in a fixed-height flex box, which cuts off the top of
# a page taller than the window, and narrows it to a column: start it at the top, wider.
_STYLE = """
<style>
.h-screen.overflow-auto.items-center { align-items: flex-start !important; }
.h-screen.overflow-auto.justify-center { justify-content: flex-start !important; }
.prose.max-w-lg { max-width: 64rem !important; }
.evalbars-landing { font-size: 15px; line-height: 1.45; max-width: 1100px; }
.evalbars-landing h2 { margin-top: 0.4em; }
.evalbars-landing .verdict { font-size: 17px; font-weight: 600; }
.evalbars-landing .note { color: #555; }
.evalbars-landing table.evalbars { border-collapse: collapse; margin: 0.5em 0 1em 0; }
.evalbars-landing table.evalbars th, .evalbars-landing table.evalbars td {
  border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
.evalbars-landing img { max-width: 100%; }
</style>
"""


def landing_html(
    *,
    models_text: str,
    notes,
    claims_table: pd.DataFrame,
    example_claim: str | None,
    claims_png: bytes | None,
    naive_vs_blocked: pd.DataFrame,
    pairwise: pd.DataFrame,
    ranks: pd.DataFrame,
    models_table: pd.DataFrame,
    alpha: float,
    judge_corrected: pd.DataFrame | None = None,
    samples_text: str = "",
    passk_png: bytes | None = None,
    run_variance: pd.DataFrame | None = None,
    winner: pd.DataFrame | None = None,
    leaderboard: pd.DataFrame | None = None,
    frontier: pd.DataFrame | None = None,
    level: float | None = None,
) -> str:
    """The report's first screen as one self-contained HTML fragment (the figure inline).

    Parameters
    ----------
    models_text : str
        :func:`models_sentence`.
    notes : list of str
        Settings fitted to the data (:attr:`evalbars.pipeline.smk.RunChoices.notes`).
    claims_table : DataFrame
        ``claims.csv`` (:func:`evalbars.readings.claims.evaluate_claims`); may be empty.
    example_claim : str, optional
        A claim in the analysed models' names, offered when none was tested.
    claims_png : bytes, optional
        The claims figure, drawn when there are claims.
    naive_vs_blocked, pairwise, ranks, models_table : DataFrame
        ``naive_vs_blocked.csv``, ``pairwise.csv``, ``ranks.csv`` and ``models.csv``.
    alpha : float
        The significance level of the verdicts.
    judge_corrected : DataFrame, optional
        ``judge_corrected.csv`` (:func:`evalbars.readings.judge_corrected.judge_vs_corrected`)
        where the scores are a judge's with human labels: the first screen then says so, and
        shows judge-only against corrected beside naive against blocked.
    samples_text : str, optional
        :func:`samples_sentence`: the runs and samples read, under the models.
    passk_png : bytes, optional
        The pass@k differences figure, where the questions have repeated samples.
    run_variance : DataFrame, optional
        ``run_variance.csv``, where a model was read in two or more runs.
    winner, leaderboard : DataFrame, optional
        ``winner.csv`` and ``leaderboard.csv``: the top score is shown beside its correction for
        being the top, and the confidence sets for the best and the top k are said in words.
    frontier : DataFrame, optional
        ``frontier.csv``, where the run has costs: the cost-accuracy frontier in words.
    level : float, optional
        The level of the intervals (default ``1 - alpha``).
    """
    labelled = judge_corrected is not None and len(judge_corrected) > 0
    parts = [_STYLE, '<div class="evalbars-landing">', "<h2>What the data support</h2>"]
    parts.append(_paragraph(models_text))
    if samples_text:
        parts.append(_paragraph(samples_text))
    if labelled:
        parts.append(f'<p class="verdict">{html.escape(labels_sentence(judge_corrected))}</p>')
    parts += [f'<p class="note">{html.escape(str(note))}</p>' for note in notes]
    if len(claims_table):
        parts.append(f'<p class="verdict">{html.escape(claims_headline(claims_table))}</p>')
        parts.append(_table_html(claims_display(claims_table)))
        if claims_png:
            encoded = base64.b64encode(claims_png).decode("ascii")
            parts.append(
                f'<img alt="each claim\'s interval against its threshold" '
                f'src="data:image/png;base64,{encoded}">'
            )
    else:
        parts.append(f'<p class="verdict">{html.escape(separation_sentence(pairwise))}</p>')
        reading = "judge-corrected" if labelled else "paired"
        parts.append(_paragraph(tiers_sentence(ranks, reading)))
        if example_claim:
            parts.append(
                _paragraph(
                    "No claims were tested. To test one, list it under claims: in the config, "
                    f'e.g. claims: ["{example_claim}"], or pass --claim "{example_claim}" to '
                    "evalbars report."
                )
            )
    if labelled:
        parts.append("<h2>Judge versus corrected</h2>")
        parts.append(
            _paragraph(
                "Accuracy in points with its interval as the judge scored it (judge-only), on "
                "the human labels alone (human-only), and corrected by PPI++ (the judge's scores "
                "sharpened by the labels, without the judge's bias)."
            )
        )
        parts.append(_table_html(judge_vs_corrected_display(judge_corrected, alpha)))
    parts += _repeats_parts(passk_png, run_variance)
    parts.append("<h2>Naive versus blocked</h2>")
    parts.append(_paragraph(naive_vs_blocked_headline(naive_vs_blocked, alpha)))
    parts.append(_table_html(naive_vs_blocked_display(naive_vs_blocked, alpha)))
    parts.append("<h2>Per-model accuracy</h2>")
    if winner is not None:
        parts.append(_paragraph(winner_sentence(winner, level or 1 - alpha)))
    if leaderboard is not None and "in_best_set" in leaderboard.columns:
        parts.append(_paragraph(best_set_sentence(leaderboard, alpha)))
    if frontier is not None:
        parts.append(_paragraph(frontier_sentence(frontier, alpha)))
    parts.append(_table_html(models_with_corrected_top(models_table, winner)))
    parts.append(
        '<p class="note">Every table and figure, with its caption, is in the categories of '
        "this report (menu on the left); the CSV files hold full precision.</p>"
    )
    parts.append("</div>")
    return "\n".join(part for part in parts if part) + "\n"


def _repeats_parts(passk_png: bytes | None, run_variance: pd.DataFrame | None) -> list[str]:
    """The first screen's repeated-samples section: the pass@k figure and the run-to-run table,
    where the data have them (else nothing)."""
    runs = run_variance is not None and len(run_variance) > 0
    if not passk_png and not runs:
        return []
    parts = ["<h2>Repeated samples and runs</h2>"]
    if passk_png:
        encoded = base64.b64encode(passk_png).decode("ascii")
        parts.append(
            f'<img alt="pass@k differences over k, with the band over every k" '
            f'src="data:image/png;base64,{encoded}">'
        )
    if runs:
        parts.append(
            _paragraph(
                "Run-to-run noise: the SD of a model's accuracy between runs, the smallest gap "
                "between two runs that reruns alone let a test detect, and the questions whose "
                "samples disagree (run_variance.csv)."
            )
        )
        parts.append(_table_html(run_variance_display(run_variance)))
    return parts


# --- The first screen of a battles run ----------------------------------------------------------


def battles_separation_sentence(naive_vs_blocked: pd.DataFrame) -> str:
    """How many pairs the per-battle and the clustered readings separate (Holm over all pairs),
    and how much wider the clustered SE of a difference is (``battles_naive_vs_blocked.csv``).

    Examples
    --------
    >>> table = pd.DataFrame({"separated_per_battle": [True, True], "separated_clustered":
    ...     [True, False], "se_per_battle": [10.0, 20.0], "se_clustered": [12.0, 30.0]})
    >>> battles_separation_sentence(table)
    'Of 2 pairs, 2 are separated by the per-battle reading (every battle independent) and 1 by the clustered reading, both with Holm over all pairs; the clustered SE of a difference is 1.20-1.50 times the per-battle one.'
    """
    n = len(naive_vs_blocked)
    if n == 0:
        return "One model was read: there is no pair to compare."
    naive = int(naive_vs_blocked["separated_per_battle"].sum())
    blocked = int(naive_vs_blocked["separated_clustered"].sum())
    ratio = (naive_vs_blocked["se_clustered"] / naive_vs_blocked["se_per_battle"]).dropna()
    spread = (
        f"; the clustered SE of a difference is {ratio.min():.2f}-{ratio.max():.2f} times the "
        "per-battle one"
        if len(ratio)
        else ""
    )
    return (
        f"Of {n:,} {'pair' if n == 1 else 'pairs'}, {naive:,} {'is' if naive == 1 else 'are'} "
        "separated by the per-battle reading (every battle independent) and "
        f"{blocked:,} by the clustered reading, both with Holm over all pairs{spread}."
    )


def battles_tiers_sentence(board: pd.DataFrame) -> str:
    """The tiers of ``battles_leaderboard.csv``, best first (``"Tiers (2): tier 1: A, B; tier
    2: C."``)."""
    if board.empty:
        return ""
    tiers = board.sort_values("position").groupby("tier", sort=True)["model"].apply(list)
    shown = [f"tier {tier}: {_names(names)}" for tier, names in tiers.head(NAMES_SHOWN).items()]
    more = f" ({len(tiers) - NAMES_SHOWN:,} more tiers)" if len(tiers) > NAMES_SHOWN else ""
    return (
        f"Tiers of the clustered reading ({len(tiers):,}, max-t over the adjacent gaps): "
        + "; ".join(shown)
        + more
        + "."
    )


def _battles_board_display(board: pd.DataFrame) -> pd.DataFrame:
    """The ratings for people: rating, clustered interval, letters, tier, rank interval."""
    return pd.DataFrame(
        {
            "model": board["model"],
            "rating": board["rating"].map("{:.0f}".format),
            "interval (clustered)": [
                f"{low:.0f}–{high:.0f}"
                for low, high in zip(board["ci_low"], board["ci_high"], strict=True)
            ],
            "interval (per battle)": [
                f"{low:.0f}–{high:.0f}"
                for low, high in zip(
                    board["ci_low_per_battle"], board["ci_high_per_battle"], strict=True
                )
            ],
            "letters": board["letters"],
            "tier": board["tier"],
            "ranks": [
                f"{low}" if low == high else f"{low}–{high}"
                for low, high in zip(board["rank_low"], board["rank_high"], strict=True)
            ],
        }
    ).head(40)


def _battles_side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """Per-battle against clustered for people: each pair's difference and both intervals."""
    return pd.DataFrame(
        {
            "pair": [f"{a} − {b}" for a, b in zip(table["model_a"], table["model_b"], strict=True)],
            "difference (Elo)": table["diff"].map("{:+.1f}".format),
            "SE per battle": table["se_per_battle"].map("{:.1f}".format),
            "SE clustered": table["se_clustered"].map("{:.1f}".format),
            "design effect": table["design_effect"].map("{:.2f}".format),
            "separated per battle": table["separated_per_battle"].map({True: "yes", False: "no"}),
            "separated clustered": table["separated_clustered"].map({True: "yes", False: "no"}),
        }
    ).head(40)


def battles_landing_html(
    *,
    read_lines,
    clustering: str,
    notes,
    claims_table: pd.DataFrame,
    naive_vs_blocked: pd.DataFrame,
    board: pd.DataFrame,
    alpha: float,
) -> str:
    """The first screen of a battles run as one HTML fragment.

    Parameters
    ----------
    read_lines : list of str
        What was read (:meth:`evalbars.data.battles.BattlesPreview.lines`).
    clustering : str
        How the battles are clustered (:func:`evalbars.readings.battles.with_clusters`).
    notes : list of str
        Settings fitted to the data.
    claims_table : DataFrame
        ``battles_claims.csv`` (:func:`evalbars.readings.battle_verdicts.battle_verdicts`);
        may be empty.
    naive_vs_blocked, board : DataFrame
        ``battles_naive_vs_blocked.csv`` and ``battles_leaderboard.csv``.
    alpha : float
        The significance level of the verdicts.
    """
    parts = [_STYLE, '<div class="evalbars-landing">', "<h2>What the battles support</h2>"]
    parts += [_paragraph(str(line)) for line in read_lines]
    parts.append(
        _paragraph(
            f"Bradley-Terry ratings on the Elo scale; {clustering}. Verdicts at α = {alpha:g}."
        )
    )
    parts += [f'<p class="note">{html.escape(str(note))}</p>' for note in notes]
    if len(claims_table):
        parts.append(f'<p class="verdict">{html.escape(battle_claims_headline(claims_table))}</p>')
        parts.append(_table_html(battle_claims_display(claims_table)))
    else:
        parts.append(
            f'<p class="verdict">{html.escape(battles_separation_sentence(naive_vs_blocked))}</p>'
        )
        parts.append(_paragraph(battles_tiers_sentence(board)))
        if len(board) > 1:
            example = f"{board['model'].iloc[0]} > {board['model'].iloc[1]}"
            parts.append(
                _paragraph(
                    "No claims were tested. To test one, list it under claims: in the config, "
                    f'e.g. claims: ["{example}"], or pass --claim "{example}" to evalbars '
                    "report (margins in Elo points: A > B + 20)."
                )
            )
    parts.append("<h2>Per-battle versus clustered</h2>")
    if len(claims_table):
        parts.append(_paragraph(battles_separation_sentence(naive_vs_blocked)))
    parts.append(_table_html(_battles_side_by_side(naive_vs_blocked)))
    parts.append("<h2>Ratings</h2>")
    if len(claims_table):
        parts.append(_paragraph(battles_tiers_sentence(board)))
    parts.append(_table_html(_battles_board_display(board)))
    parts.append(
        '<p class="note">Every table and figure, with its caption, is in the categories of '
        "this report (menu on the left); the CSV files hold full precision.</p>"
    )
    parts.append("</div>")
    return "\n".join(part for part in parts if part) + "\n"
