"""The compact letter display on the MMLU-Pro default subsample, against R's multcompView
(tests/reference/r_output/letters/letters.json)."""

from __future__ import annotations

from evalbars.readings.leaderboard import letters
from evalbars.stats import pairwise

from ..unit.readings.test_letters import R_LETTERS, _membership


def test_default_subsample_all_15_pairs_valid_and_as_many_letters_as_r(real_wide):
    pairs = pairwise.pairwise_table(real_wide, 0.05)
    assert len(pairs) == 15
    ref = R_LETTERS["subsample"]
    assert list(pairs["model_a"].unique()) + [pairs["model_b"].iloc[-1]] == ref["models"]
    separated_now = sorted(
        f"{a}|{b}"
        for a, b, p in zip(pairs.model_a, pairs.model_b, pairs.p_holm, strict=True)
        if p < 0.05
    )
    assert separated_now == sorted(ref["separated"])  # the p-values R saw
    table = letters.letters_table(real_wide, 0.05)
    separated = letters.separated_matrix(
        ref["models"], pairs.model_a, pairs.model_b, pairs.p_holm < 0.05
    )
    valid = letters.letters_valid(_membership(list(table["letters"])), separated)
    assert valid.all() and valid.size == 36  # 15 pairs, both ways, and the diagonal
    assert table.letters_count[0] <= ref["letters_count"]
    assert list(table["model"]) == ref["models"] and list(table["letters"]) == ref["letters"]
