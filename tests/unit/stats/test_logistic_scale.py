"""The logistic fits at many models (issue 23): the closed-form GEE, the Schur-form GLMM, and
the structured contrast SEs, against statsmodels, glmer and the explicit computations.

References: statsmodels and the explicit computations on the fixtures of ``test_logistic.py`` and
on the 100 models x 500 questions of ``tests/data/glmm_k100.csv.gz`` (``make_glmm_k100_board.py``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars.data.scores import wide_scores
from evalbars.stats.fits import difference_se, structured_difference_se
from evalbars.stats.logistic import cells as glmm_cells
from evalbars.stats.logistic import contrasts as logistic
from evalbars.stats.logistic import gee, glmm, grid_laplace, laplace

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
BOARD = "glmm_k100"


@cache
def cells(name: str) -> pd.DataFrame:
    suffix = ".csv.gz" if name == BOARD else ".csv"
    return glmm.binomial_cells(pd.read_csv(DATA / f"{name}{suffix}"))


def args(name: str, category: bool = True):
    c = cells(name)
    columns = ["successes", "trials", "model", "question_id"] + (["category"] if category else [])
    return [c[column] for column in columns]


@cache
def board_fit(hessian: str) -> glmm.GlmmFit:
    return glmm.fit_glmm(*args(BOARD), hessian=hessian)


@cache
def board_gee(ddof_scale) -> gee.GeeFit:
    return gee.fit_gee(*args(BOARD, category=False), ddof_scale=ddof_scale)


def se(cov) -> np.ndarray:
    return np.sqrt(np.diag(cov))


# --------------------------------------------------------------------------------------------
# GEE: the closed form is statsmodels' fit
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ddof_scale", [None, 0])
@pytest.mark.parametrize("name", FIXTURES)
def test_closed_form_gee_is_statsmodels(name, ddof_scale):
    """Same estimating equations, moment estimators and sandwich: agreement to rounding."""
    a = gee.fit_gee(*args(name, False), method="statsmodels", ddof_scale=ddof_scale)
    b = gee.fit_gee(*args(name, False), method="closed_form", ddof_scale=ddof_scale)
    assert a.names == b.names
    np.testing.assert_allclose(b.params, a.params, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.cov, a.cov, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(b.cov_naive, a.cov_naive, rtol=1e-9, atol=1e-14)
    assert b.alpha == pytest.approx(a.alpha, rel=1e-9, abs=1e-14)
    assert (b.n_obs, b.n_clusters, b.scale, b.converged) == (a.n_obs, a.n_clusters, 1.0, True)


def test_auto_gee_switches_to_the_closed_form_above_30_models():
    fit = board_gee(None)
    assert len(fit.names) == 100 > gee.STATSMODELS_MAX_MODELS
    small = gee.fit_gee(*args("synthetic_incomplete", False))
    exact = gee.fit_gee(*args("synthetic_incomplete", False), method="statsmodels")
    np.testing.assert_array_equal(small.params, exact.params)  # statsmodels itself


# --------------------------------------------------------------------------------------------
# GLMM at 100 models against glmer
# --------------------------------------------------------------------------------------------


def test_schur_path_at_100_models_is_the_full_fit():
    """At 100 models both optimisers stop at the same optimum; the Schur-form covariance is
    the RX covariance widened by theta's uncertainty, within 1% of the full Hessian's in every
    SE and contrast SE (0.08% and 0.5% on this board)."""
    schur, full = board_fit("schur"), board_fit("full")
    assert schur.converged and full.converged
    assert (schur.cov_source, full.cov_source) == ("schur", "hessian")
    np.testing.assert_allclose(schur.params, full.params, rtol=1e-7, atol=1e-9)
    for component in ("question", "category"):
        assert schur.theta[component] == pytest.approx(full.theta[component], rel=1e-7)
    assert schur.loglik == pytest.approx(full.loglik, rel=1e-12)
    np.testing.assert_allclose(schur.cov_rx, full.cov_rx, rtol=1e-6)
    assert np.all(se(schur.cov) >= se(schur.cov_rx) * (1 - 1e-12))
    np.testing.assert_allclose(se(schur.cov), se(full.cov), rtol=1e-2)
    first, second = np.triu_indices(100, k=1)
    np.testing.assert_allclose(
        difference_se(schur.cov, first, second), difference_se(full.cov, first, second), rtol=1e-2
    )


def test_schur_fit_at_100_models_is_glmers():
    """The Schur path on the 100-model board against glmer (lme4 1.1.31, Laplace, nAGQ = 1;
    ``make_r_glmm_k100_reference.R``: R's Newton steps on glmer's own deviance function from our
    fit rounded to 2 decimals, then glmer's nlminb from there): fixed effects and variance
    components within 1e-4 (the issue's bar; they agree to 5e-7 and 6e-9), the Laplace
    log-likelihood to 1e-9 relative (3e-11; our deviance equals R's from its formula to 2e-11),
    and glmer's RX covariance (``vcov(fit, use.hessian = FALSE)``) within 1e-4 relative in every
    SE (7e-9), the Schur-form covariance within 1e-3 of it (8e-5)."""
    reference = R_BINARY[BOARD]
    r = reference["glmm_tight"]
    assert r["vcov_source"] == "rx" and not r["singular"]
    fit = board_fit("schur")
    assert list(fit.names) == reference["models"]
    np.testing.assert_allclose(fit.params, [r["fixef"][m] for m in fit.names], rtol=0, atol=1e-4)
    for component in ("question", "category"):
        assert fit.theta[component] == pytest.approx(r["theta"][component], abs=1e-4)
    assert fit.loglik == pytest.approx(r["loglik"], rel=1e-9)
    assert fit.laplace_deviance == pytest.approx(r["laplace_deviance_formula"], rel=1e-9)
    r_rx = np.array(r["vcov_rx"])
    np.testing.assert_allclose(se(fit.cov_rx), se(r_rx), rtol=1e-4)
    np.testing.assert_allclose(se(fit.cov), se(r_rx), rtol=1e-3)


def test_gee_at_100_models_is_geepacks():
    """The closed-form GEE (moment estimators without degrees-of-freedom corrections, as
    geepack) against ``geeglm(corstr = "exchangeable")`` on the 100-model board: within 1e-6
    (they agree to 1.5e-7; geepack stops at its default tolerance, ``epsilon = 1e-4`` on the
    change in the coefficients), the robust covariance to 2e-7 relative."""
    r = R_BINARY[BOARD]["gee"]
    fit = board_gee(0)
    np.testing.assert_allclose(fit.params, [r["coef"][m] for m in fit.names], rtol=0, atol=1e-6)
    np.testing.assert_allclose(fit.cov, np.array(r["vcov"]), rtol=1e-6, atol=1e-12)
    assert fit.alpha == pytest.approx(r["alpha"], rel=1e-9)


@pytest.mark.parametrize("name", ["synthetic_balanced", "binary_near_boundary"])
def test_schur_and_full_paths_find_the_same_optimum(name):
    full = glmm.fit_glmm(*args(name), hessian="full")
    schur = glmm.fit_glmm(*args(name), hessian="schur")
    assert schur.converged and schur.cov_source == "schur" and full.cov_source == "hessian"
    np.testing.assert_allclose(schur.params, full.params, rtol=1e-7, atol=1e-9)
    assert schur.laplace_deviance == pytest.approx(full.laplace_deviance, rel=1e-12)
    np.testing.assert_allclose(schur.cov_rx, full.cov_rx, rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["synthetic_balanced", "binary_epochs", "synthetic_epochs_balanced"]
)
def test_grid_cells_give_the_same_deviance(name):
    """The complete-grid layout (reshapes instead of bincounts) and the grid's matrix form
    (:class:`grid_laplace._GridLaplace`: mu from an outer sum, sums as matrix products) are the same
    objective as the cell list: deviance, exact gradient and Schur matrix, with one 0/1
    sample per cell and with 2 to 4 (binary_epochs) or 3 epochs per cell."""
    c = args(name)
    n_models = c[2].nunique()
    x = np.r_[0.8, 0.4, np.linspace(-0.5, 0.9, n_models)]
    cell = laplace._Laplace(glmm_cells._encode(*c, None, grid=False))
    value, gradient = cell.deviance_and_gradient(x)
    schur = cell._schur(x)
    grid_cells = glmm_cells._encode(*c, None, grid=True)
    assert grid_cells.grid and grid_cells.unit_trials == (name == "synthetic_balanced")
    for objective in (laplace._Laplace(grid_cells), grid_laplace._GridLaplace(grid_cells)):
        grid_value, grid_gradient = objective.deviance_and_gradient(x)
        assert grid_value == pytest.approx(value, rel=1e-13)
        np.testing.assert_allclose(grid_gradient, gradient, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(objective._schur(x), schur, rtol=1e-11, atol=1e-11)


def test_grid_matrix_form_falls_back_to_cells_where_exp_overflows():
    """Past |eta| > 709 the outer sum overflows; the state is then the cell path's."""
    c = args("synthetic_balanced")
    x = np.array([0.8, 0.4, -750.0, 0.5, 0.9, 0.2])
    grid_cells = glmm_cells._encode(*c, None, grid=True)
    expected = laplace._Laplace(grid_cells).deviance(x)
    objective = grid_laplace._GridLaplace(grid_cells)
    state = objective.modes(laplace._Params.from_packed(x))
    assert state.eta is not None  # the cell path's state
    assert state.deviance == pytest.approx(expected, rel=1e-13)


# --------------------------------------------------------------------------------------------
# Cells and contrasts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*FIXTURES, "synthetic_epochs"])
def test_binomial_cells_is_the_groupby(name):
    items = pd.read_csv(DATA / f"{name}.csv")
    for frame in (items, items.astype({"model": "category", "category": "category"})):
        scored = frame[frame["correct"].notna()].astype({"correct": "float64"})
        expected = (
            scored.groupby(["model", "question_id", "category"], sort=True, observed=True)[
                "correct"
            ]
            .agg(successes="sum", trials="size")
            .reset_index()
        )
        pd.testing.assert_frame_equal(glmm.binomial_cells(frame), expected)


def test_structured_se_is_the_explicit_quadratic_form():
    rng = np.random.default_rng(3)
    root = rng.normal(size=(9, 9))
    cov = root @ root.T
    diagonal, leading = rng.normal(size=7), rng.normal(size=(7, 2))
    jacobian = np.zeros((7, 9))
    jacobian[:, :2], jacobian[:, 2:] = leading, np.diag(diagonal)
    first, second = np.triu_indices(7, k=1)
    np.testing.assert_allclose(
        structured_difference_se(cov, first, second, diagonal, leading),
        difference_se(cov, first, second, jacobian),
        rtol=1e-12,
    )


def test_contrasts_above_30_models_equal_the_explicit_ones(monkeypatch):
    """At 100 models the contrast and effect tables use the structured SEs; forcing the
    explicit Jacobian gives the same numbers to rounding."""
    glmm_fit, gee_fit = board_fit("schur"), board_gee(None)
    tables = [
        logistic.glmm_contrasts(glmm_fit),
        logistic.gee_contrasts(gee_fit),
        logistic.glmm_effect_table(glmm_fit),
    ]
    monkeypatch.setattr(logistic, "EXPLICIT_JACOBIAN_MAX_MODELS", 1000)
    explicit = [
        logistic.glmm_contrasts(glmm_fit),
        logistic.gee_contrasts(gee_fit),
        logistic.glmm_effect_table(glmm_fit),
    ]
    for ours, reference in zip(tables, explicit, strict=True):
        pd.testing.assert_frame_equal(ours, reference, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# The scores matrix as input (what the workflow's job reads)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["synthetic_incomplete", "synthetic_balanced", "binary_epochs", "synthetic_epochs"]
)
def test_the_matrix_gives_the_long_tables_fits_bit_for_bit(name):
    """compare_logistic on the question x model matrix is compare_logistic on the item table:
    the same cells in the same order reach both fits (the default run's tables stay
    byte-identical), with missing cells, one sample per cell and 1 to 4 epochs."""
    items = pd.read_csv(DATA / f"{name}.csv")
    wide = wide_scores(items)
    expected, result = logistic.compare_logistic(items), logistic.compare_logistic(wide)
    for part in ("contrasts", "effects", "summary"):
        pd.testing.assert_frame_equal(getattr(result, part), getattr(expected, part))
    assert logistic.fit_obstacle(wide, 10**6) is None


def test_the_matrix_is_laid_out_as_the_grid_above_30_models():
    """A complete matrix at 40 models is fitted on the grid without a table of rows: the
    estimates of the rows' fit (the same objective summed in another order) to rounding."""
    rng = np.random.default_rng(7)
    n_models, n_questions = 40, 240
    logit = rng.normal(0.3, 0.8, n_models)[:, None] + rng.normal(0, 1.0, n_questions)[None, :]
    correct = (rng.random((n_models, n_questions)) < special.expit(logit)).astype(int)
    items = pd.DataFrame(
        {
            "model": np.repeat([f"m{k:02d}" for k in range(n_models)], n_questions),
            "question_id": np.tile(np.arange(n_questions), n_models),
            "category": np.tile(np.arange(n_questions) % 6, n_models).astype(str),
            "correct": correct.reshape(-1),
        }
    )
    wide = wide_scores(items)
    grid = glmm.fit_glmm_wide(wide)
    c = glmm.binomial_cells(items)
    rows = glmm.fit_glmm(
        *[c[k] for k in ("successes", "trials", "model", "question_id")], c["category"]
    )
    assert grid.cov_source == rows.cov_source == "schur" and grid.converged
    np.testing.assert_allclose(grid.params, rows.params, rtol=1e-9, atol=1e-11)
    assert grid.theta["category"] == pytest.approx(rows.theta["category"], rel=1e-9)
    assert grid.laplace_deviance == pytest.approx(rows.laplace_deviance, rel=1e-13)
    np.testing.assert_allclose(grid.cov, rows.cov, rtol=1e-7)
    assert grid.question_levels == rows.question_levels
    assert [str(c) for c in grid.category_levels] == [str(c) for c in rows.category_levels]
    gee_grid = gee.fit_gee_wide(wide)
    gee_rows = gee.fit_gee(*[c[k] for k in ("successes", "trials", "model", "question_id")])
    np.testing.assert_allclose(gee_grid.params, gee_rows.params, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gee_grid.cov, gee_rows.cov, rtol=1e-10)


def test_the_matrix_names_partial_credit_as_the_table_does():
    """Partial credit in the matrix: a single sample of 0.5, and two epochs of 0.5 whose mean
    (0.5) and count (2) look like one success in two; their within-cell sum of squares (0, not
    0.5) gives them away."""
    items = pd.read_csv(DATA / "synthetic_balanced.csv")
    single = items.assign(correct=items["correct"].astype(float))
    single.loc[single.index[:3], "correct"] = 0.5
    assert logistic.fit_obstacle(wide_scores(single), 10**6) == (
        "3 scores are neither 0 nor 1 (partial credit has no binomial model)"
    )
    epochs = pd.read_csv(DATA / "synthetic_epochs_balanced.csv")
    first_cell = (epochs["model"] == epochs["model"].iloc[0]) & (
        epochs["question_id"] == epochs["question_id"].iloc[0]
    )
    epochs = epochs.assign(correct=epochs["correct"].astype(float))
    binary = wide_scores(epochs)
    assert binary.non_binary_cells() == 0
    halves = epochs.copy()
    halves.loc[first_cell, "correct"] = [0.5, 0.5, 1.0]  # mean 2/3: as one 0 and two 1s
    assert wide_scores(halves).non_binary_cells() == 1
    assert logistic.fit_obstacle(wide_scores(halves), 10**6) == (
        "1 cell holds a sample neither 0 nor 1 (partial credit has no binomial model)"
    )
    successes, trials = binary.binomial_counts()
    assert trials.sum() == len(epochs) and successes.sum() == epochs["correct"].sum()
    first_model = items["model"] == items["model"].iloc[0]
    perfect = items.assign(correct=np.where(first_model, 1, items["correct"]))
    assert logistic.fit_obstacle(wide_scores(perfect), 10**6) == logistic.fit_obstacle(
        perfect, 10**6
    )
