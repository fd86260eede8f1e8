"""The best model, honestly: the top model's score corrected for selection, and the confidence
sets for the best and the top k, on a leaderboard's shared questions.

A leaderboard's top score is the largest of K noisy estimates, so it is biased upward and its
naive interval covers the top model's true score less often than it says (the winner's curse:
8-79% instead of 95% on tied boards of 20 and 100 models, ``--winner-coverage``).
:func:`winner_readings` gives the top model's score four ways
(:func:`evalbars.stats.best.winners.winner_table`): naive, conditional, the hybrid estimate and
interval of Andrews, Kitagawa and McCloskey (the corrected reading evalbars quotes), and the
zoom interval of Zrnic and Fithian. :func:`best_sets` gives, per model, whether it is in the
confidence set for the best (Hsu's MCB, :func:`evalbars.stats.best.sets.best_set`, with its
constrained interval of the model's gap to the best of the others) and in the confidence set for
the top k (:func:`evalbars.stats.best.sets.top_k_set`).

**Which questions.** The readings need every model's score on the same questions: they use the
questions every model answered (all of them, with ``question_set: shared``). The top model here
is the top on those questions; with ``question_set: all`` it may differ from the board's first
row, whose accuracy is on its own questions.

**Which covariance.** The joint covariance of the K scores
(:func:`evalbars.stats.best.winners.mean_covariance`) is paired: its off-diagonal carries the
correlation of models scored on the same questions, which makes every gap's SE the paired one
of ``pairwise.csv``. It is clustered by category (CR2) where the categories can carry it: at
least :data:`CLUSTERED_FROM_CATEGORIES` categories, and more categories than models. A
clustered covariance from G categories has rank at most G - 1 (the categories' residual sums
add to zero), so with as many models as categories some gaps would get a zero SE and a
significance they have not earned; and from few categories it is itself noisy, as the release
gate's study of few categories found for CR2 (:mod:`evalbars.studies.cluster_type1`). Below
that, the covariance is the paired one over questions, which treats the categories as fixed
strata (MMLU-Pro's 14 categories are the benchmark, not a sample of categories); the
``covariance`` column says which was used. The coverage of both, with the covariance estimated
from item-level scores as here, is measured by
:func:`evalbars.studies.winners_coverage.estimated_covariance_coverage_table` (1,400 questions,
1,000 boards per setting): the MCB set holds the best 94.8% to 99.9% of the time; the hybrid
interval of a tied winner covers 93.9% (5 models) and 90.6% (20) with the paired covariance and
no category effect, where the naive one covers 89.4% and 74.2%; with a model x category effect
and a claim about the population of categories the paired covariance under-covers (80.0% to
86.4% at 14 categories) and the clustered one holds 88.8% to 94.2%.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, LEVEL, SEED, TOP_K
from evalbars.stats.best.sets import best_set, top_k_set
from evalbars.stats.best.winners import mean_covariance, winner_table

__all__ = [
    "CLUSTERED_FROM_CATEGORIES",
    "WINNER_COLUMNS",
    "BEST_SET_COLUMNS",
    "SharedBoard",
    "clustering_applies",
    "shared_board",
    "winner_readings",
    "best_sets",
    "winner_sentence",
    "best_set_sentence",
]

#: Categories from which the readings use the category-clustered (CR2) covariance (and more
#: categories than models); below, the paired covariance over questions.
CLUSTERED_FROM_CATEGORIES = 30
#: Columns of ``winner.csv``, one row per reading of the top model's score.
WINNER_COLUMNS = [
    "model",
    "method",
    "observed",
    "se",
    "estimate",
    "ci_low",
    "ci_high",
    "width",
    "plausible_winners",
    "models",
    "questions",
    "covariance",
]
#: Columns :func:`best_sets` adds to ``leaderboard.csv``.
BEST_SET_COLUMNS = ["in_best_set", "mcb_low", "mcb_high", "top_k", "in_top_k_set"]


@dataclass(frozen=True)
class SharedBoard:
    """The scores of every model on the questions all of them answered.

    Attributes
    ----------
    scores : ndarray, shape (n, K)
        Per-question scores (cell means), no NaN.
    models : list of str
        Column names.
    categories : ndarray of str, shape (n,)
        Category of each question.
    clustered : bool
        Whether the covariance is clustered by category (see the module docstring).
    """

    scores: np.ndarray
    models: list
    categories: np.ndarray
    clustered: bool

    @property
    def covariance_name(self) -> str:
        """``"paired, clustered (CR2, G categories)"`` or ``"paired"``."""
        groups = np.unique(self.categories).size
        return f"paired, clustered (CR2, {groups} categories)" if self.clustered else "paired"

    def covariance(self) -> np.ndarray:
        """The joint covariance of the K mean scores (:func:`~evalbars.stats.best.winners.mean_covariance`)."""
        return mean_covariance(self.scores, self.categories if self.clustered else None)


def clustering_applies(categories, dimension: int) -> bool:
    """Whether a covariance of ``dimension`` means may be clustered by these ``categories``:
    :data:`CLUSTERED_FROM_CATEGORIES` or more, and more than ``dimension`` (a CR2 covariance
    from G categories has rank at most G - 1).

    Examples
    --------
    >>> clustering_applies(["a"] * 10 + ["b"] * 10, 2), clustering_applies(range(40), 6)
    (False, True)
    """
    groups = np.unique(np.asarray(categories)).size
    return bool(groups >= CLUSTERED_FROM_CATEGORIES and groups > dimension)


def shared_board(wide: WideScores) -> SharedBoard:
    """The questions every model answered, and whether their categories carry a clustered
    covariance (:data:`CLUSTERED_FROM_CATEGORIES` or more, and more than the models).

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> wide = WideScores(np.array([[1, 0], [np.nan, 1], [1, 1.]]), ["a", "b"],
    ...                   np.array(["q1", "q2", "q3"]), np.array(["x", "x", "y"]))
    >>> board = shared_board(wide)
    >>> board.scores.tolist(), board.covariance_name
    ([[1.0, 0.0], [1.0, 1.0]], 'paired')
    """
    complete = np.isfinite(wide.scores).all(axis=1)
    categories = np.asarray(wide.categories)[complete]
    # every question answered by every model (the usual board): the matrix itself, no copy
    return SharedBoard(
        scores=wide.scores if complete.all() else wide.scores[complete],
        models=list(wide.models),
        categories=categories,
        clustered=clustering_applies(categories, len(wide.models)),
    )


def _empty_winner() -> pd.DataFrame:
    return pd.DataFrame({column: [] for column in WINNER_COLUMNS})


def winner_readings(wide: WideScores, *, level: float = LEVEL, seed: int = SEED) -> pd.DataFrame:
    """``winner.csv``: the top model's score under every reading, on the shared questions.

    Parameters
    ----------
    wide : WideScores
        The question-by-model scores.
    level : float
        Level of the intervals.
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    DataFrame
        :data:`WINNER_COLUMNS`, one row per reading in the order of
        :data:`evalbars.stats.best.winners.WINNER_METHODS` (naive, conditional, hybrid, zoom);
        empty with fewer than two models or two shared questions. The hybrid row is the
        corrected reading; the zoom row's ``plausible_winners`` counts the models its interval
        is simultaneous over. Scores in [0, 1] have their intervals clipped to [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> rng = np.random.default_rng(1)
    >>> scores = (rng.random((400, 3)) < [0.70, 0.69, 0.60]).astype(float)
    >>> wide = WideScores(scores, ["a", "b", "c"], np.arange(400).astype(str),
    ...                   np.array(["x"] * 400))
    >>> winner_readings(wide)[["model", "method", "estimate", "ci_low", "ci_high"]].round(3)
      model       method  estimate  ci_low  ci_high
    0     b        naive     0.705   0.660     0.75
    1     b  conditional     0.704   0.646     0.75
    2     b       hybrid     0.704   0.647     0.75
    3     b         zoom     0.705   0.650     0.76
    """
    board = shared_board(wide)
    if len(board.models) < 2 or board.scores.shape[0] < 2:
        return _empty_winner()
    table = winner_table(
        board.scores,
        board.models,
        board.categories if board.clustered else None,
        alpha=1 - level,
        seed=seed,
        cov=board.covariance(),
    )
    if np.all((board.scores >= 0) & (board.scores <= 1)):
        # Scores in [0, 1] have their true means there too: clipping loses no coverage.
        table["ci_low"] = table["ci_low"].clip(lower=0.0)
        table["ci_high"] = table["ci_high"].clip(upper=1.0)
        table["width"] = table["ci_high"] - table["ci_low"]
    table["covariance"] = board.covariance_name
    return table[WINNER_COLUMNS]


def best_sets(
    wide: WideScores, *, alpha: float = ALPHA, top_k: int = TOP_K, seed: int = SEED
) -> pd.DataFrame:
    """Per model: in the confidence set for the best, its MCB interval, in the set for the top k.

    Parameters
    ----------
    wide : WideScores
        The question-by-model scores.
    alpha : float
        Each set holds its truth with probability at least :math:`1-\\alpha`.
    top_k : int
        k of the set for the top k; more than the models gives every model.
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    DataFrame
        ``model`` and :data:`BEST_SET_COLUMNS`: ``in_best_set``, ``mcb_low`` and ``mcb_high``
        (Hsu's constrained interval of the model's true score minus the best true score of the
        others, :func:`evalbars.stats.best.sets.best_set`), ``top_k`` (the k used: at most the
        number of models) and ``in_top_k_set``. Empty values with fewer than two shared
        questions (no paired reading).

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> rng = np.random.default_rng(0)
    >>> scores = (rng.random((600, 4)) < [0.80, 0.78, 0.60, 0.50]).astype(float)
    >>> wide = WideScores(scores, list("abcd"), np.arange(600).astype(str), np.array(["x"] * 600))
    >>> best_sets(wide, top_k=2)[["model", "in_best_set", "in_top_k_set"]]
      model  in_best_set  in_top_k_set
    0     a         True          True
    1     b         True          True
    2     c        False         False
    3     d        False         False
    """
    board = shared_board(wide)
    size = len(board.models)
    k = int(min(top_k, size))
    if size == 0 or board.scores.shape[0] < 2:
        return pd.DataFrame(
            {
                "model": board.models,
                "in_best_set": pd.array([pd.NA] * size, dtype="boolean"),
                "mcb_low": np.nan,
                "mcb_high": np.nan,
                "top_k": k,
                "in_top_k_set": pd.array([pd.NA] * size, dtype="boolean"),
            }
        )
    cov = board.covariance()
    means = board.scores.mean(axis=0)
    best = best_set(means, cov, board.models, alpha=alpha, seed=seed)
    top = top_k_set(means, cov, k, board.models, alpha=alpha, seed=seed)
    return pd.DataFrame(
        {
            "model": board.models,
            "in_best_set": pd.array(best["in_set"].to_numpy(), dtype="boolean"),
            "mcb_low": best["mcb_low"].to_numpy(),
            "mcb_high": best["mcb_high"].to_numpy(),
            "top_k": k,
            "in_top_k_set": pd.array(top["in_set"].to_numpy(), dtype="boolean"),
        }
    )


def _and(names) -> str:
    names = [str(n) for n in names]
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _listed(names, shown: int = 8) -> str:
    names = [str(n) for n in names]
    if len(names) <= shown:
        return _and(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown:,} more"


def _points(value: float) -> str:
    return f"{100 * value:.1f}%"


def winner_sentence(winner: pd.DataFrame, level: float = LEVEL) -> str:
    """The top model's score, naive and corrected for being the top, in one sentence.

    Examples
    --------
    >>> table = pd.DataFrame({"model": "a", "method": ["naive", "conditional", "hybrid", "zoom"],
    ...     "observed": 0.8, "estimate": [0.8, 0.79, 0.793, 0.8],
    ...     "ci_low": [0.76, 0.72, 0.739, 0.749], "ci_high": [0.84, 0.839, 0.8395, 0.851],
    ...     "plausible_winners": [0, 0, 0, 4], "questions": 400})
    >>> winner_sentence(table)
    "a's top score, corrected for being the top (hybrid, Andrews, Kitagawa and McCloskey): 79.3% (95% interval 73.9% to 84.0%); as if chosen in advance: 80.0% (76.0% to 84.0%)."
    """
    if winner.empty:
        return ""
    rows = winner.set_index("method")
    naive, hybrid, zoom = rows.loc["naive"], rows.loc["hybrid"], rows.loc["zoom"]
    model = winner["model"].iloc[0]
    if not np.isfinite(hybrid["estimate"]):
        return (
            f"{model}'s top score {_points(naive['observed'])} has no corrected reading "
            "(a zero standard error)."
        )
    text = (
        f"{model}'s top score, corrected for being the top (hybrid, Andrews, Kitagawa and "
        f"McCloskey): {_points(hybrid['estimate'])} ({100 * level:g}% interval "
        f"{_points(hybrid['ci_low'])} to {_points(hybrid['ci_high'])}); as if chosen in "
        f"advance: {_points(naive['estimate'])} ({_points(naive['ci_low'])} to "
        f"{_points(naive['ci_high'])})"
    )
    if zoom["ci_high"] - zoom["ci_low"] < hybrid["ci_high"] - hybrid["ci_low"]:
        text += (
            f"; the zoom interval (Zrnic and Fithian), shorter here: {_points(zoom['ci_low'])} "
            f"to {_points(zoom['ci_high'])}"
        )
    return text + "."


def best_set_sentence(sets: pd.DataFrame, alpha: float = ALPHA) -> str:
    """The confidence sets for the best and the top k, in one sentence.

    Examples
    --------
    >>> sets = pd.DataFrame({"model": list("abcd"), "in_best_set": [True, True, False, False],
    ...                      "top_k": 3, "in_top_k_set": [True, True, True, False]})
    >>> best_set_sentence(sets)
    'The best is one of 2 models (confidence set at 95%, Hsu\\'s MCB): a and b, so no "best:" claim is supported; the top 3 are among a, b and c.'
    """
    if sets.empty or sets["in_best_set"].isna().all():
        return ""
    best = sets.loc[sets["in_best_set"].astype(bool), "model"].tolist()
    top = sets.loc[sets["in_top_k_set"].astype(bool), "model"].tolist()
    k = int(sets["top_k"].iloc[0])
    level = f"{100 * (1 - alpha):g}%"
    if len(best) == 1:
        text = (
            f"{best[0]} is the best (the confidence set for the best at {level}, Hsu's MCB, "
            f"is {{{best[0]}}})"
        )
    else:
        text = (
            f"The best is one of {len(best):,} models (confidence set at {level}, Hsu's MCB): "
            f'{_listed(best)}, so no "best:" claim is supported'
        )
    if k < len(sets):
        text += f"; the top {k} are among {_listed(top)}"
    return text + "."
