"""The seeded category-stratified subsample of questions.

Only questions answered by every selected model are eligible. Questions are
allocated to categories in proportion to their eligible counts with
largest-remainder (Hamilton) rounding and at least one question per category,
then drawn without replacement from a seeded :class:`numpy.random.Generator`.
The draw depends only on the seed and the set of eligible questions, never on
row order, so the same seed gives the same questions on any machine.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.items import UNCATEGORISED
from evalbars.data.question_coverage import QuestionLayout, question_layout, shared_questions
from evalbars.data.scores import question_order
from evalbars.errors import ConfigError

__all__ = [
    "design_notes",
    "no_shared_question",
    "allocate_proportional",
    "QUESTION_SETS",
    "eligible_questions",
    "check_design",
    "draw_questions",
    "Subsample",
    "stratified_subsample",
    "keep_questions",
]

log = logging.getLogger(__name__)


def allocate_proportional(sizes: pd.Series, n: int) -> pd.DataFrame:
    """Allocate ``n`` draws to strata in proportion to ``sizes``.

    Parameters
    ----------
    sizes : Series
        Stratum sizes indexed by stratum name.
    n : int
        Total draws, ``len(sizes) <= n <= sizes.sum()``.

    Returns
    -------
    DataFrame
        Indexed by stratum (sorted by name), columns ``available``, ``quota``
        (the exact share :math:`n N_c / N`) and ``allocated``.

    Notes
    -----
    Hamilton's largest-remainder method: every stratum gets :math:`\\lfloor q_c \\rfloor`
    and the :math:`n - \\sum_c \\lfloor q_c \\rfloor` remaining draws go to the largest
    remainders (ties by stratum name). A stratum left at zero is then raised to one,
    the draw taken from the stratum with the largest excess over its quota among
    those with more than one. Allocations never exceed stratum sizes because
    :math:`q_c \\le N_c`.

    References
    ----------
    .. [1] Balinski, M. L. and Young, H. P. (2001). Fair Representation, 2nd ed.
       Brookings Institution Press (Hamilton's method).

    Examples
    --------
    >>> sizes = pd.Series({"a": 5, "b": 3, "c": 2})
    >>> allocate_proportional(sizes, 5)["allocated"].tolist()
    [3, 1, 1]
    """
    sizes = sizes.sort_index().astype(int)
    total = int(sizes.sum())
    if not len(sizes) <= n <= total:
        raise ConfigError(
            f"subsample.n = {n} does not fit: "
            f"cannot draw {n} questions from {total} eligible questions in {len(sizes)} categories "
            f"(need {len(sizes)} <= n <= {total}); set `subsample: {{n: all}}` to keep every question"
        )
    quota = n * sizes.to_numpy(dtype=float) / total
    allocated = np.floor(quota).astype(int)
    remainder = quota - allocated
    # Stable sort on -remainder keeps name order among equal remainders.
    order = np.argsort(-remainder, kind="stable")
    allocated[order[: n - allocated.sum()]] += 1
    for empty in np.flatnonzero(allocated == 0):
        excess = np.where(allocated > 1, allocated - quota, -np.inf)
        allocated[int(np.argmax(excess))] -= 1
        allocated[empty] = 1
    return pd.DataFrame(
        {"available": sizes.to_numpy(), "quota": quota, "allocated": allocated},
        index=sizes.index.rename("category"),
    )


QUESTION_SETS = ("shared", "all")


def eligible_questions(
    items: pd.DataFrame, question_set: str = "shared", layout: QuestionLayout | None = None
) -> tuple[pd.DataFrame, int]:
    """The questions the analysis uses: every model's (``shared``) or any model's (``all``).

    ``layout`` is :func:`evalbars.data.question_coverage.question_layout` of ``items``, when the
    caller has it already.

    Returns
    -------
    eligible : DataFrame
        ``question_id``, ``category`` in canonical order (category, question id).
    n_dropped : int
        Questions left out (some model did not answer them; 0 for ``all``).
    """
    if question_set not in QUESTION_SETS:
        raise ValueError(f"question_set must be one of {QUESTION_SETS}, got {question_set!r}")
    layout = question_layout(items) if layout is None else layout
    if question_set == "shared":
        return shared_questions(items, layout)
    questions = pd.DataFrame({"question_id": layout.present.index, "category": layout.categories})
    return question_order(questions).reset_index(drop=True), 0


def check_design(
    items: pd.DataFrame, n, question_set: str = "shared", layout: QuestionLayout | None = None
) -> None:
    """Refuse, before anything is written, an item table the analysis cannot read at all.

    Every shape of data gets the readings that apply to it (:func:`design_notes` says which
    are left out): one model gets its accuracy and intervals; two or more the paired and
    blocked comparisons; data with no categories, or a single one, drop the category level
    (the question-only mixed model, no clustered SE, no per-category tables). What cannot
    work is refused with one line naming the models and categories that cause it: several
    models with no question they all answered (with ``question_set: shared``), and a
    subsample of ``n`` questions that does not fit, or that gives every category a single
    question (the nested mixed model could not tell the question variance from the category
    variance; with ``n: all`` those are the data's own design, and the mixed model says so
    instead). Raises :class:`~evalbars.errors.ConfigError`. ``layout`` is
    :func:`evalbars.data.question_coverage.question_layout` of ``items``, when the caller has it.
    """
    layout = question_layout(items) if layout is None else layout
    models = list(layout.present.columns)  # sorted, as the messages name them
    shared, _ = eligible_questions(items, question_set, layout)
    if shared.empty:
        sizes = items.groupby("model")["question_id"].nunique().sort_values(kind="stable")
        raise ConfigError(
            f"no question was answered by every model (the fewest: {sizes.index[0]} with "
            f"{int(sizes.iloc[0]):,}); the paired analyses need questions all models answered"
        )
    if n == "all" or len(models) < 2:
        return
    sizes = shared.groupby("category").size()
    allocation = allocate_proportional(sizes, int(n))
    if len(sizes) > 1 and allocation["allocated"].max() < 2:
        raise ConfigError(
            f"subsample.n = {n} draws one question from each of the {len(sizes)} categories, so "
            "the nested mixed model cannot tell question from category variance; set "
            f"`subsample: {{n: ...}}` above {len(sizes)}"
        )


def design_notes(
    items: pd.DataFrame, question_set: str = "shared", layout: QuestionLayout | None = None
) -> list[str]:
    """One sentence for each reading the shape of the data leaves out, for the console and
    the report's first screen: a single model (nothing to compare), several models with no
    question they all answered (:func:`no_shared_question`), and no categories or a single one
    (the category level dropped). Empty for the paper's design. ``layout`` is
    :func:`evalbars.data.question_coverage.question_layout` of ``items``, when the caller has it.

    Examples
    --------
    >>> items = pd.DataFrame({"model": ["a", "a", "b", "b"], "question_id": [1, 2, 1, 2],
    ...                       "category": ["x", "y", "x", "y"]})
    >>> design_notes(items)
    []
    >>> design_notes(items.drop(index=[0, 3]), "all")[0][:55]
    'no two models share a question (2 models, 2 questions):'
    """
    layout = question_layout(items) if layout is None else layout
    models = list(layout.present.columns)
    if len(models) < 2:
        return [
            f"one model ({models[0]}): its accuracy and intervals are reported; there is "
            "nothing to compare it with"
        ]
    notes = no_shared_question(items, layout)
    # With no question every model answered (question_set: all) the analysis reads them all.
    shared, _ = eligible_questions(items, "all" if notes else question_set, layout)
    categories = sorted(shared["category"].unique())
    if len(categories) > 1:
        return notes
    which = "no categories" if categories == [UNCATEGORISED] else f"one category ({categories[0]})"
    return [
        *notes,
        f"the questions have {which}: the category level is dropped (the mixed models are "
        "question-only, clustered SEs do not apply, and there are no per-category tables)",
    ]


def no_shared_question(items: pd.DataFrame, layout: QuestionLayout | None = None) -> list[str]:
    """The sentence that says several models share no question, and what that leaves out;
    empty when some question was answered by every model (or there is one model).

    Each pair of models is compared on the questions both answered; the readings of all
    models at once on the same questions (the omnibus tests, the paired rank reading) have
    none. The sentence gives the range of the pairs' shared questions and names the pairs
    that share none (or says that no two models share a question) (:math:`n_{ab} = \\sum_q P_{qa} P_{qb}` from the question-by-model
    presence matrix :math:`P`; ``layout`` is
    :func:`evalbars.data.question_coverage.question_layout` of ``items``, when the caller has it).

    Examples
    --------
    >>> items = pd.DataFrame({"model": ["a", "a", "b", "b", "c"], "question_id": [1, 2, 2, 3, 3]})
    >>> print(no_shared_question(items)[0])  # doctest: +NORMALIZE_WHITESPACE
    no question is answered by every model (3 models, 3 questions): each pair is compared on
    the questions both answered (0 to 1 per pair), and the readings of every model at once
    (the omnibus tests, the paired ranks) are left out; 1 of the 3 pairs shares no question
    ('a' and 'c'), so it has only unpaired readings
    """
    present = (question_layout(items) if layout is None else layout).present
    if present.shape[1] < 2 or present.all(axis=1).any():
        return []
    # Questions each pair answered: one product of the presence matrix (exact in float32 up to
    # 2**24 questions; BLAS, where an integer product loops in numpy).
    matrix = present.to_numpy(dtype=np.float32)
    both = (matrix.T @ matrix).round().astype(np.int64)
    first, second = np.triu_indices(len(present.columns), k=1)
    counts = both[first, second]
    models = present.columns
    if not counts.any():
        return [
            f"no two models share a question ({len(models)} models, {len(present):,} questions): "
            "each model is read on its own questions, and the readings that pair models (the "
            "paired comparisons, the omnibus tests, the paired ranks) are left out"
        ]
    low, high = int(counts.min()), int(counts.max())
    spread = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    note = (
        f"no question is answered by every model ({len(models)} models, {len(present):,} "
        f"questions): each pair is compared on the questions both answered ({spread} per "
        "pair), and the readings of every model at once (the omnibus tests, the paired ranks) "
        "are left out"
    )
    apart = np.flatnonzero(counts == 0)
    if len(apart):
        pairs = len(counts)
        named = ", ".join(f"{models[first[i]]!r} and {models[second[i]]!r}" for i in apart[:3])
        named += f" and {len(apart) - 3} more" if len(apart) > 3 else ""
        share, it = ("shares", "it has") if len(apart) == 1 else ("share", "they have")
        note += (
            f"; {len(apart)} of the {pairs} pairs {share} no question ({named}), so {it} only "
            "unpaired readings"
        )
    return [note]


@dataclass(frozen=True)
class Subsample:
    """A drawn subsample.

    Attributes
    ----------
    items : DataFrame
        The item table's rows of the drawn questions, in the item table's order.
    questions : DataFrame
        ``question_id``, ``category``, sorted by question id.
    allocation : DataFrame
        Per category: ``category, available, quota, allocated``.
    n_dropped : int
        Questions not answered by every model, hence not eligible.
    """

    items: pd.DataFrame
    questions: pd.DataFrame
    allocation: pd.DataFrame
    n_dropped: int


def draw_questions(eligible: pd.DataFrame, n, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Draw the stratified sample from a set of eligible questions.

    Parameters
    ----------
    eligible : DataFrame
        ``question_id``, ``category``, one row per question (any order).
    n : int or "all"
        Questions to draw.
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    questions : DataFrame
        ``question_id``, ``category`` of the drawn questions, sorted by question id.
    allocation : DataFrame
        ``category, available, quota, allocated``.

    Notes
    -----
    One uniform key per eligible question is drawn in canonical order
    (category, question id); each category keeps its ``allocated`` smallest
    keys. This is sampling without replacement, uniform within each category,
    and depends only on the seed and the eligible set.
    """
    eligible = question_order(eligible[["question_id", "category"]]).reset_index(drop=True)
    sizes = eligible.groupby("category").size()
    n_draw = len(eligible) if n == "all" else int(n)
    allocation = allocate_proportional(sizes, n_draw)
    keys = np.random.default_rng(seed).random(len(eligible))
    codes = pd.Categorical(eligible["category"], categories=allocation.index).codes
    order = np.lexsort((keys, codes))
    starts = np.searchsorted(codes[order], np.arange(len(allocation)))
    position = np.arange(len(order)) - starts[codes[order]]
    chosen = order[position < allocation["allocated"].to_numpy()[codes[order]]]
    questions = eligible.iloc[chosen].sort_values("question_id").reset_index(drop=True)
    return questions, allocation.reset_index()


def stratified_subsample(
    items: pd.DataFrame, n, seed: int, question_set: str = "shared"
) -> Subsample:
    """Draw the seeded category-stratified subsample of an item table.

    Parameters
    ----------
    items : DataFrame
        Canonical item table (see :mod:`evalbars.data.items`).
    n : int or "all"
        Questions to draw; ``"all"`` keeps every eligible question.
    seed : int
        Seed of :func:`numpy.random.default_rng`.
    question_set : {"shared", "all"}
        Draw from the questions every model answered, or from all of them (a
        question a model lacks then stays missing for that model only).

    See Also
    --------
    eligible_questions, draw_questions : the two steps.
    """
    eligible, n_dropped = eligible_questions(items, question_set)
    if n_dropped:
        log.warning(
            "subsample: %d question(s) not answered by every model are not eligible", n_dropped
        )
    questions, allocation = draw_questions(eligible, n, seed)
    # Every question drawn (n: all of every question): the table as it is, no lookup per row.
    kept = len(questions) == len(eligible) + n_dropped
    return Subsample(
        items=items.reset_index(drop=True) if kept else keep_questions(items, questions),
        questions=questions,
        allocation=allocation,
        n_dropped=n_dropped,
    )


def keep_questions(items: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``items`` on the drawn ``questions`` (a frame with ``question_id``), in
    their order; ``items`` itself, renumbered, when no question is left out."""
    if len(questions) < items["question_id"].nunique():
        items = items[items["question_id"].isin(questions["question_id"])]
    return items.reset_index(drop=True)
