"""Category-by-category pairs and the model x category interaction on the MMLU-Pro default
subsample."""

from __future__ import annotations

import hashlib

import pytest

from evalbars.readings.category_pairwise import (
    category_pairwise_table,
    category_summary,
    interaction_test,
)

from ..unit.readings.test_category_pairwise import r_interaction


def test_interaction_matches_lme4_on_the_default_subsample(real_wide):
    ref = r_interaction("mmlu_pro_default_subsample")
    ids = "\n".join(str(q) for q in sorted(real_wide.question_ids))
    assert hashlib.sha256(ids.encode()).hexdigest() == ref["source"]["question_ids_sha256"]
    got = interaction_test(real_wide)
    assert got["lrt"] == pytest.approx(ref["lrt"]["chisq"], rel=1e-5)
    assert got["lrt_p"] == pytest.approx(ref["lrt"]["p"], rel=1e-4)
    assert got["f"] == pytest.approx(ref["split_plot_f"]["f"], rel=1e-10)


def test_summary_counts_naive_wins_and_survivors(real_wide):
    table = category_pairwise_table(real_wide)
    summary = category_summary(table, real_wide)
    pairs = summary[summary["test"] == "discordant split"]
    assert len(pairs) == 15 and (pairs[["wins_a", "wins_b", "ties"]].sum(axis=1) == 14).all()
    total = summary[summary["model_a"] == "all pairs"].iloc[0]
    assert total["wins_a"] + total["wins_b"] + total["ties"] == len(table) == 14 * 15
    assert total["significant_holm"] == table["significant_holm"].sum()
    # Many naive category wins; almost none survive a correction over all 210 tests.
    assert total["wins_a"] > 100 and total["significant_holm"] <= 2
    assert total["significant_mcnemar"] > total["significant_bh"] >= total["significant_holm"]
