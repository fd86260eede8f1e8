"""Compact letter display of all pairwise comparisons (Piepho 2004's insert-and-absorb).

Two systems share a letter exactly when the all-pairs test does not separate them, so a
leaderboard column of letters ("a", "ab", "b") shows every tie at a glance, without
anchoring on the leader. :func:`compact_letters` builds the letters from a boolean
"separated" matrix; :func:`letters_valid` checks the defining property on every pair;
:func:`letters_table` runs it on the paired z-tests after Holm
(:func:`evalbars.stats.pairwise.pairwise_table`).

References
----------
.. [1] Piepho, H.-P. (2004). An algorithm for a letter-based representation of
   all-pairwise comparisons. Journal of Computational and Graphical Statistics 13(2),
   456-466.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA
from evalbars.stats.pairwise import pairwise_table

__all__ = [
    "separated_matrix",
    "compact_letters",
    "letters_valid",
    "letter_names",
    "letter_strings",
    "letter_sets",
    "letters_table",
]

_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def separated_matrix(models, model_a, model_b, separated) -> np.ndarray:
    """Symmetric K x K boolean matrix from a pair table (``model_a, model_b, separated``)."""
    index = pd.Index(list(models))
    a, b = index.get_indexer(np.asarray(model_a)), index.get_indexer(np.asarray(model_b))
    if (a < 0).any() or (b < 0).any():
        raise ValueError("the pairs name systems that are not in models")
    out = np.zeros((len(index), len(index)), dtype=bool)
    flag = np.asarray(separated, dtype=bool)
    out[a, b] = flag
    out[b, a] = flag
    return out


def _subsets(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``out[i, j]``: the members of column a[i] are all in column b[j] (one float product)."""
    return (a.astype(np.float32) @ (~b).astype(np.float32).T) == 0


def _absorb_new(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``old`` plus the columns of ``new`` that no other column holds (Piepho's absorb step).

    Only the new columns can be absorbed: an old column inside a new one (a copy of a
    column with one system removed) was already inside that column before, and absorbed.
    Of identical new columns the first is kept.
    """
    # A new column is inside an old one when that old column holds all its members: a look
    # at its members' entries only (new columns are few, and narrower than the board).
    inside_old = np.array([len(old) > 0 and old[:, row].all(axis=1).any() for row in new])
    within = _subsets(new, new)
    np.fill_diagonal(within, False)
    same = within & within.T
    earlier = np.tril(np.ones_like(same), k=-1)  # j < i
    drop = inside_old | (within & ~same).any(axis=1) | (same & earlier).any(axis=1)
    return np.vstack([old, new[~drop]])


def _sweep(columns: np.ndarray) -> np.ndarray:
    """Piepho's sweeping step: remove letters that no pair needs.

    A letter of system i is redundant when every other system sharing it also shares
    another letter with i, and i keeps at least one letter. Letters are swept
    column by column, system by system (Piepho 2004, section 3); emptied columns go.
    """
    columns = columns.copy()
    for c in range(columns.shape[0]):
        for i in np.flatnonzero(columns[c]):
            others = columns.copy()
            others[c] = False
            share_elsewhere = (others[:, [i]] & others).any(axis=0)
            mates = columns[c].copy()
            mates[i] = False
            if share_elsewhere[i] and share_elsewhere[mates].all():
                columns[c, i] = False
    return columns[columns.any(axis=1)]


def compact_letters(separated, sweep: bool = False) -> np.ndarray:
    """Letter membership of a compact letter display, by Piepho's insert-and-absorb.

    Parameters
    ----------
    separated : array_like of bool, shape (K, K)
        Symmetric; True where two systems are significantly different.
    sweep : bool
        Apply Piepho's sweeping step after insert-and-absorb (default False: the
        letters are then exactly those of R's ``multcompView::multcompLetters``, which
        keep runs of letters contiguous, "abc" rather than "ac"; sweeping only removes
        redundant letters from systems, never a whole letter in the committed cases).

    Returns
    -------
    ndarray of bool, shape (K, L)
        ``membership[i, l]``: system i carries letter l. Letters are ordered by
        the first system (row) that carries them, so with rows best first the
        leader gets letter "a".

    Notes
    -----
    Insert-and-absorb (Piepho 2004): start from one letter held by every system.
    For each separated pair (i, j), every letter held by both is split into two
    copies, one without i and one without j (insert); then every letter whose
    holders are a subset of another letter's holders is dropped (absorb). At the
    end two systems share a letter exactly when they are not separated; the
    sweep removes letters that no unseparated pair needs. The pairs are taken in
    row order, all pairs (i, j > i) of system i in one step: splitting a letter on
    (i, j1) and then its copy on (i, j2), ... leaves, after absorbing, the letter
    without i and the letter without all of j1, j2, ..., which is what one step
    makes. Each step is vectorised over letters; K steps in all.
    """
    sep = np.asarray(separated, dtype=bool)
    k = sep.shape[0]
    if sep.shape != (k, k) or not np.array_equal(sep, sep.T):
        raise ValueError("separated must be a symmetric square matrix")
    columns = np.ones((1, k), dtype=bool)
    later = np.triu(sep, k=1)
    for i in np.flatnonzero(later.any(axis=1)):
        # The pairs (i, j), j > i, in one step: a letter held by i and by some of those j is
        # split into a copy without i and a copy without all of them.
        hit = columns[:, i] & (columns & later[i]).any(axis=1)
        if not hit.any():
            continue
        without_i, without_j = columns[hit].copy(), columns[hit] & ~later[i]
        without_i[:, i] = False
        columns = _absorb_new(columns[~hit], np.vstack([without_i, without_j]))
    if sweep:
        columns = _sweep(columns)
    # Order letters by their first holder, then by their next holders.
    order = np.lexsort(tuple((~columns[:, r]) for r in reversed(range(k))))
    return columns[order].T


def letters_valid(membership, separated) -> np.ndarray:
    """Per pair (K x K): True where the letters tell the truth about that pair.

    Valid means: two different systems share a letter exactly when they are not
    separated, and every system has at least one letter (the diagonal says that).
    """
    m = np.asarray(membership, dtype=np.int64)
    share = (m @ m.T) > 0
    sep = np.asarray(separated, dtype=bool)
    truth = ~sep
    np.fill_diagonal(truth, True)
    return share == truth


def letter_names(count: int) -> list[str]:
    """``count`` letter names: a-z, A-Z, then a1-Z1, a2-Z2, ..."""
    return [
        _ALPHABET[i % len(_ALPHABET)] + ("" if i < len(_ALPHABET) else str(i // len(_ALPHABET)))
        for i in range(count)
    ]


def letter_strings(membership) -> list[str]:
    """Each system's letters as one string ("ab"); joined by "," beyond 52 letters."""
    m = np.asarray(membership, dtype=bool)
    names = np.asarray(letter_names(m.shape[1]), dtype=object)
    joiner = "" if m.shape[1] <= len(_ALPHABET) else ","
    return [joiner.join(names[row]) for row in m]


def letter_sets(strings) -> list[set]:
    """Each system's letters as a set, from :func:`letter_strings` output ("ab" or "a1,b1")."""
    strings = [str(x) for x in strings]
    joined = any("," in x for x in strings) or any(ch.isdigit() for x in strings for ch in x)
    return [set(x.split(",")) if joined else set(x) for x in strings]


def letters_table(wide: WideScores, alpha: float = ALPHA, pairs: pd.DataFrame | None = None):
    """Letters of every system from the all-pairs paired z-tests after Holm.

    Two systems are separated when their Holm-adjusted paired p-value (``p_holm`` of
    :func:`evalbars.stats.pairwise.pairwise_table`, over all K(K-1)/2 pairs) is below
    ``alpha``. A pair whose paired SE is 0 (one shared question, or the same difference on
    every shared question) has the exact p of its discordant questions there
    (:func:`evalbars.stats.pairwise.difference_test`): one shared question never separates
    two systems, 120 wins of 120 do. ``pairs`` may pass that table when it is already
    computed.

    Returns
    -------
    DataFrame
        One row per system in accuracy order (best first): ``model, letters,
        letters_count`` (how many letters the display uses, the same on every row).
    """
    table = pairwise_table(wide, alpha) if pairs is None else pairs
    # in order of first appearance, found by Arrow (not one Python string per pair)
    models = pd.concat([table["model_a"], table["model_b"]], ignore_index=True).unique().tolist()
    if not models:  # one system: one letter
        models = list(wide.models)
    separated = table["p_holm"] < alpha
    sep = separated_matrix(models, table["model_a"], table["model_b"], separated)
    membership = compact_letters(sep)
    return pd.DataFrame(
        {
            "model": models,
            "letters": letter_strings(membership),
            "letters_count": membership.shape[1],
        }
    )
