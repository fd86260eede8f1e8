"""Omnibus tests on the MMLU-Pro default subsample: the closed forms against R
(tests/reference/make_r_reference.R), and identities: Cochran's Q = the tie-corrected Friedman
statistic, the nested mixed model's residual = RM-ANOVA's error mean square, blocking raises F."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbars.stats import mixed, omnibus

from ..unit.stats.test_omnibus import test_closed_forms_match_r as closed_forms_match_r


@pytest.mark.parametrize("name", ["mmlu_pro_default_subsample"])
def test_closed_forms_match_r(name, reference_wide):
    closed_forms_match_r(name, reference_wide)


def test_real_cochran_q_equals_tie_corrected_friedman(real_wide):
    q = omnibus.cochran_q(real_wide.scores).statistic
    assert omnibus.friedman(real_wide.scores).statistic == pytest.approx(q, rel=1e-12)
    assert stats.friedmanchisquare(*real_wide.scores.T).statistic == pytest.approx(q, rel=1e-10)


def test_real_nested_lmm_matches_rm_anova(real_wide):
    # Exact identities in balanced complete data: residual variance = RM-ANOVA MS_error; every contrast SE = sqrt(2 sigma^2 / n);
    # Wald chi-square / (K - 1) = RM-ANOVA F.
    rm = omnibus.rm_anova(real_wide.scores)
    fit = mixed.fit_lmm(real_wide, "category_question", "exact")
    sigma2 = fit.variance["residual"]
    assert sigma2 == pytest.approx(float(rm.ms_error), rel=1e-8)
    contrasts = mixed.lmm_contrasts(fit)
    n = real_wide.scores.shape[0]
    np.testing.assert_allclose(contrasts["se"], np.sqrt(2 * sigma2 / n), rtol=1e-8)
    k = len(fit.names)
    contrast = np.eye(k)[:-1] - np.eye(k)[1:]
    beta = contrast @ fit.params
    wald = beta @ np.linalg.solve(contrast @ fit.cov @ contrast.T, beta)
    assert wald / (k - 1) == pytest.approx(float(rm.f), rel=1e-8)


def test_real_blocking_raises_f(real_wide):
    # Question variance inflates the one-way error term, so the blocked F is larger.
    rm = omnibus.rm_anova(real_wide.scores)
    one = omnibus.oneway_anova(real_wide.scores)
    assert (rm.df1, rm.df2, one.df2) == (5, 1496 * 5, 6 * 1497 - 6)
    assert rm.f > one.f
    assert rm.ms_error < one.ss_within / one.df2
