"""Pairwise tables on the MMLU-Pro default subsample: counts and McNemar's test against R
(tests/reference/make_r_reference.R), and the paired z against McNemar's discordant counts."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from evalbars.stats import pairwise

from ..unit.stats.test_pairwise import test_counts_and_mcnemar_match_r as counts_and_mcnemar_match_r


@pytest.mark.parametrize("name", ["mmlu_pro_default_subsample"])
def test_counts_and_mcnemar_match_r(name, reference_wide):
    counts_and_mcnemar_match_r(name, reference_wide)


def test_real_paired_z_squared_mcnemar_identity(real_wide):
    # Exact identity (ddof = 0, our convention, so no (n - 1)/n factor):
    # z_paired^2 = (b - c)^2 / ((b + c) - (b - c)^2 / n).
    table = pairwise.pairwise_table(real_wide)
    assert len(table) == 15 and (table["n"] == 1497).all()
    b, c, n = table["n10"], table["n01"], table["n"]
    np.testing.assert_allclose(
        table["z_paired"] ** 2, (b - c) ** 2 / ((b + c) - (b - c) ** 2 / n), rtol=1e-12
    )
    np.testing.assert_allclose(table["diff"], (b - c) / n, rtol=1e-12)
    assert (table["diff"] >= 0).all()
    # Pairing helps on every pair: the models agree on most questions.
    assert (table["se_paired"] < table["se_unpaired"]).all()
    for row in table.itertuples():
        expected = mcnemar([[0, row.n10], [row.n01, 0]], exact=True).pvalue
        assert row.p_mcnemar == pytest.approx(expected, rel=1e-10)
