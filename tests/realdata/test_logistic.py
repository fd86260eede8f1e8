"""The logistic GLMM (Laplace) and GEE on the MMLU-Pro default subsample against lme4's glmer and
geepack (tests/reference/r_output/mmlu_pro_default_subsample_binary.json)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from evalbars.stats.logistic import contrasts as logistic
from evalbars.stats.logistic import gee, glmm

from ..reference.r_binary_results import R_BINARY
from ..unit.stats.test_logistic import REL, column, fit_cells, r_params


@pytest.mark.realdata
def test_real_subsample_matches_glmer(default_subsample):
    ref = R_BINARY["mmlu_pro_default_subsample"]
    items = default_subsample.items
    ids = "\n".join(str(q) for q in sorted(items["question_id"].unique()))
    assert hashlib.sha256(ids.encode()).hexdigest() == ref["source"]["question_ids_sha256"]
    assert int(items["correct"].sum()) == ref["total_correct"]
    table = glmm.binomial_cells(items)
    fit = fit_cells(table)
    r = ref["glmm_tight"]
    assert list(fit.names) == ref["models"]
    np.testing.assert_allclose(fit.params, [r["fixef"][m] for m in ref["models"]], rtol=REL)
    for component in ("question", "category"):
        assert fit.variance[component] == pytest.approx(r["variance"][component], rel=REL)
    assert fit.loglik == pytest.approx(r["loglik"], rel=1e-6)
    assert fit.laplace_deviance <= r["laplace_deviance_formula"] * (1 + 1e-13)
    at_default = glmm.laplace_deviance(
        table["successes"],
        table["trials"],
        table["model"],
        table["question_id"],
        table["category"],
        r_params(ref["glmm"], ref["models"])[:2],
        r_params(ref["glmm"], ref["models"])[2:],
        ref["models"],
    )
    assert at_default == pytest.approx(ref["glmm"]["laplace_deviance_formula"], rel=1e-12)
    assert at_default == pytest.approx(ref["glmm"]["laplace_deviance_exact"], rel=2e-8)
    contrasts = logistic.glmm_contrasts(fit)
    np.testing.assert_allclose(contrasts.log_odds_ratio_se, column(r["contrasts"], "se"), rtol=REL)
    np.testing.assert_allclose(
        contrasts.accuracy_difference, column(r["marginal_contrasts"], "estimate"), rtol=REL
    )
    # SEs of accuracy differences (small differences of vcov entries) inherit the error of
    # lme4's finite-difference Hessian, here ~1e-4 of its largest entry and 5e-4 in the
    # category-category entry (ours is stable to 1e-7 under changes of step and scheme)
    np.testing.assert_allclose(
        logistic.glmm_contrasts(fit, theta_uncertainty=False).accuracy_difference_se,
        column(r["marginal_contrasts_fixed_theta"], "se"),
        rtol=5e-4,
    )
    np.testing.assert_allclose(
        contrasts.accuracy_difference_se, column(r["marginal_contrasts"], "se"), rtol=5e-4
    )
    gfit = gee.fit_gee(table["successes"], table["trials"], table["model"], table["question_id"])
    np.testing.assert_allclose(
        gfit.params, [ref["gee"]["coef"][m] for m in ref["models"]], rtol=1e-8
    )
    np.testing.assert_allclose(gfit.cov, ref["gee"]["vcov"], rtol=1e-8)
