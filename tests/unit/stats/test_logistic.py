"""The logistic GLMM (Laplace) and GEE against R, statsmodels and exact identities.

References (``tests/reference/r_output/<name>_binary.json``, see ``r_binary_results.py``):
lme4 ``glmer(correct ~ 0 + model + (1|category) + (1|category:question), family = binomial,
nAGQ = 1)`` with its default control (``glmm``) and refitted with tight control (``glmm_tight``:
PIRLS to 1e-13, bobyqa rhoend 1e-10), emmeans contrasts, marginal accuracies by R's
``integrate`` with numDeriv gradients, and geepack ``geeglm`` (exchangeable).

Why estimates are compared with ``glmm_tight``: lme4's default control stops before the optimum
of its own objective. Its PIRLS (tolPwrss 1e-7) returns the Laplace deviance with the Cholesky
factor of the second-to-last iterate, an error of up to ~1e-5 relative in the objective, and
Nelder-Mead then stops where that noisy objective is flat: up to ~1e-2 relative away in the
estimates (e.g. synthetic_balanced, Alpaca-7B-v0.1: 0.17292 against 0.17152 at the optimum).
Where glmer's default and we disagree, the tests show that our objective equals the Laplace
deviance at glmer's estimates (computed in R from its formula, and by lme4's own deviance function
with tight PIRLS), and that our optimum is lower.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import integrate, special

from evalbars.data.scores import wide_scores
from evalbars.readings import logistic_verdicts
from evalbars.render import tables
from evalbars.render.figures.logistic import _visible_points, logistic_verdicts_figure
from evalbars.stats import mixed, pairwise
from evalbars.stats.fits import Fit, contrast_se
from evalbars.stats.logistic import cells as glmm_cells
from evalbars.stats.logistic import contrasts as logistic
from evalbars.stats.logistic import gee, glmm, laplace

from ...reference.r_binary_results import R_BINARY

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURES = [
    "synthetic_balanced",
    "synthetic_boundary",
    "synthetic_boundary_question",
    "synthetic_incomplete",
    "binary_near_boundary",
    "binary_epochs",
]
COMPLETE = [
    "synthetic_balanced",
    "synthetic_boundary",
    "synthetic_boundary_question",
    "binary_near_boundary",
]
INCOMPLETE = ["synthetic_incomplete", "binary_epochs"]  # cells missing / unequal trials
REL = 1e-4  # the required agreement with glmer for estimates and variance components


@cache
def long_table(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv")


@cache
def cells(name: str) -> pd.DataFrame:
    return glmm.binomial_cells(long_table(name))


def fit_cells(table: pd.DataFrame, **kwargs) -> glmm.GlmmFit:
    return glmm.fit_glmm(
        table["successes"],
        table["trials"],
        table["model"],
        table["question_id"],
        table["category"],
        **kwargs,
    )


@cache
def glmm_fit(name: str) -> glmm.GlmmFit:
    return fit_cells(cells(name))


@cache
def gee_fit(name: str) -> gee.GeeFit:
    c = cells(name)
    return gee.fit_gee(c["successes"], c["trials"], c["model"], c["question_id"])


def r_params(r: dict, models) -> np.ndarray:
    return np.array(
        [r["theta"]["question"], r["theta"]["category"], *[r["fixef"][m] for m in models]]
    )


def objective_at(name: str, params) -> float:
    c = cells(name)
    return glmm.laplace_deviance(
        c["successes"],
        c["trials"],
        c["model"],
        c["question_id"],
        c["category"],
        params[:2],
        params[2:],
        R_BINARY[name]["models"],
    )


def column(records, key):
    return np.array([record[key] for record in records])


# --------------------------------------------------------------------------------------------
# The objective: the same function as lme4's
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_laplace_deviance_equals_lme4_objective(name):
    """Our objective at glmer's default and tight estimates and at two other points, against
    R's Laplace deviance from its formula (own Newton iterations, sparse Cholesky) and against
    lme4's own deviance function, whose PIRLS (tolPwrss 1e-13) is accurate to ~1e-8."""
    ref = R_BINARY[name]
    for key in ("glmm", "glmm_tight"):
        r = ref[key]
        value = objective_at(name, r_params(r, ref["models"]))
        assert value == pytest.approx(r["laplace_deviance_formula"], rel=1e-12)
        assert value == pytest.approx(r["laplace_deviance_exact"], rel=2e-8)
        for check in r["devfun_checks"]:  # away from the optimum
            value = objective_at(name, np.r_[check["theta"], check["beta"]])
            assert value == pytest.approx(check["laplace_deviance_formula"], rel=1e-12)
            assert value == pytest.approx(check["laplace_deviance"], rel=2e-8)


@pytest.mark.parametrize("name", FIXTURES)
def test_optimum_at_least_as_good_as_glmer(name):
    ref, fit = R_BINARY[name], glmm_fit(name)
    assert fit.converged
    tight, default = ref["glmm_tight"], ref["glmm"]
    assert fit.laplace_deviance <= tight["laplace_deviance_formula"] * (1 + 1e-13)
    assert fit.laplace_deviance <= default["laplace_deviance_formula"] * (1 + 1e-13)
    # lme4's reported logLik carries its PIRLS error; with tight control it agrees with ours
    assert fit.loglik == pytest.approx(tight["loglik"], rel=1e-6)
    assert fit.loglik == pytest.approx(default["loglik"], rel=2e-5)


def test_gradient_is_exact():
    """The analytic gradient (implicit differentiation through the modes) against central
    differences of the deviance, at a point away from the optimum."""
    # laplace._Laplace and cells._encode are private: the gradient exists only inside the fit,
    # and checking it needs the objective itself (the public laplace_deviance has no gradient)
    c = cells("synthetic_incomplete")
    objective = laplace._Laplace(
        glmm_cells._encode(
            c["successes"], c["trials"], c["model"], c["question_id"], c["category"], None
        )
    )
    x = np.array([0.8, 0.4, 0.3, 0.5, 0.9, 0.2])
    _, gradient = objective.deviance_and_gradient(x)
    h = 1e-5
    numeric = [
        (objective.deviance(x + h * e) - objective.deviance(x - h * e)) / (2 * h)
        for e in np.eye(x.size)
    ]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------------------------
# Estimates, covariance, contrasts against glmer (tight control) and emmeans
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_glmm_estimates_match_glmer(name):
    ref, fit = R_BINARY[name], glmm_fit(name)
    r = ref["glmm_tight"]
    assert list(fit.names) == ref["models"]
    np.testing.assert_allclose(fit.params, [r["fixef"][m] for m in ref["models"]], rtol=REL)
    for component in ("question", "category"):
        if r["theta"][component] < glmm.SINGULAR_TOLERANCE:
            # on the boundary: R stops at ~1e-8 in theta, we at exactly 0 (to rounding)
            assert fit.theta[component] < 1e-8
            assert fit.boundary[component]
        else:
            assert fit.theta[component] == pytest.approx(r["theta"][component], rel=REL)
            assert fit.variance[component] == pytest.approx(r["variance"][component], rel=REL)
            assert not fit.boundary[component]
    assert fit.singular == r["singular"] == ref["glmm"]["singular"]
    assert fit.deviance == pytest.approx(r["deviance"], rel=1e-5)
    assert fit.n_obs == r["n_obs"] == ref["n_rows"]


@pytest.mark.parametrize("name", FIXTURES)
def test_glmm_vcov_matches_glmer(name):
    ref, fit = R_BINARY[name], glmm_fit(name)
    r = ref["glmm_tight"]
    assert fit.cov_source == r["vcov_source"] == "hessian"
    expected = np.array(r["vcov"])
    # lme4's Hessian is second differences of the deviance with step 1e-4, good to ~1e-4 of
    # the diagonal; ours, forward differences of the exact gradient, to ~1e-7
    np.testing.assert_allclose(fit.cov, expected, rtol=0, atol=2e-4 * np.max(np.diag(expected)))
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov)), np.sqrt(np.diag(expected)), rtol=REL)
    np.testing.assert_allclose(fit.cov_rx, r["vcov_rx"], rtol=1e-5)
    np.testing.assert_allclose(
        fit.hessian, r["fd_hessian"], rtol=0, atol=1e-3 * np.max(np.abs(r["fd_hessian"]))
    )


@pytest.mark.parametrize("name", FIXTURES)
def test_glmm_contrasts_match_emmeans(name):
    ref = R_BINARY[name]
    r = ref["glmm_tight"]["contrasts"]
    table = logistic.glmm_contrasts(glmm_fit(name))
    assert list(zip(table.model_a, table.model_b, strict=True)) == [
        (x["model_a"], x["model_b"]) for x in r
    ]
    np.testing.assert_allclose(table.log_odds_ratio, column(r, "estimate"), rtol=REL, atol=1e-7)
    np.testing.assert_allclose(table.log_odds_ratio_se, column(r, "se"), rtol=REL)
    np.testing.assert_allclose(table.log_odds_ratio_z, column(r, "z"), rtol=REL, atol=1e-5)
    # p = 2 Phi(-|z|) is steep in z: a relative error e in z is ~z^2 e in p
    for ours, theirs in [("p", "p_none"), ("p_bonferroni", "p_bonferroni"), ("p_holm", "p_holm")]:
        np.testing.assert_allclose(table[f"log_odds_ratio_{ours}"], column(r, theirs), rtol=1e-3)


@pytest.mark.parametrize("name", FIXTURES)
def test_marginal_accuracy_matches_r_integrate(name):
    ref, fit = R_BINARY[name], glmm_fit(name)
    r = ref["glmm_tight"]
    accuracy, jacobian = logistic.marginal_accuracy_jacobian(fit)
    np.testing.assert_allclose(
        accuracy, [r["marginal_accuracy"][m] for m in ref["models"]], rtol=1e-6
    )
    np.testing.assert_allclose(jacobian, r["marginal_jacobian"], atol=1e-6)
    for theta_uncertainty, key in [
        (True, "marginal_contrasts"),
        (False, "marginal_contrasts_fixed_theta"),
    ]:
        table = logistic.glmm_contrasts(fit, theta_uncertainty=theta_uncertainty)
        np.testing.assert_allclose(
            table.accuracy_difference, column(r[key], "estimate"), rtol=REL, atol=1e-7
        )
        np.testing.assert_allclose(table.accuracy_difference_se, column(r[key], "se"), rtol=REL)
        np.testing.assert_allclose(
            table.accuracy_difference_p_holm, column(r[key], "p_holm"), rtol=1e-3
        )


@pytest.mark.parametrize("name", FIXTURES)
def test_conditional_modes_match_ranef(name):
    r, fit = R_BINARY[name]["glmm_tight"], glmm_fit(name)
    ours = {
        str(question): value
        for (_, question), value in zip(fit.question_levels, fit.question_effects, strict=True)
    }
    np.testing.assert_allclose(
        [ours[level] for level in r["ranef"]["question"]["level"]],
        r["ranef"]["question"]["value"],
        atol=1e-5,
    )
    assert [str(c) for c in fit.category_levels] == r["ranef"]["category"]["level"]
    np.testing.assert_allclose(fit.category_effects, r["ranef"]["category"]["value"], atol=1e-5)


# --------------------------------------------------------------------------------------------
# Boundary and near-boundary cases, epochs
# --------------------------------------------------------------------------------------------


def test_category_variance_on_the_boundary():
    """glmer's default stops at theta_category = 2.2e-5; the optimum is 0 and lower."""
    ref, fit = R_BINARY["synthetic_boundary"], glmm_fit("synthetic_boundary")
    assert 0 < ref["glmm"]["theta"]["category"] < glmm.SINGULAR_TOLERANCE
    assert fit.theta["category"] < 1e-8 and fit.boundary["category"] and fit.singular
    assert fit.laplace_deviance < ref["glmm"]["laplace_deviance_formula"]
    assert not fit.boundary["question"]


def test_question_variance_on_the_boundary():
    fit = glmm_fit("synthetic_boundary_question")
    assert fit.theta["question"] < 1e-8 and fit.boundary["question"] and fit.singular
    np.testing.assert_allclose(fit.question_effects, 0, atol=1e-8)
    assert fit.theta["category"] > 0.5


def test_near_boundary_optimum_is_interior():
    """binary_near_boundary: theta_category ~0.055, small but interior; the deviance with the
    category variance set to 0 (fixed effects refitted) is higher, by little (a flat optimum)."""
    fit = glmm_fit("binary_near_boundary")
    assert 10 * glmm.SINGULAR_TOLERANCE < fit.theta["category"] < 0.1
    assert not fit.singular
    assert np.all(np.linalg.eigvalsh(fit.hessian) > 0)
    at_zero = fit_cells(cells("binary_near_boundary"), theta=(fit.theta["question"], 0.0))
    assert 0 < at_zero.laplace_deviance - fit.laplace_deviance < 0.1


def test_epochs_cells_equal_samples():
    """Binomial cells (successes of trials) and one row per 0/1 sample give the same fit."""
    samples = long_table("binary_epochs").assign(successes=lambda d: d["correct"], trials=1)
    by_cell, by_sample = glmm_fit("binary_epochs"), fit_cells(samples)
    assert by_cell.n_obs == by_sample.n_obs == len(samples)
    assert by_cell.n_cells < by_sample.n_cells
    np.testing.assert_allclose(by_sample.params, by_cell.params, rtol=1e-8)
    assert by_sample.theta["question"] == pytest.approx(by_cell.theta["question"], rel=1e-8)
    assert by_sample.theta["category"] == pytest.approx(by_cell.theta["category"], rel=1e-7)
    assert by_sample.loglik == pytest.approx(by_cell.loglik, rel=1e-12)
    # R: the cbind(successes, failures) fit differs from the per-sample one by the binomial
    # coefficients only
    r = R_BINARY["binary_epochs"]["glmm"]
    counts = r["binomial_counts"]
    assert counts["loglik"] == pytest.approx(r["loglik"] + counts["lchoose_sum"], rel=1e-9)


# --------------------------------------------------------------------------------------------
# Exact identities
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["synthetic_balanced", "binary_epochs"])
def test_zero_variance_is_logistic_regression(name):
    """With both variances fixed at 0 the model is logistic regression on model indicators:
    beta = logit(accuracy), the deviance is the Bernoulli deviance, vcov = 1 / (N p (1 - p)),
    and the marginal accuracy is logistic(beta) = the accuracy."""
    table = cells(name)
    fit = fit_cells(table, theta=(0.0, 0.0))
    successes = table.groupby("model")["successes"].sum().to_numpy()
    trials = table.groupby("model")["trials"].sum().to_numpy()
    p = successes / trials
    np.testing.assert_allclose(fit.params, special.logit(p), rtol=1e-9)
    bernoulli = -2 * np.sum(successes * np.log(p) + (trials - successes) * np.log1p(-p))
    assert fit.laplace_deviance == pytest.approx(bernoulli, rel=1e-12)
    assert fit.deviance == pytest.approx(bernoulli, rel=1e-12)
    np.testing.assert_allclose(fit.cov, np.diag(1 / (trials * p * (1 - p))), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(fit.cov_rx, np.diag(1 / (trials * p * (1 - p))), rtol=1e-12)
    np.testing.assert_allclose(logistic.marginal_accuracy(fit.params, 0.0), p, rtol=1e-12)
    # the delta method then gives the binomial standard error of each accuracy
    table = logistic.glmm_effect_table(fit)
    np.testing.assert_allclose(table.marginal_accuracy, p, rtol=1e-12)
    np.testing.assert_allclose(table.marginal_accuracy_se, np.sqrt(p * (1 - p) / trials), rtol=1e-6)
    np.testing.assert_allclose(fit.question_effects, 0, atol=0)


@pytest.mark.parametrize(
    "beta, variance", [(0.7, 0.5), (-1.3, 2.8), (2.4, 9.0), (0.0, 4.0), (-2.0, 30.0)]
)
def test_marginal_accuracy_quadrature(beta, variance):
    exact = integrate.quad(
        lambda z: (
            special.expit(beta + np.sqrt(variance) * z) * np.exp(-z * z / 2) / np.sqrt(2 * np.pi)
        ),
        -np.inf,
        np.inf,
        epsabs=0,
        epsrel=1e-13,
    )[0]
    (value,) = logistic.marginal_accuracy([beta], variance)
    assert value == pytest.approx(exact, rel=1e-12)
    # attenuation towards 1/2 (exactly 1/2 at beta = 0, by symmetry)
    assert abs(value - 0.5) <= abs(special.expit(beta) - 0.5) + 1e-15


def test_contrasts_are_antisymmetric():
    fit, gfit = glmm_fit("synthetic_incomplete"), gee_fit("synthetic_incomplete")
    pairs = [("Orca-2-7B", "Falcon-7B"), ("Falcon-7B", "Orca-2-7B")]
    for table in (
        logistic.glmm_contrasts(fit, pairs=pairs),
        logistic.gee_contrasts(gfit, pairs=pairs),
    ):
        forward, backward = table.iloc[0], table.iloc[1]
        for prefix in ("log_odds_ratio", "accuracy_difference"):
            assert forward[prefix] == pytest.approx(-backward[prefix], rel=1e-14)
            assert forward[f"{prefix}_se"] == pytest.approx(backward[f"{prefix}_se"], rel=1e-14)
            assert forward[f"{prefix}_p"] == pytest.approx(backward[f"{prefix}_p"], rel=1e-12)
            assert forward[f"{prefix}_ci_low"] == pytest.approx(-backward[f"{prefix}_ci_high"])
        assert forward["odds_ratio"] * backward["odds_ratio"] == pytest.approx(1.0)


def test_row_order_and_labels_do_not_matter():
    table = cells("synthetic_incomplete")
    rng = np.random.default_rng(7)
    shuffled = table.iloc[rng.permutation(len(table))].assign(
        question_id=lambda d: "q" + d["question_id"].astype(str)
    )
    a, b = glmm_fit("synthetic_incomplete"), fit_cells(shuffled)
    np.testing.assert_allclose(b.params, a.params, rtol=1e-9)
    assert b.laplace_deviance == pytest.approx(a.laplace_deviance, rel=1e-13)
    np.testing.assert_allclose(b.cov, a.cov, rtol=1e-5)


def test_degenerate_input_is_rejected():
    table = cells("synthetic_balanced")
    perfect = table.assign(
        successes=np.where(table["model"] == "Falcon-7B", table["trials"], table["successes"])
    )
    with pytest.raises(ValueError, match="accuracy 0 or 1"):
        fit_cells(perfect)
    with pytest.raises(ValueError, match="successes <= trials"):
        fit_cells(table.assign(successes=table["trials"] + 1))


@pytest.mark.parametrize("fit", ["glmm", "gee"])
def test_fractional_successes_are_refused_by_both_fits_alike(fit):
    # a partial-credit score (0.5) in one cell: GEE used to floor it to 0 and fit silently
    table = cells("synthetic_balanced")
    half = table.assign(successes=table["successes"].astype(float))
    half.loc[half.index[0], "successes"] = 0.5
    fitter = {
        "glmm": fit_cells,
        "gee": lambda c: gee.fit_gee(c["successes"], c["trials"], c["model"], c["question_id"]),
    }[fit]
    with pytest.raises(ValueError, match="^successes and trials must be whole numbers$"):
        fitter(half)
    with pytest.raises(ValueError, match="^need trials >= 1 and 0 <= successes <= trials"):
        fitter(table.assign(trials=0))


def test_fit_summary_reports_the_fits():
    fit, gfit = glmm_fit("synthetic_boundary"), gee_fit("synthetic_boundary")
    summary = logistic.fit_summary(fit, gfit)
    assert list(summary.method) == ["glmm_laplace", "gee_exchangeable"]
    first = summary.iloc[0]
    assert first.variance_question == fit.theta["question"] ** 2
    assert bool(first.boundary_category) and not bool(first.boundary_question)
    assert first.loglik == -first.laplace_deviance / 2
    assert summary.iloc[1].alpha == gfit.alpha and summary.iloc[1].n_questions == 150


def test_compare_logistic_stacks_both_methods():
    items = long_table("binary_epochs")
    result = logistic.compare_logistic(items)
    table = result.contrasts
    assert list(table.columns) == ["method", *logistic.CONTRAST_COLUMNS]
    glmm_rows = table[table.method == "glmm_laplace"].drop(columns="method")
    pd.testing.assert_frame_equal(
        glmm_rows.reset_index(drop=True), logistic.glmm_contrasts(glmm_fit("binary_epochs"))
    )
    assert (table.method == "gee_exchangeable").sum() == 3


def test_pair_order_gives_the_table_the_pairs_of_that_order_give():
    # The workflow's job passes the accuracy order, not ten million pairs of names: the same
    # table to the bit as the pairs model_pairs lists for that order.
    wide = wide_scores(long_table("synthetic_balanced"))
    order = list(reversed(wide.models))
    by_order = logistic.compare_logistic(wide, pair_order=order)
    by_pairs = logistic.compare_logistic(wide, pairs=pairwise.model_pairs(order))
    pd.testing.assert_frame_equal(by_order.contrasts, by_pairs.contrasts, check_exact=True)
    assert by_order.contrasts["model_a"].iloc[0] == order[0]
    with pytest.raises(ValueError, match="pairs or pair_order, not both"):
        logistic.compare_logistic(wide, pairs=pairwise.model_pairs(order), pair_order=order)
    with pytest.raises(ValueError, match="each model of the fit at most once"):
        logistic.compare_logistic(wide, pair_order=[*order, order[0]])
    with pytest.raises(ValueError, match="each model of the fit at most once"):
        logistic.compare_logistic(wide, pair_order=[*order[:-1], "no-such-model"])


def test_every_fit_names_the_same_things_alike():
    wide = wide_scores(long_table("synthetic_balanced"))
    fits = [glmm_fit("synthetic_balanced"), gee_fit("synthetic_balanced")]
    fits.append(mixed.fit_lmm(wide, "category_question"))
    k = len(wide.models)
    for fit in fits:
        assert isinstance(fit, Fit), type(fit)
        assert list(fit.names) == sorted(wide.models) == list(wide.models)
        assert fit.params.shape == (k,) and fit.cov.shape == (k, k)
        assert fit.converged is True
        # one contrast SE for every fit: sqrt(C_aa + C_bb - 2 C_ab) equals d'Cd, d = e_a - e_b
        d = np.eye(k)[0] - np.eye(k)[1]
        assert contrast_se(fit, 0, 1) == pytest.approx(np.sqrt(d @ fit.cov @ d), rel=1e-12)


def _warnings(caplog) -> list[str]:
    """Which fits the logistic stage warned of, by name."""
    return [
        r.getMessage().split(" did not converge")[0]
        for r in caplog.records
        if r.name == "evalbars.stats.logistic.contrasts" and r.levelname == "WARNING"
    ]


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.IterationLimitWarning")
def test_a_fit_that_did_not_converge_is_flagged_in_every_table_and_warned(caplog):
    # incomplete data: GEE's estimates depend on alpha, so two iterations do not converge
    items = long_table("synthetic_incomplete")
    stopped = fit_cells(cells("synthetic_incomplete"), bfgs_maxiter=1, newton_maxiter=1)
    assert stopped.converged is False and glmm_fit("synthetic_incomplete").converged is True
    wide = wide_scores(items)
    lmm = mixed.lmm_contrasts(mixed.fit_lmm(wide, "category_question"))
    pairs = lmm[["model_a", "model_b"]]
    with caplog.at_level("WARNING", logger="evalbars.stats.logistic.contrasts"):
        result = logistic.compare_logistic(
            items,
            pairs=pairs,
            glmm_options={"bfgs_maxiter": 1, "newton_maxiter": 1},
            gee_options={"maxiter": 2},
        )
    assert _warnings(caplog) == ["the logistic mixed model (Laplace)", "the GEE"]
    assert len(result.contrasts) == 12 and not result.contrasts["converged"].any()
    assert not result.effects[["glmm_converged", "gee_converged"]].any(axis=None)
    assert result.summary["converged"].tolist() == [False, False]
    table = logistic_verdicts.verdict_table(lmm, result.contrasts, 0.05)
    assert not table[["glmm_converged", "gee_converged"]].any(axis=None)
    # the GLMM alone stopped early: only its flags fall
    caplog.clear()
    with caplog.at_level("WARNING", logger="evalbars.stats.logistic.contrasts"):
        glmm_stopped = logistic.compare_logistic(
            items, pairs=pairs, glmm_options={"bfgs_maxiter": 1, "newton_maxiter": 1}
        )
    assert _warnings(caplog) == ["the logistic mixed model (Laplace)"]
    table = logistic_verdicts.verdict_table(lmm, glmm_stopped.contrasts, 0.05)
    assert not table["glmm_converged"].any() and table["gee_converged"].all()
    # a converged comparison warns of nothing and flags every row converged
    caplog.clear()
    with caplog.at_level("WARNING", logger="evalbars.stats.logistic.contrasts"):
        fine = logistic.compare_logistic(items, pairs=pairs)
    assert _warnings(caplog) == []
    assert fine.contrasts["converged"].all() and fine.summary["converged"].all()
    verdicts = logistic_verdicts.verdict_table(lmm, fine.contrasts, 0.05)
    assert verdicts[["glmm_converged", "gee_converged"]].all(axis=None)


# --------------------------------------------------------------------------------------------
# GEE: statsmodels directly, geepack, closed forms
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_gee_is_statsmodels_gee_on_the_samples(name):
    """fit_gee on binomial cells equals statsmodels' GEE on the long table of 0/1 samples."""
    items = long_table(name)
    design = pd.get_dummies(items["model"]).astype(float)
    direct = sm.GEE(
        items["correct"].to_numpy(float),
        design.to_numpy(),
        groups=items["question_id"].to_numpy(),
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    ).fit(maxiter=100, ctol=1e-10)
    fit = gee_fit(name)
    assert list(fit.names) == list(design.columns)
    np.testing.assert_allclose(fit.params, direct.params, rtol=1e-10)
    np.testing.assert_allclose(fit.cov, direct.cov_robust, rtol=1e-8)
    assert fit.alpha == pytest.approx(direct.model.cov_struct.dep_params, rel=1e-8)
    assert fit.n_obs == len(items)


@pytest.mark.parametrize("name", COMPLETE)
def test_gee_matches_geepack_on_complete_data(name):
    """Every model answers every question once: the estimates do not depend on alpha, and
    statsmodels and geepack agree to convergence precision."""
    ref = R_BINARY[name]["gee"]
    fit = gee_fit(name)
    table = logistic.gee_contrasts(fit)
    models = R_BINARY[name]["models"]
    np.testing.assert_allclose(fit.params, [ref["coef"][m] for m in models], rtol=1e-8)
    np.testing.assert_allclose(fit.cov, ref["vcov"], rtol=1e-8)
    for ours, key in [
        ("log_odds_ratio", "contrasts"),
        ("accuracy_difference", "accuracy_contrasts"),
    ]:
        np.testing.assert_allclose(table[ours], column(ref[key], "estimate"), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(table[f"{ours}_se"], column(ref[key], "se"), rtol=1e-8)
        np.testing.assert_allclose(table[f"{ours}_p_holm"], column(ref[key], "p_holm"), rtol=1e-6)


@pytest.mark.parametrize("name", INCOMPLETE)
def test_gee_matches_geepack_with_its_degrees_of_freedom(name):
    """With missing cells or unequal trials the estimates depend on alpha. statsmodels
    subtracts the number of parameters in its moment estimator of alpha, geepack does not;
    with ddof_scale=0 statsmodels' GEE reproduces geepack (to geepack's convergence, ~1e-8)."""
    ref = R_BINARY[name]["gee"]
    models = R_BINARY[name]["models"]
    expected = np.array([ref["coef"][m] for m in models])
    default = gee_fit(name)
    assert default.alpha != pytest.approx(ref["alpha"], rel=1e-3)
    np.testing.assert_allclose(default.params, expected, rtol=5e-4)
    c = cells(name)
    fit = gee.fit_gee(c["successes"], c["trials"], c["model"], c["question_id"], ddof_scale=0)
    assert fit.alpha == pytest.approx(ref["alpha"], rel=1e-8)
    np.testing.assert_allclose(fit.params, expected, rtol=1e-6)
    np.testing.assert_allclose(fit.cov, ref["vcov"], rtol=1e-6)
    table = logistic.gee_contrasts(fit)
    for ours, key in [
        ("log_odds_ratio", "contrasts"),
        ("accuracy_difference", "accuracy_contrasts"),
    ]:
        np.testing.assert_allclose(table[ours], column(ref[key], "estimate"), rtol=1e-5)
        np.testing.assert_allclose(table[f"{ours}_se"], column(ref[key], "se"), rtol=1e-6)
        np.testing.assert_allclose(table[f"{ours}_p_holm"], column(ref[key], "p_holm"), rtol=1e-5)


def test_gee_closed_form_on_complete_data():
    """Complete, one sample per cell: beta = logit(accuracy) and the robust covariance is
    S_kl / (n^2 a_k a_l), S the cross-products of residuals over questions, a = p (1 - p)."""
    items = long_table("synthetic_balanced")
    wide = items.pivot(index="question_id", columns="model", values="correct").sort_index(axis=1)
    p = wide.mean().to_numpy()
    resid = wide.to_numpy() - p
    n = len(wide)
    a = p * (1 - p)
    fit = gee_fit("synthetic_balanced")
    np.testing.assert_allclose(fit.params, special.logit(p), rtol=1e-10)
    np.testing.assert_allclose(fit.cov, resid.T @ resid / (n**2 * np.outer(a, a)), rtol=1e-8)
    np.testing.assert_allclose(fit.accuracy, p, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# The verdict table: the three readings side by side
# --------------------------------------------------------------------------------------------


def _lmm_contrasts(name: str) -> pd.DataFrame:
    fit = mixed.fit_lmm(wide_scores(long_table(name)), "category_question")
    return mixed.lmm_contrasts(fit)


def test_verdict_table_lines_up_the_three_readings():
    lmm = _lmm_contrasts("synthetic_incomplete")
    comparison = logistic.compare_logistic(
        long_table("synthetic_incomplete"), pairs=lmm[["model_a", "model_b"]]
    )
    table = logistic_verdicts.verdict_table(lmm, comparison.contrasts, 0.05)
    assert list(table.columns) == logistic_verdicts.VERDICT_COLUMNS
    assert (
        table[["model_a", "model_b"]].values.tolist() == lmm[["model_a", "model_b"]].values.tolist()
    )
    glmm_rows = comparison.contrasts[comparison.contrasts["method"] == "glmm_laplace"]
    np.testing.assert_array_equal(table["glmm_z"], glmm_rows["log_odds_ratio_z"])
    np.testing.assert_array_equal(table["lmm_p_holm"], lmm["p_holm"])
    for reading, p in (("lmm", table["lmm_p_holm"]), ("glmm", table["glmm_p_holm"])):
        expected = np.where(p < 0.05, "a > b", "not separated")
        sign = table["lmm_difference" if reading == "lmm" else "glmm_log_odds_ratio"]
        expected = np.where((p < 0.05) & (sign < 0), "a < b", expected)
        assert table[f"{reading}_verdict"].tolist() == expected.tolist()
    agree = (table["lmm_verdict"] == table["glmm_verdict"]) & (
        table["gee_verdict"] == table["lmm_verdict"]
    )
    assert table["agree"].tolist() == agree.tolist()
    with pytest.raises(ValueError, match="pairs in order"):
        logistic_verdicts.verdict_table(lmm.iloc[::-1], comparison.contrasts, 0.05)


def test_verdict_table_reads_each_methods_rows_wherever_they_are():
    # compare_logistic writes each method's rows in one run (read as a slice); rows of the two
    # methods interleaved give the same table.
    lmm = _lmm_contrasts("synthetic_incomplete")
    contrasts = logistic.compare_logistic(
        long_table("synthetic_incomplete"), pairs=lmm[["model_a", "model_b"]]
    ).contrasts
    pairs = len(contrasts) // 2
    interleaved = contrasts.iloc[
        np.ravel(np.column_stack([np.arange(pairs), pairs + np.arange(pairs)]))
    ]
    pd.testing.assert_frame_equal(
        logistic_verdicts.verdict_table(lmm, interleaved, 0.05),
        logistic_verdicts.verdict_table(lmm, contrasts, 0.05),
        check_exact=True,
    )


def _names_as_categories(table: pd.DataFrame, categories=None) -> pd.DataFrame:
    """``table`` with its model names categorical, as the workflow's job reads them."""
    return table.assign(
        **{
            name: pd.Categorical(table[name], categories=categories)
            for name in ("model_a", "model_b")
        }
    )


def test_verdict_table_of_names_read_as_categories_is_the_same_table():
    """The job reads both tables' names as categoricals (codes, no string per pair): the table is
    the one of text names, names as text; a pair out of line is caught by its codes, whatever
    order each table's categories have."""
    lmm = _lmm_contrasts("synthetic_incomplete")
    contrasts = logistic.compare_logistic(
        long_table("synthetic_incomplete"), pairs=lmm[["model_a", "model_b"]]
    ).contrasts
    expected = logistic_verdicts.verdict_table(lmm, contrasts, 0.05)
    names = sorted(set(lmm["model_a"]) | set(lmm["model_b"]))
    categorical = _names_as_categories(contrasts, names[::-1])  # another order than lmm's
    table = logistic_verdicts.verdict_table(_names_as_categories(lmm), categorical, 0.05)
    pd.testing.assert_frame_equal(table, expected)
    assert table["model_a"].dtype == expected["model_a"].dtype != "category"
    # one pair of the GEE rows swapped: its model_b no longer lines up
    swapped = contrasts.copy()
    gee = np.flatnonzero(swapped["method"] == "gee_exchangeable")
    swapped.loc[gee[[0, 1]], "model_b"] = swapped.loc[gee[[1, 0]], "model_b"].to_numpy()
    assert swapped.loc[gee[0], "model_b"] != contrasts.loc[gee[0], "model_b"]
    with pytest.raises(ValueError, match="gee_exchangeable contrasts do not hold"):
        logistic_verdicts.verdict_table(
            _names_as_categories(lmm), _names_as_categories(swapped, names), 0.05
        )
    # a name the linear model's table does not hold
    first = contrasts["model_a"].iloc[0]
    renamed = contrasts.assign(model_a=contrasts["model_a"].replace(first, "elsewhere"))
    with pytest.raises(ValueError, match="glmm_laplace contrasts do not hold"):
        logistic_verdicts.verdict_table(
            _names_as_categories(lmm), _names_as_categories(renamed), 0.05
        )


def test_verdicts_and_a_pair_whose_verdict_changes_with_the_scale():
    assert logistic_verdicts.verdicts([0.03, -0.03, 0.03], [0.01, 0.01, 0.2], 0.05).tolist() == [
        "a > b",
        "a < b",
        "not separated",
    ]
    lmm = pd.DataFrame(
        {
            "model_a": ["m1", "m1"],
            "model_b": ["m2", "m3"],
            "estimate": [0.02, 0.05],
            "ci_low": [0.0, 0.0],
            "ci_high": [0.1, 0.1],
            "z": [1.9, 4.0],
            "p_holm": [0.07, 0.001],
        }
    )
    contrasts = pd.DataFrame(
        {
            "method": ["glmm_laplace"] * 2 + ["gee_exchangeable"] * 2,
            "model_a": ["m1", "m1"] * 2,
            "model_b": ["m2", "m3"] * 2,
            "log_odds_ratio": [0.4, 0.5, 0.3, 0.4],
            "accuracy_difference": [0.02, 0.05] * 2,
            "accuracy_difference_ci_low": [0.0] * 4,
            "accuracy_difference_ci_high": [0.1] * 4,
            "log_odds_ratio_z": [2.2, 4.1, 1.8, 3.9],
            "log_odds_ratio_p_holm": [0.03, 0.001, 0.08, 0.001],
            "converged": [True] * 4,
        }
    )
    table = logistic_verdicts.verdict_table(lmm, contrasts, 0.05)
    assert table["glmm_verdict"].tolist() == ["a > b", "a > b"]
    assert table["gee_verdict"].tolist() == ["not separated", "a > b"]
    assert table["agree"].tolist() == [False, True]
    figure = logistic_verdicts_figure(table)
    assert figure._suptitle.get_text() == (
        "The logistic readings agree with the linear mixed model on 1 of 2 pairs;\n1 verdict change"
    )
    plt.close(figure)


def test_many_pairs_are_drawn_once_per_visible_cell():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200_000)
    y = x + rng.normal(scale=0.01, size=x.size)
    shown_x, shown_y = _visible_points(x, y, thin=True, steps=100)
    assert len(shown_x) < 2_000  # at most one point per occupied cell of the 100 x 100 grid
    # every drawn point is a real pair, and every occupied cell keeps one
    cells = {
        (int(a), int(b))
        for a, b in zip(
            np.minimum((x - x.min()) / np.ptp(x) * 100, 99),
            np.minimum((y - y.min()) / np.ptp(y) * 100, 99),
            strict=True,
        )
    }
    assert len(shown_x) == len(cells)
    assert set(zip(shown_x.tolist(), shown_y.tolist(), strict=True)) <= set(
        zip(x.tolist(), y.tolist(), strict=True)
    )
    assert _visible_points(x, y, thin=False)[0] is x


def test_fit_obstacle_names_why_the_logistic_models_are_not_fitted(tmp_path):
    items = long_table("synthetic_balanced")
    assert logistic.fit_obstacle(items, max_cells=10**6) is None
    k, q = items["model"].nunique(), items["question_id"].nunique()
    assert logistic.fit_obstacle(items, max_cells=k * q - 1) == (
        f"{k} models x {q} questions = {k * q} cells, more than analysis.logistic_max_cells = "
        f"{k * q - 1:,} (the fits would need about {logistic.logistic_memory(k, q) / 1e9:.1f} GB "
        "of memory; raise the limit to fit them)"
    )
    # the estimate behind the message: the measured peak at 4,500 x 21,000 (6.8 GB, less the
    # 0.25 GB of the process)
    assert logistic.logistic_memory(4_500, 21_000) / 1e9 == pytest.approx(6.6, abs=0.1)
    partial = items.assign(correct=items["correct"].astype(float))
    partial.loc[partial.index[:3], "correct"] = 0.5
    assert logistic.fit_obstacle(partial, 10**6) == (
        "3 scores are neither 0 nor 1 (partial credit has no binomial model)"
    )
    perfect = items.assign(
        correct=np.where(items["model"] == items["model"].iloc[0], 1, items["correct"])
    )
    assert logistic.fit_obstacle(perfect, 10**6) == (
        f"no finite log odds for {items['model'].iloc[0]} (accuracy 100%)"
    )
    empty = logistic.not_fitted("because")
    assert empty.contrasts.empty and empty.summary["note"].tolist() == ["not fitted: because"] * 2
    # the verdicts job reads the reason back from the summary's CSV file; a fit's has none
    for reason, summary in (
        ("because, and more", logistic.not_fitted("because, and more").summary),
        (None, logistic.compare_logistic(items).summary),
    ):
        tables.write_csv(summary, tmp_path / "fits.csv")
        assert logistic_verdicts.not_fitted_reason(pd.read_csv(tmp_path / "fits.csv")) == reason
    figure = logistic_verdicts_figure(
        pd.DataFrame(columns=logistic_verdicts.VERDICT_COLUMNS), "because"
    )
    assert figure.axes[0].texts[0].get_text() == "Logistic models not fitted: because."
    plt.close(figure)


def test_missing_scores_are_no_trials():
    items = long_table("binary_epochs").astype({"correct": "Float64"})
    missing = items.copy()
    missing.loc[missing.index[:5], "correct"] = pd.NA
    counted = glmm.binomial_cells(missing).set_index(["model", "question_id"])
    full = glmm.binomial_cells(items).set_index(["model", "question_id"])
    assert int(full["trials"].sum() - counted["trials"].sum()) == 5
    assert full["successes"].sum() - counted["successes"].sum() == items["correct"].iloc[:5].sum()


def test_model_effects_of_both_readings():
    """On complete 0/1 data GEE's accuracy is the observed accuracy, with the binomial SE
    sqrt(p (1 - p) / n); the GLMM columns are glmm_effect_table's."""
    items = long_table("synthetic_balanced")
    models = logistic.compare_logistic(items).effects
    assert list(models.columns) == logistic.EFFECT_COLUMNS
    observed = items.groupby("model")["correct"].agg(["mean", "size"])
    np.testing.assert_allclose(models["gee_accuracy"], observed["mean"], rtol=1e-10)
    binomial_se = np.sqrt(observed["mean"] * (1 - observed["mean"]) / observed["size"])
    np.testing.assert_allclose(models["gee_accuracy_se"], binomial_se, rtol=1e-8)
    glmm_table = logistic.glmm_effect_table(glmm_fit("synthetic_balanced"))
    np.testing.assert_allclose(models["glmm_marginal_accuracy"], glmm_table["marginal_accuracy"])
    np.testing.assert_allclose(models["glmm_log_odds"], glmm_table["log_odds"])


def test_contrast_blocks_end_to_end_are_compare_logistics_contrasts():
    # The workflow's job writes the contrasts a fit at a time: the same rows, to the bit, and
    # the same Parquet file as the whole table.
    wide = wide_scores(long_table("synthetic_balanced"))
    order = list(reversed(wide.models))
    whole = logistic.compare_logistic(wide, pair_order=order)
    fits = logistic.fit_logistic(wide)
    blocks = logistic.contrast_blocks(*fits, pair_order=order)
    assert [block()["method"].unique().tolist() for block in blocks] == [
        ["glmm_laplace"],
        ["gee_exchangeable"],
    ]
    pd.testing.assert_frame_equal(
        tables.TableBlocks(blocks).whole(), whole.contrasts, check_exact=True
    )
    pd.testing.assert_frame_equal(logistic.effect_table(*fits), whole.effects, check_exact=True)
