"""Rank uncertainty: score intervals, separated neighbours, tiers and plausible ranks.

Two readings of one ordering:

- **unpaired** (:func:`rank_table`, after the *Benchmark Rank Uncertainty
  Calculator: Score Intervals and Rank Ranges*, "the rank-uncertainty
  calculator"): every system is an independent estimate. Works on a leaderboard
  copied from a web page, given as ``correct`` + ``total``, ``score`` + ``n`` or
  ``score`` + ``se`` per row (:func:`read_leaderboard`, :func:`parse_leaderboard`).
- **paired** (:func:`paired_rank_table`): when the per-question outcomes are
  available (:class:`evalbars.data.scores.WideScores`), every system answered the same
  questions, so their errors are positively correlated; a bootstrap over the
  shared questions (stratified by category) and paired z intervals for the
  adjacent gaps respect that, and are sharper.

:func:`ranks_readings` puts both readings of the item data in one tidy table
(column ``reading``), which is what the workflow writes to
``results/tables/ranks.csv``.

Column contract of a rank table (one row per system, in nominal order: score
descending, ties in input order):

``position``
    1-based place in the nominal order.
``name``, ``form``, ``n``
    System name; ``counts`` (correct + total), ``proportion`` (score + n) or
    ``se`` (score + standard error); the item count (empty for ``se`` rows).
``score``, ``ci_low``, ``ci_high``
    Score as a proportion and its interval: Wilson for ``counts``/``proportion``
    rows, ``score ± z·se`` for ``se`` rows.
``gap``, ``gap_low``, ``gap_high``
    Score minus the next system's score, with its interval (empty on the last row).
``separated``
    The gap interval excludes zero (empty on the last row).
``tier``
    1 + the number of separated adjacent pairs above this system (the
    rank-uncertainty calculator's definition; tiers chain through unseparated
    neighbours).
``tier_anchored``
    Tiers that do not chain: a tier starts at the first system separated from the
    current tier's top (the leader for tier 1), by the same difference interval.
``p_first``
    Share of plausible worlds in which this system ranks first (ties share the
    better rank, so shares can add up to more than 1).
``rank_low``, ``rank_high``
    Central rank range: the (1 - level)/2 and (1 + level)/2 quantiles of the
    system's rank over the plausible worlds (inverse-CDF quantiles of a discrete
    distribution, so the range holds at least ``level`` of the worlds).
``note``
    Anything the reader must know about the row (fractional count, mixed pair).

Modules: :mod:`.board_file` (reading a leaderboard file), :mod:`.unpaired` (the
calculator), :mod:`.paired` (the bootstrap over shared questions), :mod:`.readings` (both
readings in one table), :mod:`.render` (percentages, headline, Markdown and JSON),
:mod:`.defaults` (the draw chunk; the default level, draws and seed are
:mod:`evalbars.defaults`'s). Figures are in :mod:`evalbars.render.figures.ranks`.
"""

from __future__ import annotations

from evalbars.readings.ranks.board_file import (
    FORMS,
    leaderboard_from_wide,
    parse_leaderboard,
    read_leaderboard,
)
from evalbars.readings.ranks.defaults import DRAW_CHUNK
from evalbars.readings.ranks.paired import bootstrap_accuracies, paired_rank_table
from evalbars.readings.ranks.readings import ranks_readings, read_rank_table
from evalbars.readings.ranks.render import (
    display_table,
    headline,
    percent_text,
    readings_display,
    readings_markdown,
    report_json,
    report_markdown,
)
from evalbars.readings.ranks.report import RankReport
from evalbars.readings.ranks.unpaired import (
    RANK_COLUMNS,
    adjacent_gaps,
    anchored_tiers,
    plausible_scores,
    rank_ranges,
    rank_table,
    score_intervals,
    tiers_from_separated,
)

__all__ = [
    "DRAW_CHUNK",
    "FORMS",
    "RANK_COLUMNS",
    "RankReport",
    "adjacent_gaps",
    "bootstrap_accuracies",
    "display_table",
    "headline",
    "leaderboard_from_wide",
    "paired_rank_table",
    "parse_leaderboard",
    "percent_text",
    "plausible_scores",
    "anchored_tiers",
    "rank_ranges",
    "rank_table",
    "ranks_readings",
    "read_leaderboard",
    "read_rank_table",
    "readings_display",
    "readings_markdown",
    "report_json",
    "report_markdown",
    "score_intervals",
    "tiers_from_separated",
]
