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

from evalbars.data.codes import factorize_sorted
from evalbars.data.question_coverage import categories_by_model, narrowest_models, shared_questions
from evalbars.data.scores import question_order
from evalbars.errors import ConfigError

__all__ = [
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
    items: pd.DataFrame, question_set: str = "shared"
) -> tuple[pd.DataFrame, int]:
    """The questions the analysis uses: every model's (``shared``) or any model's (``all``).

    Returns
    -------
    eligible : DataFrame
        ``question_id``, ``category`` in canonical order (category, question id).
    n_dropped : int
        Questions left out (some model did not answer them; 0 for ``all``).
    """
    if question_set not in QUESTION_SETS:
        raise ValueError(f"question_set must be one of {QUESTION_SETS}, got {question_set!r}")
    if question_set == "shared":
        return shared_questions(items)
    questions = items[["question_id", "category"]].drop_duplicates("question_id")
    return question_order(questions).reset_index(drop=True), 0


def check_design(items: pd.DataFrame, n, question_set: str = "shared") -> None:
    """Refuse, before anything is written, an item table the analysis cannot compare.

    The analysis compares at least two models, on the questions of
    ``question_set`` (those every model answered, or all of them), which must
    span at least two categories (the mixed models estimate a category variance
    and the clustered SE needs two clusters); the subsample of ``n`` of them must
    fit (at least one per category) and give some category two questions (else
    the nested model's question variance cannot be told from its category
    variance). Raises
    :class:`~evalbars.errors.ConfigError` with one line naming the models and
    categories that cause the problem and what to change.
    """
    models = list(factorize_sorted(items["model"])[1])  # sorted, as the messages name them
    if len(models) < 2:
        raise ConfigError(
            f"evalbars compares models, but the data hold {len(models)}: {models}; "
            "list at least two in `models:` or `predictions:`"
        )
    shared, _ = eligible_questions(items, question_set)
    if shared.empty:
        sizes = items.groupby("model")["question_id"].nunique().sort_values(kind="stable")
        raise ConfigError(
            f"no question was answered by every model (the fewest: {sizes.index[0]} with "
            f"{int(sizes.iloc[0]):,}); the paired analyses need questions all models answered"
        )
    categories = sorted(shared["category"].unique())
    if len(categories) < 2:
        only = categories[0]
        others = sorted(set(items["category"]) - {only})
        culprits = narrowest_models(items, only)
        if not others:
            reason = "no source gives another category"
        elif all(categories_by_model(items)[m] == [only] for m in culprits):
            reason = f"{', '.join(culprits)} answered no question outside it"
        else:
            reason = f"{', '.join(culprits)} share no question outside it with every other model"
        which = "every model answered" if question_set == "shared" else "the models answered"
        raise ConfigError(
            f"the {len(shared):,} questions {which} are all in category {only!r} "
            f"({reason}); the analysis needs shared questions in at least two categories: give "
            "every model questions in two or more of the same categories, or a `category` column"
        )
    sizes = shared.groupby("category").size()
    allocation = allocate_proportional(sizes, len(shared) if n == "all" else int(n))
    if allocation["allocated"].max() < 2:
        raise ConfigError(
            f"subsample.n = {n} draws one question from each of the {len(sizes)} categories, so "
            "the nested mixed model cannot tell question from category variance; set "
            f"`subsample: {{n: ...}}` above {len(sizes)}"
        )


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
