"""Item scores from repeated samples: pass@k, pass^k, majority@k and the mean, and each
model's curve of a score over k with its interval.

With :math:`n` samples of a question of which :math:`c` are correct, every item score here is
the average of a kernel :math:`h` over all :math:`\\binom{n}{k}` subsets of :math:`k` of the
samples (a U-statistic), so it is unbiased for :math:`E[h]` over :math:`k` independent draws
of the model at that question (Hoeffding 1948):

==============  ===================================  =========================================
score           kernel :math:`h` on k samples        item score
==============  ===================================  =========================================
``mean``        (k = 1) the sample                   :math:`c/n`
``pass@k``      one of the k is correct (max)        :math:`1 - \\binom{n-c}{k}/\\binom{n}{k}`
``pass^k``      all k are correct (min)              :math:`\\binom{c}{k}/\\binom{n}{k}`
``majority@k``  more than k/2 are correct (k odd)    :math:`P(\\text{Hypergeom}(n, c, k) > k/2)`
==============  ===================================  =========================================

pass@k is Chen et al.'s (2021) unbiased estimator, computed in the product form of
openai/human-eval's ``estimate_pass_at_k``, :math:`1 - \\prod_{i=n-c+1}^{n}(1 - k/i)`, here
over the :math:`\\min(c, k)` factors of the equal ratio :math:`\\binom{n-k}{c}/\\binom{n}{c}`
and summed as logarithms (``log1p``), so a pass@k near 0 keeps its relative accuracy. pass^k
(Yao et al. 2024, τ-bench; inspect_ai's ``pass_k`` reducer) is the same ratio with the roles
of right and wrong swapped: :math:`\\text{pass}^k(n, c) = 1 - \\text{pass@}k(n, n - c)`.

**majority@k** here is the probability that a strict majority of k samples drawn without
replacement from the n are correct: the upper tail of the hypergeometric distribution, for odd
k (no ties). It is the U-statistic of the kernel "more than half of the k are right", so it is
unbiased for the chance that a majority of k independent samples is right, uses all n samples
and does not depend on their order. lighteval's ``maj@k`` (``MajAtK``) and lm-eval's
``majority_vote`` filter vote over the *answers* instead: the most frequent normalised answer
among the first k samples (lighteval) or all repeats (lm-eval), ties to the first seen. Where
every wrong answer is the same (a yes/no question) the two agree; otherwise a plurality of
answers can be right while most samples are wrong, so answer voting scores at least this
kernel on the same samples. Answer voting needs the answers, which a 0/1 table no longer
holds; the lm-eval re-scoring (:mod:`evalbars.data.readers.lm_eval_filters`) reproduces
lm-eval's own vote from the raw responses.

A question with fewer than k samples has no unbiased estimate: its item score is NaN,
:class:`ItemScores` counts such questions and :func:`short_questions` names them.

**Curves.** :func:`pass_at_k_curve` averages the item scores over questions for each k and
gives the CR2 interval of that mean (:func:`evalbars.stats.cluster_robust.cr2_mean`,
Satterthwaite t), clustered by category where the questions have two or more categories, else
with each question its own cluster (then CR2 is exactly the one-sample t interval,
:math:`s/\\sqrt N` on :math:`N - 1` df). The item-level SE already holds the sampling noise of
the n draws (Miller 2024, law of total variance). Two models' curves compared over k, with a
simultaneous band, are :mod:`evalbars.stats.repeats.passk_band`.

References
----------
.. [1] Chen, M. et al. (2021). Evaluating large language models trained on code.
   arXiv:2107.03374 (the unbiased pass@k; openai/human-eval ``estimate_pass_at_k``).
.. [2] Yao, S., Shinn, N., Razavi, P. and Narasimhan, K. (2024). τ-bench: a benchmark for
   tool-agent-user interaction in real-world domains. arXiv:2406.12045 (pass^k).
.. [3] Hoeffding, W. (1948). A class of statistics with asymptotically normal distribution.
   Annals of Mathematical Statistics 19(3), 293-325 (U-statistics).
.. [4] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
.. [5] Fourrier, C. et al. (2023). lighteval (``MajAtK``: maj@k over the first k answers);
   EleutherAI lm-evaluation-harness 0.4.13 (the ``majority_vote`` filter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.stats.cluster_robust import clustering_applicable, cr2_mean

__all__ = [
    "ITEM_SCORES",
    "ItemScores",
    "parse_item_score",
    "pass_at_k",
    "pass_hat_k",
    "majority_at_k",
    "item_score",
    "item_score_matrix",
    "sample_counts",
    "item_scores",
    "short_questions",
    "question_clusters",
    "pass_at_k_curve",
]

#: The item scores a question's repeated samples can be reduced to.
ITEM_SCORES = ("mean", "pass@k", "pass^k", "majority@k")

_SPELLINGS = re.compile(r"^\s*(pass@|pass\^|maj@|majority@)\s*(\d+)\s*$", re.IGNORECASE)
_CANONICAL = {"pass@": "pass@k", "pass^": "pass^k", "maj@": "majority@k", "majority@": "majority@k"}


def parse_item_score(text: str) -> tuple[str, int]:
    """The item score and k of a spelling such as ``"pass@5"``, ``"pass^3"``, ``"maj@5"``.

    Parameters
    ----------
    text : str
        ``mean``, ``pass@K``, ``pass^K``, ``maj@K`` or ``majority@K`` with K a positive
        integer (odd for majority).

    Returns
    -------
    (str, int)
        A name of :data:`ITEM_SCORES` and k (1 for ``mean``).

    Raises
    ------
    ValueError
        For anything else, naming the accepted spellings.

    Examples
    --------
    >>> parse_item_score("pass@10"), parse_item_score("pass^3"), parse_item_score("maj@5")
    (('pass@k', 10), ('pass^k', 3), ('majority@k', 5))
    >>> parse_item_score("mean")
    ('mean', 1)
    """
    if text.strip().lower() == "mean":
        return "mean", 1
    found = _SPELLINGS.match(text)
    k = int(found.group(2)) if found else 0
    if found is None or k < 1:
        raise ValueError(
            f"unknown item score {text!r}: use mean, pass@K, pass^K or maj@K (K a positive "
            "integer, odd for maj@K)"
        )
    score = _CANONICAL[found.group(1).lower()]
    if score == "majority@k" and k % 2 == 0:
        raise ValueError(f"{text!r}: majority@k needs an odd k (no ties)")
    return score, k


def _counts(samples, correct, k):
    """Broadcast and check ``n``, ``c`` (whole, 0 <= c <= n) and ``k`` (whole, >= 1)."""
    n, c, k = np.broadcast_arrays(
        np.asarray(samples, float), np.asarray(correct, float), np.asarray(k, float)
    )
    if np.any(k < 1) or np.any(k != np.floor(k)):
        raise ValueError("k must be a positive whole number")
    bad = np.isfinite(n) & ((n < 0) | (c < 0) | (c > n) | (n != np.floor(n)) | (c != np.floor(c)))
    if np.any(bad):
        first = np.flatnonzero(bad.ravel())[0]
        raise ValueError(
            "counts must be whole with 0 <= correct <= samples, got samples "
            f"{n.ravel()[first]:g}, correct {c.ravel()[first]:g}"
        )
    return n, c, k


def _all_wrong(n, c, k):
    """:math:`\\binom{n-c}{k}/\\binom{n}{k}` (k draws without replacement all wrong) for n >= k.

    Equal to :math:`\\prod_{j<\\min(c,k)} (1 - \\max(c,k)/(n - j))`; 0 when n - c < k. The
    factors are summed as ``log1p`` over a (…, min(c, k)) grid.
    """
    fewer, more = np.minimum(c, k), np.maximum(c, k)
    width = int(np.nanmax(np.where(n - c >= k, fewer, 0), initial=0))
    j = np.arange(width, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.log1p(-more[..., None] / (n[..., None] - j))
    used = (j < fewer[..., None]) & (n - c >= k)[..., None]
    log_ratio = np.where(used, factors, 0.0).sum(axis=-1)
    return np.where(n - c >= k, np.exp(log_ratio), 0.0)


def pass_at_k(samples, correct, k):
    """Unbiased pass@k of each question: :math:`1 - \\binom{n-c}{k}/\\binom{n}{k}`.

    Parameters
    ----------
    samples, correct : array_like
        Samples :math:`n` and correct samples :math:`c` of each question (whole numbers).
    k : int or array_like
        Budget(s), broadcast against the counts.

    Returns
    -------
    ndarray
        pass@k, NaN where :math:`n < k` (no unbiased estimate) or :math:`n` is NaN.

    Notes
    -----
    .. math::

        \\widehat{\\text{pass@}k} = 1 - \\frac{\\binom{n-c}{k}}{\\binom{n}{k}}
        = 1 - \\prod_{i=n-c+1}^{n}\\Big(1 - \\frac{k}{i}\\Big)

    (Chen et al. 2021, the form of openai/human-eval ``estimate_pass_at_k``), computed over the
    :math:`\\min(c, k)` factors of the equal ratio and summed as logarithms.

    References
    ----------
    .. [1] Chen, M. et al. (2021). Evaluating large language models trained on code.
       arXiv:2107.03374.

    Examples
    --------
    >>> [round(float(v), 10) for v in pass_at_k([10, 200, 200, 20], [3, 7, 7, 2], [5, 10, 100, 10])]
    [0.9166666667, 0.3055988116, 0.9929911172, 0.7631578947]
    >>> pass_at_k(3, 1, 5)
    array(nan)
    """
    n, c, k = _counts(samples, correct, k)
    value = 1.0 - _all_wrong(n, c, k)
    return np.where(np.isfinite(n) & (n >= k), value, np.nan)


def pass_hat_k(samples, correct, k):
    """pass^k of each question, all k samples right: :math:`\\binom{c}{k}/\\binom{n}{k}`.

    Parameters
    ----------
    samples, correct, k
        As in :func:`pass_at_k`.

    Returns
    -------
    ndarray
        pass^k, NaN where :math:`n < k`.

    Notes
    -----
    .. math:: \\widehat{\\text{pass}^k} = \\frac{\\binom{c}{k}}{\\binom{n}{k}}
              = 1 - \\widehat{\\text{pass@}k}(n, n - c),

    the unbiased estimator of :math:`p^k` (Yao et al. 2024, τ-bench; inspect_ai's ``pass_k``
    reducer).

    References
    ----------
    .. [1] Yao, S. et al. (2024). τ-bench. arXiv:2406.12045.

    Examples
    --------
    >>> [round(float(v), 10) for v in pass_hat_k(10, [3, 9, 10], 2)]
    [0.0666666667, 0.8, 1.0]
    """
    n, c, k = _counts(samples, correct, k)
    value = _all_wrong(n, n - c, k)
    return np.where(np.isfinite(n) & (n >= k), value, np.nan)


def majority_at_k(samples, correct, k):
    """majority@k of each question: the chance a strict majority of k of the n samples,
    drawn without replacement, is correct (k odd).

    Parameters
    ----------
    samples, correct, k
        As in :func:`pass_at_k`; every k odd.

    Returns
    -------
    ndarray
        majority@k, NaN where :math:`n < k`.

    Notes
    -----
    .. math::

        \\widehat{\\text{maj@}k} = \\sum_{j=(k+1)/2}^{k}
        \\frac{\\binom{c}{j}\\binom{n-c}{k-j}}{\\binom{n}{k}}
        = P\\big(\\text{Hypergeometric}(n, c, k) > k/2\\big),

    the upper tail of the hypergeometric distribution (:func:`scipy.stats.hypergeom`), unbiased
    for :math:`P(\\text{Binomial}(k, p) > k/2)`. See the module notes for how it relates to
    answer voting (lighteval ``maj@k``, lm-eval ``majority_vote``).

    Examples
    --------
    >>> [round(float(v), 10) for v in majority_at_k(10, [3, 5, 7], 3)]
    [0.1833333333, 0.5, 0.8166666667]
    """
    n, c, k = _counts(samples, correct, k)
    if np.any(k % 2 == 0):
        raise ValueError("majority@k needs an odd k (no ties)")
    # Imported here: scipy.stats takes a second to import, and only majority@k needs it.
    from scipy import stats  # noqa: PLC0415 - see above

    valid = np.isfinite(n) & (n >= k) & (n > 0)
    safe = [np.where(valid, v, 1.0).astype(np.int64) for v in (n, c, k)]
    value = stats.hypergeom.sf((safe[2] - 1) // 2, safe[0], safe[1], safe[2])
    return np.where(valid, value, np.nan)


def item_score(samples, correct, score: str = "pass@k", k: int = 1):
    """The item score ``score`` (a name of :data:`ITEM_SCORES`) of each question at budget k.

    Parameters
    ----------
    samples, correct : array_like
        Samples and correct samples of each question.
    score : str
        ``mean``, ``pass@k``, ``pass^k`` or ``majority@k``.
    k : int or array_like
        The budget (ignored for ``mean``).

    Returns
    -------
    ndarray
        The scores; NaN where there are fewer samples than k (or none, for ``mean``).

    Examples
    --------
    >>> item_score([10, 10], [3, 0], "mean")
    array([0.3, 0. ])
    >>> round(float(item_score(10, 3, "pass@k", 5)), 6)
    0.916667
    """
    if score == "mean":
        n, c, _ = _counts(samples, correct, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, c / n, np.nan)
    functions = {"pass@k": pass_at_k, "pass^k": pass_hat_k, "majority@k": majority_at_k}
    if score not in functions:
        raise ValueError(f"score must be one of {ITEM_SCORES}, got {score!r}")
    return functions[score](samples, correct, k)


def item_score_matrix(samples, correct, ks, score: str = "pass@k") -> np.ndarray:
    """Item scores of every question at every budget: shape ``(..., questions, len(ks))``.

    Parameters
    ----------
    samples, correct : array_like, shape (..., questions)
        Counts of each question (leading axes are stacks, e.g. replicates).
    ks : sequence of int
        The budgets, in the order of the last axis.
    score : str
        As in :func:`item_score`.

    Returns
    -------
    ndarray
        ``[..., i, j]`` is question i's score at ``ks[j]``.

    Examples
    --------
    >>> item_score_matrix([10, 10], [3, 0], [1, 5]).round(6)
    array([[0.3     , 0.916667],
           [0.      , 0.      ]])
    """
    n = np.asarray(samples, float)[..., None]
    c = np.asarray(correct, float)[..., None]
    # One call per budget keeps the product grid at (..., questions, k), not (..., K, K).
    columns = [item_score(n[..., 0], c[..., 0], score, int(k)) for k in ks]
    return np.stack(columns, axis=-1)


def sample_counts(samples: pd.DataFrame, by=("model", "question_id")) -> pd.DataFrame:
    """Samples and correct samples of every (model, question) from a table of 0/1 samples.

    Parameters
    ----------
    samples : DataFrame
        One row per sample (per epoch, repeat and run), with the ``by`` columns and
        ``correct`` (0/1; NaN rows are not samples); a ``category`` column is kept.
    by : sequence of str
        The cells. Add ``"run"`` to count each run apart; by default all of a question's
        samples, over every run, are pooled.

    Returns
    -------
    DataFrame
        ``*by, [category], samples, correct``, one row per cell.

    Raises
    ------
    ValueError
        When a score is neither 0 nor 1: pass@k, pass^k and majority@k need right or wrong.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": "m", "question_id": ["a", "a", "a", "b"],
    ...                      "correct": [1, 0, 1, 0]})
    >>> sample_counts(rows)
      model question_id  samples  correct
    0     m           a        3        2
    1     m           b        1        0
    """
    by = list(by)
    scored = samples[samples["correct"].notna()]
    values = scored["correct"].to_numpy(float)
    if np.any((values != 0) & (values != 1)):
        raise ValueError(
            "pass@k, pass^k and majority@k need 0/1 scores; "
            f"{int(np.count_nonzero((values != 0) & (values != 1)))} samples are neither"
        )
    keys = by + (["category"] if "category" in scored.columns and "category" not in by else [])
    grouped = scored.groupby(keys, sort=False, observed=True, dropna=False)["correct"]
    table = grouped.agg(samples="size", correct="sum").reset_index()
    table["correct"] = table["correct"].astype(np.int64)
    return table


@dataclass(frozen=True)
class ItemScores:
    """Item scores of every (model, question) and how many questions lack k samples.

    Attributes
    ----------
    table : DataFrame
        The counts with ``score`` added (NaN where a question has fewer than k samples).
    score : str
        The item score (:data:`ITEM_SCORES`).
    k : int
        The budget.
    short : int
        Questions (rows) with fewer than k samples; :func:`short_questions` names them.
    """

    table: pd.DataFrame
    score: str
    k: int
    short: int


def item_scores(counts: pd.DataFrame, score: str = "pass@k", k: int = 1) -> ItemScores:
    """Each (model, question)'s item score from its counts (:func:`sample_counts`).

    Parameters
    ----------
    counts : DataFrame
        ``samples`` and ``correct`` per row (and any label columns, kept).
    score : str
        A name of :data:`ITEM_SCORES` (or a spelling of :func:`parse_item_score`, which then
        also gives k).
    k : int
        The budget.

    Returns
    -------
    ItemScores

    Examples
    --------
    >>> counts = pd.DataFrame({"model": "m", "question_id": ["a", "b"], "samples": [10, 3],
    ...                        "correct": [3, 1]})
    >>> result = item_scores(counts, "pass@5")
    >>> result.table["score"].round(6).tolist(), result.short
    ([0.916667, nan], 1)
    """
    if score not in ITEM_SCORES:
        score, k = parse_item_score(score)
    values = item_score(counts["samples"].to_numpy(), counts["correct"].to_numpy(), score, k)
    short = int(np.count_nonzero(counts["samples"].to_numpy() < (k if score != "mean" else 1)))
    return ItemScores(counts.assign(score=values), score, int(k), short)


def short_questions(counts: pd.DataFrame, k: int) -> pd.DataFrame:
    """The rows (model, question) with fewer than k samples: no unbiased pass@k there.

    Parameters
    ----------
    counts : DataFrame
        As :func:`sample_counts` returns.
    k : int
        The budget.

    Returns
    -------
    DataFrame
        Those rows of ``counts``, in order, with ``missing = k - samples``.

    Examples
    --------
    >>> counts = pd.DataFrame({"model": "m", "question_id": ["a", "b"], "samples": [10, 3],
    ...                        "correct": [3, 1]})
    >>> short_questions(counts, 5)[["question_id", "samples", "missing"]]
      question_id  samples  missing
    1           b        3        2
    """
    rows = counts[counts["samples"] < k]
    return rows.assign(missing=k - rows["samples"])


def question_clusters(table: pd.DataFrame) -> tuple[np.ndarray, str]:
    """The clusters of a table's questions and what they are: its ``category`` labels when
    two or more categories hold questions
    (:func:`evalbars.stats.cluster_robust.clustering_applicable`), else one cluster per row
    (``"question"``).

    Examples
    --------
    >>> question_clusters(pd.DataFrame({"category": ["a", "a", "b"]}))
    (array(['a', 'a', 'b'], dtype=object), 'category')
    >>> question_clusters(pd.DataFrame({"category": ["a", "a"]}))
    (array([0, 1]), 'question')
    """
    if "category" in table.columns:
        labels = table["category"].astype(str).to_numpy()
        if clustering_applicable(labels).applicable:
            return labels, "category"
    return np.arange(len(table)), "question"


def pass_at_k_curve(
    counts: pd.DataFrame, *, score: str = "pass@k", ks=None, level: float = LEVEL
) -> pd.DataFrame:
    """Each model's mean item score at every budget k, with its CR2 interval.

    Parameters
    ----------
    counts : DataFrame
        ``model, question_id, samples, correct`` and optionally ``category``
        (:func:`sample_counts`).
    score : str
        ``pass@k`` (default), ``pass^k`` or ``majority@k`` (odd k only) or ``mean``.
    ks : sequence of int, optional
        Budgets; default 1 up to the model's largest number of samples (odd ones for
        majority@k).
    level : float
        Confidence level.

    Returns
    -------
    DataFrame
        ``model, score, k, estimate, se, df, ci_low, ci_high, questions, clusters,
        clustered_by``, one row per (model, k). ``questions`` counts the questions with at
        least k samples (the others have no unbiased estimate and are left out at that k);
        ``clustered_by`` is ``category`` (two or more categories) or ``question``. Intervals
        are the CR2 Satterthwaite t intervals of the mean, cut to [0, 1].

    Notes
    -----
    For each k, :math:`\\hat\\theta_k = N_k^{-1}\\sum_{i: n_i \\ge k} h_k(n_i, c_i)` and its
    CR2 SE (:func:`evalbars.stats.cluster_robust.cr2_mean`, all k of a model in one call, the
    questions short of k weighted 0).

    Examples
    --------
    The five problems of the paired example, model A (c = 3, 10, 0, 7, 5 of n = 10):

    >>> counts = pd.DataFrame({"model": "A", "question_id": list("abcde"), "samples": 10,
    ...                        "correct": [3, 10, 0, 7, 5]})
    >>> curve = pass_at_k_curve(counts, ks=[1, 5])
    >>> curve[["k", "estimate", "questions"]].round(6).to_dict("list")
    {'k': [1, 5], 'estimate': [0.5, 0.78254], 'questions': [5, 5]}
    """
    rows = []
    for model, table in counts.groupby("model", sort=False, observed=True):
        n = table["samples"].to_numpy(float)
        grid = _budgets(ks, int(n.max()), score)
        matrix = item_score_matrix(n, table["correct"].to_numpy(float), grid, score).T
        weights = np.isfinite(matrix).astype(float)
        labels, clustered_by = question_clusters(table)
        result = cr2_mean(np.nan_to_num(matrix), labels, weights)
        low, high = result.interval(level)
        rows.append(
            pd.DataFrame(
                {
                    "model": model,
                    "score": score,
                    "k": grid,
                    "estimate": result.estimate,
                    "se": result.se,
                    "df": result.df,
                    "ci_low": np.clip(low, 0.0, 1.0),
                    "ci_high": np.clip(high, 0.0, 1.0),
                    "questions": result.questions,
                    "clusters": result.clusters,
                    "clustered_by": clustered_by,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _budgets(ks, largest: int, score: str) -> np.ndarray:
    default = ks is None
    if default:
        ks = range(1, max(largest, 1) + 1)
    grid = np.asarray(list(ks), dtype=np.int64)
    if score == "majority@k" and default:
        grid = grid[grid % 2 == 1]
    if score == "mean":
        grid = np.array([1])
    if grid.size == 0 or np.any(grid < 1):
        raise ValueError(f"budgets must be positive whole numbers, got {list(ks)}")
    return grid
