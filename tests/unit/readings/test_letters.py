"""Compact letter display: validity on every pair, and R's multcompView::multcompLetters.

R's letters are in tests/reference/r_output/letters/letters.json, made by
tests/reference/make_letters_reference.R (40 seeded cases and the default subsample's
Holm-adjusted p-values from pairwise.csv; the p-values of the real data are not stored).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalbars.readings.leaderboard import letters

R_LETTERS = json.loads(
    (Path(__file__).parents[2] / "reference" / "r_output" / "letters" / "letters.json").read_text()
)


def _count(strings):
    return len(set("".join(strings)))


@pytest.mark.parametrize("case", range(len(R_LETTERS["synthetic"])))
def test_letters_are_valid_and_those_of_r_on_the_seeded_cases(case):
    ref = R_LETTERS["synthetic"][case]
    separated = letters.separated_matrix(
        ref["models"], ref["model_a"], ref["model_b"], np.asarray(ref["p_holm"]) < 0.05
    )
    membership = letters.compact_letters(separated)
    assert letters.letters_valid(membership, separated).all()
    assert membership.shape[1] <= ref["letters_count"] == _count(ref["letters"])
    # Insert-and-absorb with letters ordered by their first holder: R's display exactly.
    assert letters.letter_strings(membership) == list(ref["letters"])
    # R's letters are valid by the same check (the check is not vacuous).
    assert letters.letters_valid(_membership(ref["letters"]), separated).all()


def _membership(strings):
    """Membership matrix of single-character letter strings ("a", "ab", ...)."""
    names = sorted(set("".join(strings)))
    return np.array([[name in s for name in names] for s in strings])


@pytest.mark.parametrize("case", [3, 17, 30])
def test_sweeping_keeps_the_display_valid_and_never_adds_letters(case):
    ref = R_LETTERS["synthetic"][case]
    separated = letters.separated_matrix(
        ref["models"], ref["model_a"], ref["model_b"], np.asarray(ref["p_holm"]) < 0.05
    )
    swept = letters.compact_letters(separated, sweep=True)
    assert letters.letters_valid(swept, separated).all()
    assert swept.shape[1] <= ref["letters_count"]
    assert swept.sum() <= letters.compact_letters(separated).sum()


def test_a_wrong_display_is_caught_on_the_pair_it_misstates():
    separated = np.zeros((3, 3), dtype=bool)
    separated[0, 2] = separated[2, 0] = True  # a, ab, b
    membership = letters.compact_letters(separated)
    assert letters.letter_strings(membership) == ["a", "ab", "b"]
    wrong = membership.copy()
    wrong[2, 0] = True  # gives the third system the first letter too
    valid = letters.letters_valid(wrong, separated)
    assert not valid[0, 2] and not valid[2, 0] and valid[0, 1]


def test_no_separation_is_one_letter_and_all_separated_is_one_each():
    assert letters.letter_strings(letters.compact_letters(np.zeros((4, 4), bool))) == ["a"] * 4
    every = ~np.eye(4, dtype=bool)
    assert letters.letter_strings(letters.compact_letters(every)) == ["a", "b", "c", "d"]
    assert letters.letter_names(54)[51:] == ["Z", "a1", "b1"]


def test_a_banded_board_needs_more_than_52_letters_and_stays_valid():
    # 80 systems, each separated from all but its neighbours: 79 letters (one per adjacent pair).
    k = 80
    gap = np.abs(np.subtract.outer(np.arange(k), np.arange(k)))
    separated = gap >= 2
    membership = letters.compact_letters(separated)
    assert membership.shape[1] == k - 1
    assert letters.letters_valid(membership, separated).all()
    strings = letters.letter_strings(membership)
    assert strings[:2] == ["a", "a,b"] and strings[-1] == "A1"
    parsed = letters.letter_sets(strings)
    names = letters.letter_names(k - 1)
    assert parsed == [{names[j] for j in np.flatnonzero(row)} for row in membership]
