"""Tests of evalbars.stats.mixed: REML fits of the category and nested mixed models.

Oracles, strongest first:
- lme4 1.1 ``lmer`` + emmeans on the committed synthetic fixtures, on the real default
  subsample and on the epoch fixtures (``tests/reference/r_output/*.json``, written by
  ``make_r_reference.R``), and lme4 on all 29 mirrored archives (``fit_all_archives.R``);
- lme4's ``Pastes`` example (data of Davies & Goldsmith 1972, as
  shipped with lme4), fitted by the same exact two-strata algebra;
- the dense Gaussian REML likelihood computed with N x N matrices (one row per sample);
- statsmodels' MixedLM likelihood and score evaluated at our estimates;
- exact identities on the real MMLU-Pro data: nested residual variance = RM-ANOVA
  error mean square, contrast SE = sqrt(2 sigma^2 / n), Wald chi^2/(K-1) = RM-ANOVA F.

The oracles on the MMLU-Pro archives run in the real-data tier: tests/realdata/test_mixed.py.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import linalg, stats
from statsmodels.regression.mixed_linear_model import MixedLMParams

from evalbars.data.scores import WideScores, wide_scores
from evalbars.stats import mixed
from evalbars.stats.pairwise import accuracy_order, adjust_pvalues

from ...reference.r_results import R_RESULTS

DATA = Path(__file__).resolve().parents[2] / "data"
SYNTHETIC = [
    "synthetic_balanced",
    "synthetic_boundary",
    "synthetic_boundary_question",
    "synthetic_incomplete",
]
COMPLETE = SYNTHETIC[:3]
#: Repeated samples per cell: complete and balanced (exact path), and unbalanced (general path).
EPOCHS = ["synthetic_epochs_balanced", "synthetic_epochs"]
ALL_SPECS = mixed.MODEL_SPECS + mixed.EPOCH_SPECS


def synthetic_wide(name: str) -> WideScores:
    return wide_scores(pd.read_csv(DATA / f"{name}.csv"))


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


def assert_matches_lme4(fit: mixed.LmmFit, ref: dict) -> None:
    """Variances, REML criterion, fixed effects, vcov and every emmeans contrast of ``fit``
    against lme4's ``ref`` (one entry of ``R_RESULTS[name]["lmm"]``)."""
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
    fixef = np.array([ref["fixef"][m] for m in fit.names])
    np.testing.assert_allclose(fit.params, fixef, atol=1e-6)
    order = [ref["models"].index(m) for m in fit.names]
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
def test_matches_lme4_and_emmeans(name, spec):
    wide = synthetic_wide(name)
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == ("exact" if wide.complete else "general")
    assert_matches_lme4(fit, R_RESULTS[name]["lmm"][spec])


@pytest.mark.parametrize("name", EPOCHS)
@pytest.mark.parametrize("spec", ALL_SPECS)
def test_epochs_match_lme4_and_emmeans(name, spec):
    """Repeated samples per cell: the three models on every sample, against lmer fitted with
    tight optimiser tolerances (so that lme4 is at the optimum to ~1e-8)."""
    wide = synthetic_wide(name)
    assert wide.has_repeats and mixed.model_specs(wide) == ALL_SPECS
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == ("exact" if name == "synthetic_epochs_balanced" else "general")
    ref = R_RESULTS[name]["lmm"][spec]
    assert fit.n_obs == R_RESULTS[name]["n_rows"]
    assert_matches_lme4(fit, ref)
    for component, value in ref["variance"].items():
        assert fit.variance[component] == pytest.approx(value, rel=1e-5, abs=0)
    assert fit.reml_criterion == pytest.approx(ref["reml_criterion"], rel=1e-10)


@pytest.mark.parametrize(
    "name, spec",
    [(n, s) for n in SYNTHETIC for s in mixed.MODEL_SPECS]
    + [(n, s) for n in EPOCHS for s in ALL_SPECS],
)
def test_deviance_function_matches_lme4_at_its_estimates(name, spec):
    """Our -2 l_R evaluated at lme4's variances reproduces lme4's REMLcrit (no optimiser)."""
    ref = R_RESULTS[name]["lmm"][spec]
    wide = synthetic_wide(name)
    data = mixed.general.general_data(mixed.common.prepare(wide, spec))
    assert mixed.general.general_deviance(ref["variance"], data) == pytest.approx(
        ref["reml_criterion"], rel=1e-12
    )


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
        np.testing.assert_allclose(fit.params, beta, rtol=0, atol=1e-12)
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
    np.testing.assert_allclose(exact.params, general.params, atol=1e-10)
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
    frame["model"] = pd.Categorical(frame["model"], categories=fit.names)
    kwargs = {"groups": "category", "re_formula": "1", "use_sparse": True}
    # variance components within category groups; statsmodels orders them by name
    vc = {"question": "0 + C(question_id)", "question_model": "0 + C(cell)"}
    vc = {name: formula for name, formula in vc.items() if name in fit.variance}
    if vc:
        kwargs["vc_formula"] = vc
    frame["cell"] = frame["question_id"].astype(str) + ":" + frame["model"].astype(str)
    model = smf.mixedlm("correct ~ 0 + C(model)", frame, **kwargs)
    # what MixedLM.fit sets before it evaluates the likelihood
    model.reml, model.cov_pen, model.fe_pen, model._cov_sing, model._freepat = (
        True, None, None, 0, None,
    )  # fmt: skip
    sigma2 = fit.variance["residual"]
    params = MixedLMParams.from_components(
        fe_params=fit.params,
        cov_re=np.array([[fit.variance["category"] / sigma2]]),
        vcomp=np.array([fit.variance[name] / sigma2 for name in sorted(vc)]) if vc else None,
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


def test_statsmodels_fit_of_its_own_is_no_better_than_ours():
    """statsmodels' MixedLM, fitted on its own (two optimisers, the better kept), reaches at best
    the REML criterion of our fit: its variance components agree to 1e-4 and its criterion is
    not lower. (Its optimisers stop early on some data, e.g. the real subsample's category-only
    model; that is why it is an oracle here and not a fitting path.)"""
    frame = pd.read_csv(DATA / "synthetic_balanced.csv")
    ours = mixed.fit_lmm(wide_scores(frame), "category")
    frame["model"] = pd.Categorical(frame["model"], categories=ours.names)
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
    np.testing.assert_allclose(best.fe_params, ours.params, atol=1e-6)


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
        model_spec="category", method="exact", names=models, params=np.asarray(fixed, float),
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
        mixed.fit_lmm(incomplete, "nested")
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
    assert mixed.model_specs(one) == ("question",)


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


# --- repeated samples per cell (epochs) ------------------------------------------------


def epochs_frame(seed: int, question_sd: float, interaction_sd: float, n_questions=60, n_rep=3):
    """Long table with an epoch column: 4 models, 5 categories, ``n_rep`` Bernoulli samples per
    cell from a logistic model with category, question and model-by-question effects."""
    rng = np.random.default_rng(seed)
    category = np.arange(n_questions) % 5
    logit = (
        np.array([0.4, 0.1, 0.0, -0.3])[None, :]
        + rng.normal(0, 0.5, 5)[category][:, None]
        + rng.normal(0, question_sd, n_questions)[:, None]
        + rng.normal(0, interaction_sd, (n_questions, 4))
    )
    y = rng.random((n_questions, 4, n_rep)) < 1 / (1 + np.exp(-logit))[:, :, None]
    q, m, e = (i.ravel() for i in np.indices(y.shape))
    return pd.DataFrame(
        {
            "model": np.array(["A", "B", "C", "D"])[m],
            "question_id": q,
            "category": np.array(list("abcde"))[category[q]],
            "epoch": e,
            "correct": y.ravel().astype(int),
        }
    )


def dense_reml_samples(frame: pd.DataFrame, models: list, variance: dict):
    """-2 REML log-likelihood, GLS fixed effects and their covariance of the sample-level model,
    straight from the definition with N x N matrices (N samples)."""
    q = pd.factorize(frame["question_id"])[0]
    c = pd.factorize(frame["category"])[0]
    m = pd.Index(models).get_indexer(frame["model"])
    cell = q * len(models) + m
    y = frame["correct"].to_numpy(float)
    x = np.eye(len(models))[m]
    v = (
        variance["residual"] * np.eye(y.size)
        + variance.get("question", 0.0) * (q[:, None] == q[None, :])
        + variance.get("question_model", 0.0) * (cell[:, None] == cell[None, :])
        + variance["category"] * (c[:, None] == c[None, :])
    )
    chol = linalg.cho_factor(v)
    v_inv_x, v_inv_y = linalg.cho_solve(chol, x), linalg.cho_solve(chol, y)
    f = x.T @ v_inv_x
    beta = np.linalg.solve(f, x.T @ v_inv_y)
    deviance = (
        2 * np.sum(np.log(np.diag(chol[0])))
        + np.linalg.slogdet(f)[1]
        + y @ v_inv_y
        - beta @ (x.T @ v_inv_y)
        + (y.size - x.shape[1]) * np.log(2 * np.pi)
    )
    return deviance, beta, np.linalg.inv(f)


@pytest.mark.parametrize(
    "name, spec, method",
    [("synthetic_epochs", spec, "general") for spec in ALL_SPECS]
    + [("synthetic_epochs_balanced", "category_question_model", "exact")],
)
def test_epochs_reml_criterion_and_gls_equal_dense_computation(name, spec, method):
    """The cell-weight reduction (cell means, weights 1/(gamma_w + 1/n), within-cell squares)
    is the sample-level likelihood: same -2 l_R, GLS estimates and covariance."""
    frame = pd.read_csv(DATA / f"{name}.csv")
    fit = mixed.fit_lmm(wide_scores(frame), spec, method)
    deviance, beta, cov = dense_reml_samples(frame, fit.names, fit.variance)
    assert fit.reml_criterion == pytest.approx(deviance, rel=1e-12)
    np.testing.assert_allclose(fit.params, beta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.cov, cov, rtol=1e-10)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_epochs_exact_path_equals_general_path(spec):
    wide = synthetic_wide("synthetic_epochs_balanced")
    exact = mixed.fit_lmm(wide, spec, "exact")
    general = mixed.fit_lmm(wide, spec, "general")
    for component in exact.variance:
        assert exact.variance[component] == pytest.approx(general.variance[component], abs=1e-10)
    assert exact.boundary == general.boundary
    assert exact.reml_criterion == pytest.approx(general.reml_criterion, rel=1e-13)
    np.testing.assert_allclose(exact.params, general.params, atol=1e-10)
    np.testing.assert_allclose(exact.cov, general.cov, rtol=1e-8)


@pytest.mark.parametrize(
    "seed, question_sd, interaction_sd, at_zero",
    [
        (1, 1.0, 0.8, set()),  # interior: the three strata separate
        (1, 1.0, 0.0, {"question_model"}),  # within-cell and within-question strata pool
        (1, 0.0, 0.8, {"question"}),  # within-question stratum and question means pool
        (0, 0.0, 0.0, {"question", "question_model"}),  # all three pool
        (0, 1.0, 0.8, {"category"}),
        (0, 1.0, 0.0, {"question_model", "category"}),
    ],
)
def test_epochs_boundaries_exact_equals_general(seed, question_sd, interaction_sd, at_zero):
    """Every face of the three-term model: the closed form and the general path agree, and on
    a face the fit is the smaller model's (sigma_w^2 = 0: the nested model on all samples)."""
    wide = wide_scores(epochs_frame(seed, question_sd, interaction_sd))
    exact = mixed.fit_lmm(wide, "category_question_model", "exact")
    general = mixed.fit_lmm(wide, "category_question_model", "general")
    assert {c for c, zero in exact.boundary.items() if zero} == at_zero
    assert general.boundary == exact.boundary
    for component in exact.variance:
        assert general.variance[component] == pytest.approx(exact.variance[component], abs=1e-10)
    assert general.reml_criterion == pytest.approx(exact.reml_criterion, rel=1e-12)
    if "question_model" in at_zero:
        nested = mixed.fit_lmm(wide, "category_question", "exact")
        for component, value in nested.variance.items():
            assert exact.variance[component] == pytest.approx(value, rel=1e-9, abs=1e-15)
        assert exact.reml_criterion == pytest.approx(nested.reml_criterion, rel=1e-12)


def test_epochs_balanced_closed_forms():
    """Interior three-term fit on complete, balanced epochs: residual = within-cell mean square,
    sigma_w^2 + sigma^2/n = the cell means' RM-ANOVA error mean square, contrast SE =
    sqrt(2 (sigma_w^2 + sigma^2/n) / Q), contrasts = accuracy gaps."""
    frame = pd.read_csv(DATA / "synthetic_epochs_balanced.csv")
    wide = wide_scores(frame)
    fit = mixed.fit_lmm(wide, "category_question_model")
    assert fit.method == "exact" and not any(fit.boundary.values())
    q, k = wide.scores.shape
    n = 3
    assert (wide.sample_counts == n).all()
    ms_cells = frame.groupby(["question_id", "model"])["correct"].var(ddof=1).mean()
    assert fit.variance["residual"] == pytest.approx(ms_cells, rel=1e-12)
    cell = rm_anova_error_ms(wide.scores)
    assert fit.variance["question_model"] + fit.variance["residual"] / n == pytest.approx(
        cell, rel=1e-12
    )
    contrasts = mixed.lmm_contrasts(fit)
    np.testing.assert_allclose(contrasts["se"], np.sqrt(2 * cell / q), rtol=1e-12)
    accuracy = frame.groupby("model")["correct"].mean()
    gap = contrasts["model_a"].map(accuracy) - contrasts["model_b"].map(accuracy)
    np.testing.assert_allclose(contrasts["estimate"], gap, atol=1e-12)


def test_one_sample_per_cell_is_the_existing_fit():
    """Sample counts of 1 and zero within-cell squares, given explicitly or as an epoch column of
    ones, change nothing; the three-term model needs repeats and is refused without them."""
    frame = pd.read_csv(DATA / "synthetic_incomplete.csv")
    plain = wide_scores(frame)
    explicit = WideScores(
        plain.scores,
        plain.models,
        plain.question_ids,
        plain.categories,
        samples=np.isfinite(plain.scores).astype(int),
        within_ss=np.zeros(plain.scores.shape),
    )
    with_epoch = wide_scores(frame.assign(epoch=1))
    assert not with_epoch.has_repeats and mixed.model_specs(plain) == mixed.MODEL_SPECS
    for spec in mixed.MODEL_SPECS:
        reference = mixed.fit_lmm(plain, spec)
        for wide in (explicit, with_epoch):
            fit = mixed.fit_lmm(wide, spec)
            assert fit.variance == reference.variance
            assert fit.reml_criterion == reference.reml_criterion
            np.testing.assert_array_equal(fit.cov, reference.cov)
    with pytest.raises(ValueError, match="without repeated samples"):
        mixed.fit_lmm(plain, "category_question_model")


def test_epochs_refusals_and_tables():
    balanced = synthetic_wide("synthetic_epochs_balanced")
    samples = balanced.sample_counts.copy()
    samples[0, 0] = 2  # one cell with a sample fewer: no longer balanced
    unbalanced = WideScores(
        balanced.scores, balanced.models, balanced.question_ids, balanced.categories,
        samples=samples, within_ss=balanced.within_squares,
    )  # fmt: skip
    with pytest.raises(ValueError, match="exact path needs"):
        mixed.fit_lmm(unbalanced, "category_question_model", "exact")
    assert mixed.fit_lmm(unbalanced, "category_question_model").method == "general"
    alike = WideScores(
        balanced.scores, balanced.models, balanced.question_ids, balanced.categories,
        samples=balanced.sample_counts, within_ss=np.zeros(balanced.scores.shape),
    )  # fmt: skip
    with pytest.raises(ValueError, match="no within-cell variation"):
        mixed.fit_lmm(alike, "category_question_model")
    fits = [mixed.fit_lmm(balanced, spec) for spec in mixed.model_specs(balanced)]
    components = mixed.variance_components(fits)
    assert list(components.columns) == ["model_spec", "component", "variance", "boundary", "method"]
    assert components.loc[components.model_spec == "category_question_model", "component"].tolist() == [
        "category", "question", "question_model", "residual",
    ]  # fmt: skip
    contrasts = pd.concat([mixed.lmm_contrasts(fit) for fit in fits])
    assert contrasts.groupby("model_spec").size().to_dict() == dict.fromkeys(ALL_SPECS, 6)


def test_epochs_analytic_gradient_matches_finite_differences():
    wide = synthetic_wide("synthetic_epochs")
    spec = "category_question_model"
    data = mixed.general.general_data(mixed.common.prepare(wide, spec))
    gamma = np.array([0.1, 0.3, 0.2])
    _, grad = mixed.general.profiled(gamma, data, spec)
    h = 1e-6
    numeric = [
        (
            mixed.general.profiled(gamma + h * e, data, spec)[0]
            - mixed.general.profiled(gamma - h * e, data, spec)[0]
        )
        / (2 * h)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_epochs_statsmodels_likelihood_agrees_and_is_stationary(spec):
    frame = pd.read_csv(DATA / "synthetic_epochs.csv")
    assert_statsmodels_optimum(frame, mixed.fit_lmm(wide_scores(frame), spec))


# --- all 29 mirrored archives: unbalanced, the general path -------------------------------


@pytest.mark.parametrize("name", ["synthetic_balanced", "synthetic_epochs_balanced"])
def test_fits_in_blocks_of_questions_equal_the_one_block_fits(name, monkeypatch):
    """Passes over the score matrix in blocks of a few questions (as at thousands of models)
    give the fits of one pass, to round-off; the obstacle check reads every block."""
    wide = synthetic_wide(name)
    specs = mixed.model_specs(wide)
    whole = [mixed.fit_lmm(wide, spec) for spec in specs]
    monkeypatch.setattr("evalbars.data.blocks.BLOCK_CELLS", 3 * wide.scores.shape[1])
    for spec, reference in zip(specs, whole, strict=True):
        fit = mixed.fit_lmm(wide, spec)
        assert fit.method == reference.method == "exact"
        for component, value in reference.variance.items():
            assert fit.variance[component] == pytest.approx(value, rel=1e-12, abs=1e-15)
        assert fit.reml_criterion == pytest.approx(reference.reml_criterion, rel=1e-12)
        np.testing.assert_allclose(fit.cov, reference.cov, rtol=1e-12)
        np.testing.assert_array_equal(fit.params, reference.params)
    # every question alike but the last one: found in the last block
    scores = np.repeat(wide.scores[:, :1], wide.scores.shape[1], axis=1)
    scores[-1, 0] = 1.0 - scores[-1, 1]
    alike = WideScores(scores, wide.models, wide.question_ids, wide.categories)
    assert mixed.fit_obstacle(alike, "category_question") is None
    scores[-1, 0] = scores[-1, 1]
    assert "score alike" in mixed.fit_obstacle(alike, "category_question")


def test_contrast_table_is_the_concatenation_of_the_fits_tables():
    wide = synthetic_wide("synthetic_epochs_balanced")
    fits = [mixed.fit_lmm(wide, spec) for spec in mixed.MODEL_SPECS]
    expected = pd.concat(
        [mixed.lmm_contrasts(fit, 0.1) for fit in fits]
        + [mixed.unfitted_contrasts(wide, "category_question_model")]
    )
    table = mixed.contrast_table(fits, ["category_question_model"], 0.1)
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert table["p"].isna().sum() == len(table) // 3 and list(table) == mixed.CONTRAST_COLUMNS
