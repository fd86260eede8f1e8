"""Tests of evalbars.mixed: REML fits of the category and nested mixed models.

Oracles, strongest first:
- lme4 1.1 ``lmer`` + emmeans on the committed synthetic fixtures and on the real default
  subsample (``tests/reference/r_output/*.json``, written by ``make_r_reference.R``);
- lme4's ``Pastes`` example (data of Davies & Goldsmith 1972, as
  shipped with lme4), fitted by the same exact two-strata algebra;
- the dense Gaussian REML likelihood computed with N x N matrices;
- statsmodels' MixedLM likelihood and score evaluated at our estimates;
- exact identities on the real MMLU-Pro data: nested residual variance = RM-ANOVA
  error mean square, contrast SE = sqrt(2 sigma^2 / n), Wald chi^2/(K-1) = RM-ANOVA F.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.regression.mixed_linear_model import MixedLMParams

from evalbars import mixed
from evalbars.items import build_item_table
from evalbars.pairwise import accuracy_order, adjust_pvalues
from evalbars.scores import WideScores, wide_scores

from .reference.r_results import R_RESULTS

DATA = Path(__file__).resolve().parent / "data"
SYNTHETIC = [
    "synthetic_balanced",
    "synthetic_boundary",
    "synthetic_boundary_question",
    "synthetic_incomplete",
]
COMPLETE = SYNTHETIC[:3]


def synthetic_wide(name: str) -> WideScores:
    return wide_scores(pd.read_csv(DATA / f"{name}.csv"))


@pytest.fixture(scope="module")
def subsample_wide(default_subsample) -> WideScores:
    return wide_scores(default_subsample.items)


@pytest.fixture(scope="module")
def full_wide(default_items) -> WideScores:
    return wide_scores(default_items)


def dense_reml(wide: WideScores, variance: dict):
    """-2 REML log-likelihood, GLS fixed effects and their covariance, with N x N matrices."""
    qi, mi = np.nonzero(np.isfinite(wide.scores))
    y = wide.scores[qi, mi]
    cat = wide.category_codes[qi]
    x = np.eye(wide.scores.shape[1])[mi]
    v = (
        variance["residual"] * np.eye(y.size)
        + variance.get("question", 0.0) * (qi[:, None] == qi[None, :])
        + variance["category"] * (cat[:, None] == cat[None, :])
    )
    v_inv = np.linalg.inv(v)
    f = x.T @ v_inv @ x
    beta = np.linalg.solve(f, x.T @ v_inv @ y)
    e = y - x @ beta
    deviance = (
        np.linalg.slogdet(v)[1]
        + np.linalg.slogdet(f)[1]
        + e @ v_inv @ e
        + (y.size - x.shape[1]) * np.log(2 * np.pi)
    )
    return deviance, beta, np.linalg.inv(f)


def rm_anova_error_ms(scores: np.ndarray) -> float:
    """Model x question interaction mean square, straight from the definition."""
    n, k = scores.shape
    resid = scores - scores.mean(1, keepdims=True) - scores.mean(0, keepdims=True) + scores.mean()
    return float(np.sum(resid**2) / ((n - 1) * (k - 1)))


# --- lme4's Pastes --------------------------------------------------------------------

# strength of paste, 10 batches x 3 casks x 2 tests (lme4::Pastes, Davies & Goldsmith 1972)
PASTES = [
    62.8, 62.6, 60.1, 62.3, 62.7, 63.1, 60.0, 61.4, 57.5, 56.9, 61.1, 58.9, 58.7, 57.5, 63.9,
    63.1, 65.4, 63.7, 57.1, 56.4, 56.9, 58.6, 64.7, 64.5, 55.1, 55.1, 54.7, 54.2, 58.8, 57.5,
    63.4, 64.9, 59.3, 58.1, 60.5, 60.0, 62.5, 62.6, 61.0, 58.7, 56.9, 57.7, 59.2, 59.4, 65.2,
    66.0, 64.8, 64.1, 54.8, 54.8, 64.0, 64.0, 57.7, 56.8, 58.3, 59.3, 59.2, 59.2, 58.9, 56.6,
]  # fmt: skip


def test_pastes_matches_lme4():
    """lmer(strength ~ 1 + (1|batch) + (1|batch:cask), Pastes): the published REML fit."""
    tests = np.array(PASTES).reshape(30, 2)  # one row per cask, its two tests
    batch = np.repeat(np.arange(10), 3)
    fixed, cov, est = mixed.exact.fit_exact(tests, batch, "category_question", intercept_only=True)
    assert fixed[0] == pytest.approx(60.0533, abs=5e-5)
    assert np.sqrt(cov[0, 0]) == pytest.approx(0.6769, abs=5e-5)
    assert est["category"] == pytest.approx(1.657, abs=5e-4)
    # printed as 8.433 in the oracle notes and as sd 2.9041 (8.434) by lme4's summary
    assert est["question"] == pytest.approx(8.433, abs=1e-3)
    assert est["residual"] == pytest.approx(0.678, abs=5e-4)
    assert est["deviance"] == pytest.approx(246.99, abs=5e-3)
    # balanced data: REML = the ANOVA estimators, residual = within-cask mean square
    within = np.sum((tests - tests.mean(1, keepdims=True)) ** 2) / 30
    assert est["residual"] == pytest.approx(within, rel=1e-13)


# --- lme4 + emmeans on the synthetic fixtures ------------------------------------------


@pytest.mark.parametrize("name", SYNTHETIC)
@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_matches_lme4_and_emmeans(name, spec):
    ref = R_RESULTS[name]["lmm"][spec]
    wide = synthetic_wide(name)
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == ("exact" if wide.complete else "general")
    assert list(fit.variance) == list(ref["variance"])
    for component, value in ref["variance"].items():
        assert fit.variance[component] == pytest.approx(value, abs=1e-6)
    # lme4's optimiser stops within ~1e-5 of the optimum in the category variance (relative).
    # Where we differ more, our REML criterion is the lower one: lme4 stopped short.
    category = ref["variance"]["category"]
    if category > 0:
        assert fit.variance["category"] == pytest.approx(category, rel=2e-5)
    assert fit.reml_criterion <= ref["reml_criterion"] + 1e-9
    assert fit.reml_criterion == pytest.approx(ref["reml_criterion"], rel=1e-12)
    assert any(fit.boundary.values()) == ref["singular"]
    fixef = np.array([ref["fixef"][m] for m in fit.models])
    np.testing.assert_allclose(fit.fixed, fixef, atol=1e-6)
    order = [ref["models"].index(m) for m in fit.models]
    # the common (level) part of vcov moves with the category variance: 1e-7 tracks lme4's
    # own tolerance there; contrast SEs below do not depend on it and agree to 1e-6 and better
    np.testing.assert_allclose(fit.cov, np.array(ref["vcov"])[np.ix_(order, order)], atol=1e-7)

    table = mixed.lmm_contrasts(fit).set_index(["model_a", "model_b"])
    assert len(table) == len(ref["contrasts"]) == 6
    for rc in ref["contrasts"]:
        # emmeans lists level i - level j in alphabetical order; we list better - worse
        key, sign = (rc["model_a"], rc["model_b"]), 1.0
        if key not in table.index:
            key, sign = key[::-1], -1.0
        row = table.loc[key]
        assert sign * row["estimate"] == pytest.approx(rc["estimate"], abs=1e-6)
        assert row["se"] == pytest.approx(rc["se"], abs=1e-6)
        assert abs(row["z"]) == pytest.approx(abs(rc["z"]), abs=1e-4)
        for ours, theirs in [
            ("p", "p_none"),
            ("p_bonferroni", "p_bonferroni"),
            ("p_holm", "p_holm"),
            ("p_tukey", "p_tukey"),
        ]:
            assert row[ours] == pytest.approx(rc[theirs], abs=1e-6), ours


@pytest.mark.parametrize("name", SYNTHETIC)
@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_deviance_function_matches_lme4_at_its_estimates(name, spec):
    """Our -2 l_R evaluated at lme4's variances reproduces lme4's REMLcrit (no optimiser)."""
    ref = R_RESULTS[name]["lmm"][spec]
    wide = synthetic_wide(name)
    data = mixed.general.general_data(mixed.common.prepare(wide, spec))
    assert mixed.general.general_deviance(ref["variance"], data) == pytest.approx(
        ref["reml_criterion"], rel=1e-12
    )


def test_lme4_reference_on_real_subsample(subsample_wide):
    ref = R_RESULTS["mmlu_pro_default_subsample"]
    assert ref["n_questions"] == subsample_wide.scores.shape[0] == 1497
    accuracy = dict(zip(subsample_wide.models, subsample_wide.scores.mean(0), strict=True))
    for model, value in ref["accuracy"].items():
        assert accuracy[model] == pytest.approx(value, abs=1e-12)
    for spec in mixed.MODEL_SPECS:
        lme4 = ref["lmm"][spec]
        fit = mixed.fit_lmm(subsample_wide, spec)
        assert fit.method == "exact"
        for component, value in lme4["variance"].items():
            assert fit.variance[component] == pytest.approx(value, abs=1e-6)
            assert fit.variance[component] == pytest.approx(value, rel=1e-5)
        assert fit.reml_criterion <= lme4["reml_criterion"] + 1e-9
        se = {(c["model_a"], c["model_b"]): c["se"] for c in lme4["contrasts"]}
        ours = mixed.lmm_contrasts(fit)
        for a, b, s in ours[["model_a", "model_b", "se"]].itertuples(index=False):
            assert s == pytest.approx(se.get((a, b), se.get((b, a))), abs=1e-6)


# --- independent implementations agree -------------------------------------------------


@pytest.mark.parametrize("name", SYNTHETIC)
@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_reml_criterion_and_gls_equal_dense_computation(name, spec):
    wide = synthetic_wide(name)
    methods = ["exact", "general"] if wide.complete else ["general"]
    for method in methods:
        fit = mixed.fit_lmm(wide, spec, method)
        deviance, beta, cov = dense_reml(wide, fit.variance)
        assert fit.reml_criterion == pytest.approx(deviance, rel=1e-12)
        np.testing.assert_allclose(fit.fixed, beta, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fit.cov, cov, rtol=1e-10)


@pytest.mark.parametrize("name", COMPLETE)
@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_exact_path_equals_general_path(name, spec):
    wide = synthetic_wide(name)
    exact = mixed.fit_lmm(wide, spec, "exact")
    general = mixed.fit_lmm(wide, spec, "general")
    assert (exact.method, general.method) == ("exact", "general")
    for component in exact.variance:
        assert exact.variance[component] == pytest.approx(general.variance[component], abs=1e-10)
    assert exact.boundary == general.boundary
    assert exact.reml_criterion == pytest.approx(general.reml_criterion, rel=1e-13)
    np.testing.assert_allclose(exact.fixed, general.fixed, atol=1e-10)
    np.testing.assert_allclose(exact.cov, general.cov, rtol=1e-8)


def test_analytic_gradient_matches_finite_differences():
    wide = synthetic_wide("synthetic_incomplete")
    data = mixed.general.general_data(mixed.common.prepare(wide, "category_question"))
    gamma = np.array([0.3, 0.1])
    _, grad = mixed.general.profiled(gamma, data, "category_question")
    h = 1e-6
    numeric = [
        (
            mixed.general.profiled(gamma + h * e, data, "category_question")[0]
            - mixed.general.profiled(gamma - h * e, data, "category_question")[0]
        )
        / (2 * h)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def assert_statsmodels_optimum(frame: pd.DataFrame, fit: mixed.LmmFit) -> None:
    """statsmodels' own REML log-likelihood at our estimates: same value, zero score."""
    frame = frame[["model", "question_id", "category", "correct"]].copy()
    frame["correct"] = frame["correct"].astype(float)
    frame["model"] = pd.Categorical(frame["model"], categories=fit.models)
    kwargs = {"groups": "category", "re_formula": "1", "use_sparse": True}
    if fit.model_spec == "category_question":
        kwargs["vc_formula"] = {"question": "0 + C(question_id)"}
    model = smf.mixedlm("correct ~ 0 + C(model)", frame, **kwargs)
    # what MixedLM.fit sets before it evaluates the likelihood
    model.reml, model.cov_pen, model.fe_pen, model._cov_sing, model._freepat = (
        True, None, None, 0, None,
    )  # fmt: skip
    sigma2 = fit.variance["residual"]
    params = MixedLMParams.from_components(
        fe_params=fit.fixed,
        cov_re=np.array([[fit.variance["category"] / sigma2]]),
        vcomp=np.array([fit.variance["question"] / sigma2]) if "question" in fit.variance else None,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert -2 * model.loglike(params) == pytest.approx(fit.reml_criterion, rel=1e-12)
        np.testing.assert_allclose(model.score(params), 0.0, atol=1e-9)


@pytest.mark.parametrize("name", ["synthetic_balanced", "synthetic_incomplete"])
@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_statsmodels_likelihood_agrees_and_is_stationary_at_our_fit(name, spec):
    frame = pd.read_csv(DATA / f"{name}.csv")
    assert_statsmodels_optimum(frame, mixed.fit_lmm(wide_scores(frame), spec))


@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_general_path_on_real_incomplete_data(spec, default_raw, default_subsample):
    """The subsample with unparsed predictions dropped (16% of cells): the general path's
    optimum is statsmodels' REML optimum."""
    items = build_item_table(default_raw, "exclude")
    items = items[items["question_id"].isin(default_subsample.questions["question_id"])]
    wide = wide_scores(items)
    assert not wide.complete
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == "general" and not any(fit.boundary.values())
    assert_statsmodels_optimum(items, fit)


def test_statsmodels_fit_of_its_own_is_no_better_than_ours():
    """statsmodels' MixedLM, fitted on its own (two optimisers, the better kept), reaches at best
    the REML criterion of our fit: its variance components agree to 1e-4 and its criterion is
    not lower. (Its optimisers stop early on some data, e.g. the real subsample's category-only
    model; that is why it is an oracle here and not a fitting path.)"""
    frame = pd.read_csv(DATA / "synthetic_balanced.csv")
    ours = mixed.fit_lmm(wide_scores(frame), "category")
    frame["model"] = pd.Categorical(frame["model"], categories=ours.models)
    # re_formula="1" is required: without it statsmodels drops the category intercept.
    model = smf.mixedlm(
        "correct ~ 0 + C(model)", frame, groups="category", re_formula="1", use_sparse=True
    )
    fits = []
    for method in ("bfgs", "lbfgs"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fits.append(model.fit(reml=True, method=method, maxiter=2000))
            except np.linalg.LinAlgError:  # a singular step on the way; the other may succeed
                continue
    best = max(fits, key=lambda fit: fit.llf)
    assert -2 * best.llf >= ours.reml_criterion - 1e-9
    assert float(best.scale) == pytest.approx(ours.variance["residual"], rel=1e-4)
    assert float(best.cov_re.iloc[0, 0]) == pytest.approx(ours.variance["category"], rel=1e-4)
    np.testing.assert_allclose(best.fe_params, ours.fixed, atol=1e-6)


# --- boundaries --------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["exact", "general"])
def test_category_variance_on_the_boundary(method):
    """Category means all exactly 0.5: tau^2 = 0 exactly, flagged, in both models."""
    wide = synthetic_wide("synthetic_boundary")
    for spec in mixed.MODEL_SPECS:
        fit = mixed.fit_lmm(wide, spec, method)
        assert fit.variance["category"] == 0.0
        assert fit.boundary["category"] and not fit.boundary["residual"]
    # with tau^2 = 0 the category-only model is ordinary least squares
    ols = mixed.fit_lmm(wide, "category", method)
    n, k = wide.scores.shape
    resid = wide.scores - wide.scores.mean(0)
    assert ols.variance["residual"] == pytest.approx(np.sum(resid**2) / (n * k - k), rel=1e-12)


@pytest.mark.parametrize("method", ["exact", "general"])
def test_question_variance_on_the_boundary(method):
    """Question means constant within categories: sigma_q^2 = 0, and then the nested fit is
    the category-only fit (the strata couple through phi = sigma^2 / K)."""
    wide = synthetic_wide("synthetic_boundary_question")
    nested = mixed.fit_lmm(wide, "category_question", method)
    category = mixed.fit_lmm(wide, "category", method)
    assert nested.variance["question"] == 0.0
    assert nested.boundary == {"category": False, "question": True, "residual": False}
    assert nested.variance["category"] == pytest.approx(category.variance["category"], rel=1e-9)
    assert nested.variance["residual"] == pytest.approx(category.variance["residual"], rel=1e-9)
    assert nested.reml_criterion == pytest.approx(category.reml_criterion, rel=1e-12)
    # the RM-ANOVA shortcut sigma^2 = MS_error does not hold on this boundary; sigma^2 pools
    # the within-question and the question-mean strata instead
    assert nested.variance["residual"] != pytest.approx(rm_anova_error_ms(wide.scores), rel=0.01)


# --- real-data identities ------------------------------------------------------------


@pytest.mark.parametrize("which", ["subsample", "full"])
def test_real_data_identities(which, subsample_wide, full_wide):
    wide = subsample_wide if which == "subsample" else full_wide
    scores = wide.scores
    n, k = scores.shape
    assert wide.complete and k == 6
    nested = mixed.fit_lmm(wide, "category_question")
    assert nested.method == "exact" and not any(nested.boundary.values())
    ms_error = rm_anova_error_ms(scores)
    assert nested.variance["residual"] == pytest.approx(ms_error, rel=1e-12)
    contrasts = mixed.lmm_contrasts(nested)
    np.testing.assert_allclose(contrasts["se"], np.sqrt(2 * ms_error / n), rtol=1e-12)
    # estimates are the differences of observed accuracies (within-question OLS = GLS)
    accuracy = dict(zip(wide.models, scores.mean(0), strict=True))
    diff = contrasts["model_a"].map(accuracy) - contrasts["model_b"].map(accuracy)
    np.testing.assert_allclose(contrasts["estimate"], diff, atol=1e-12)
    assert (contrasts["estimate"] >= 0).all()
    # Wald chi^2 / (K - 1) for equal means = RM-ANOVA F
    contrast_matrix = np.eye(k)[:-1] - np.eye(k)[1:]
    delta = contrast_matrix @ nested.fixed
    wald = delta @ np.linalg.solve(contrast_matrix @ nested.cov @ contrast_matrix.T, delta)
    ms_model = n * np.sum((scores.mean(0) - scores.mean()) ** 2) / (k - 1)
    assert wald / (k - 1) == pytest.approx(ms_model / ms_error, rel=1e-10)
    # the category-only model's contrast SE uses its larger residual (question variance in it)
    category = mixed.fit_lmm(wide, "category")
    se_category = mixed.lmm_contrasts(category)["se"].to_numpy()
    np.testing.assert_allclose(se_category, np.sqrt(2 * category.variance["residual"] / n))
    assert se_category[0] > 1.15 * contrasts["se"].iloc[0]


def test_exact_equals_general_on_real_subsample(subsample_wide):
    for spec in mixed.MODEL_SPECS:
        exact = mixed.fit_lmm(subsample_wide, spec, "exact")
        general = mixed.fit_lmm(subsample_wide, spec, "general")
        for component in exact.variance:
            assert general.variance[component] == pytest.approx(exact.variance[component], rel=1e-7)
        assert general.reml_criterion == pytest.approx(exact.reml_criterion, rel=1e-12)


# --- contrasts table ------------------------------------------------------------------


def test_contrast_table_conventions():
    wide = synthetic_wide("synthetic_balanced")
    fit = mixed.fit_lmm(wide, "category_question")
    table = mixed.lmm_contrasts(fit, alpha=0.1)
    assert list(table.columns[:10]) == [
        "model_spec", "model_a", "model_b", "estimate", "se", "z", "p",
        "p_bonferroni", "p_holm", "p_tukey",
    ]  # fmt: skip
    order = accuracy_order(wide)
    assert fit.order == order
    assert [(a, b) for a, b in zip(table.model_a, table.model_b, strict=True)] == [
        (order[i], order[j]) for i in range(4) for j in range(i + 1, 4)
    ]
    np.testing.assert_allclose(table["p"], 2 * stats.norm.sf(np.abs(table["z"])))
    np.testing.assert_allclose(table["p_holm"], adjust_pvalues(table["p"], "holm"))
    np.testing.assert_allclose(table["p_bonferroni"], adjust_pvalues(table["p"], "bonferroni"))
    half = table["ci_high"] - table["estimate"]
    np.testing.assert_allclose(half, stats.norm.isf(0.05) * table["se"])
    components = mixed.variance_components([fit, mixed.fit_lmm(wide, "category")])
    assert components[["model_spec", "component"]].values.tolist() == [
        ["category_question", "category"],
        ["category_question", "question"],
        ["category_question", "residual"],
        ["category", "category"],
        ["category", "residual"],
    ]
    assert set(components["method"]) == {"exact"}


def _fit_with(fixed, cov):
    k = len(fixed)
    models = [f"m{i}" for i in range(k)]
    return mixed.LmmFit(
        model_spec="category", method="exact", models=models, fixed=np.asarray(fixed, float),
        cov=np.asarray(cov, float), variance={}, boundary={}, reml_criterion=0.0, n_obs=0,
        n_questions=0, n_categories=0, order=models,
    )  # fmt: skip


def test_tukey_p_against_demsar_critical_value():
    """Demsar (2006) Table 5: q_0.05 = 2.850 for k = 6 (studentized range / sqrt 2, df = inf),
    so a contrast with |z| = 2.850 has a Tukey-type p of 0.05."""
    fixed = [2.850, 0, 0.1, 0.2, 0.3, 0.4]
    table = mixed.lmm_contrasts(_fit_with(fixed, np.eye(6) / 2))  # contrast SE = 1
    first = table.iloc[0]
    assert (first.model_a, first.model_b, first.z) == ("m0", "m1", pytest.approx(2.850))
    assert first.p_tukey == pytest.approx(0.05, abs=2e-4)


def test_tukey_p_equals_unadjusted_p_for_two_models():
    table = mixed.lmm_contrasts(_fit_with([0.3, 0.1], [[0.01, 0.002], [0.002, 0.02]]))
    assert table.p_tukey.iloc[0] == pytest.approx(table.p.iloc[0], rel=1e-6)


# --- input checks --------------------------------------------------------------------


def test_refuses_what_it_cannot_fit():
    incomplete = synthetic_wide("synthetic_incomplete")
    with pytest.raises(ValueError, match="exact path needs every model"):
        mixed.fit_lmm(incomplete, "category", method="exact")
    with pytest.raises(ValueError, match="model_spec"):
        mixed.fit_lmm(incomplete, "question")
    with pytest.raises(ValueError, match="method"):
        mixed.fit_lmm(incomplete, "category", method="lme4")
    one = WideScores(
        scores=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        models=["a", "b"],
        question_ids=np.arange(3),
        categories=np.array(["x", "x", "x"]),
    )
    with pytest.raises(ValueError, match="at least two categories"):
        mixed.fit_lmm(one, "category")


def test_category_model_is_fitted_when_models_never_disagree():
    # Identical columns leave no within-question variation: the nested model cannot split
    # question from residual variance, but the category-only model is defined, and the exact
    # path must agree with the general one.
    rng = np.random.default_rng(1)
    column = (rng.random(30) < 0.5).astype(float)
    categories = np.array(list("abc"))[np.arange(30) % 3]
    wide = WideScores(np.column_stack([column] * 3), ["m1", "m2", "m3"], np.arange(30), categories)
    exact = mixed.fit_lmm(wide, "category", "exact")
    general = mixed.fit_lmm(wide, "category", "general")
    assert exact.variance["residual"] > 0
    for component in ("category", "residual"):
        assert exact.variance[component] == pytest.approx(general.variance[component], rel=1e-9)
    assert exact.reml_criterion == pytest.approx(general.reml_criterion, rel=1e-12)
    with pytest.raises(ValueError, match="no within-question variation"):
        mixed.fit_lmm(wide, "category_question", "exact")
