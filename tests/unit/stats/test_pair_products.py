"""The all-pairs kernels from matrix products (issue 42) against the per-pair definitions.

Every statistic the Gram-matrix kernels give for all pairs at once (counts, paired and unpaired
SEs, McNemar's exact tail, the category-clustered SE, the RM-ANOVA error term, the GEE sandwich,
the logistic GLMM's deviance, gradient and Schur matrix from the margins) is recomputed here pair
by pair, or cell by cell, from its definition, on small seeded boards with and without
categories and with missing cells.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from evalbars.data.scores import wide_scores
from evalbars.stats import omnibus, pair_products, pairwise
from evalbars.stats.intervals import clustered_se
from evalbars.stats.logistic import cells as glmm_cells
from evalbars.stats.logistic import gee, glmm, laplace, margin_laplace
from evalbars.stats.logistic.schur_newton import spd_inverse

from ...helpers import wide_from


def board(n: int = 90, k: int = 9, missing: float = 0.0, seed: int = 11) -> np.ndarray:
    """Questions x models 0/1 scores with question difficulty (so models correlate), two
    models identical and NaN for ``missing`` of the cells."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(0.0, 1.5, (n, 1)) + np.linspace(1.2, -1.2, k)[None, :]
    x = (rng.random((n, k)) < special.expit(logit)).astype(float)
    x[:, 5] = x[:, 4]
    if missing:
        x[rng.random(x.shape) < missing] = np.nan
    return x


def categories(n: int, count: int) -> np.ndarray:
    return np.array([f"c{i % count}" for i in range(n)])


def by_definition(x: np.ndarray, a: int, b: int) -> dict:
    """One pair's statistics from its questions, as the tables define them."""
    both = np.isfinite(x[:, a]) & np.isfinite(x[:, b])
    xa, xb = x[both, a], x[both, b]
    n = int(both.sum())
    d = xa - xb
    n10, n01 = int(np.sum((xa == 1) & (xb == 0))), int(np.sum((xa == 0) & (xb == 1)))
    return {
        "n": n,
        "n10": n10,
        "n01": n01,
        "n11": int(np.sum((xa == 1) & (xb == 1))),
        "diff": d.mean(),
        "se_paired": np.sqrt(d.var() / n),  # population variance (ddof = 0), Miller Eq. 7
        "se_unpaired": np.sqrt((xa.var() + xb.var()) / n),
        # the conditional binomial test on the discordant questions (R binom.test)
        "p_mcnemar": stats.binomtest(n10, n10 + n01).pvalue if n10 + n01 else 1.0,
    }


@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_every_pair_from_the_gram_matrices_is_its_definition(missing):
    x = board(missing=missing)
    k = x.shape[1]
    order = np.random.default_rng(3).permutation(k)
    whole = pairwise.pair_statistics(x, columns=order)
    half = k * (k - 1) // 4
    shards = [pairwise.pair_statistics(x, p, columns=order) for p in [(0, half), (half, 36)]]
    p_exact = pairwise.exact_mcnemar_p(whole["n10"], whole["n01"])
    a, b = np.triu_indices(k, k=1)
    y = x[:, order]
    for i, (u, v) in enumerate(zip(a, b, strict=True)):
        ref = by_definition(y, u, v)
        for key in ("n", "n10", "n01"):
            assert whole[key][i] == ref[key], (key, u, v)
        for key in ("diff", "se_paired", "se_unpaired"):
            assert whole[key][i] == pytest.approx(ref[key], rel=1e-12, abs=1e-15), (key, u, v)
        assert p_exact[i] == pytest.approx(ref["p_mcnemar"], rel=1e-10), (u, v)
    for key in pairwise.PAIR_STATISTICS:  # a shard's rows are the whole table's, to the bit
        np.testing.assert_array_equal(np.concatenate([s[key] for s in shards]), whole[key])


def test_the_gram_matrix_counts_what_both_models_got_right():
    x = board(n=60, k=7)
    binary, answered = pair_products.binary_matrix(x)
    assert answered is None and binary.dtype == np.float32
    g = pair_products.gram(binary)
    for u in range(7):
        for v in range(7):
            assert g[u, v] == (by_definition(x, u, v)["n11"] if u != v else x[:, u].sum())
    totals = pair_products.binary_totals(x)
    np.testing.assert_array_equal(totals[0], x.sum(axis=0))
    np.testing.assert_array_equal(totals[1], x.sum(axis=1))
    assert pair_products.binary_totals(board(n=60, k=7, missing=0.1)) is None
    assert pair_products.binary_matrix(x * 0.5) is None  # partial credit: no counts


def test_the_whole_pair_table_of_a_board_is_the_loop_over_pairs():
    """The table the workflow writes: pairs in accuracy order, exact McNemar on every pair."""
    x = board(n=80, k=8, missing=0.1)
    wide = wide_from(x.T, models=[f"m{i}" for i in range(x.shape[1])])
    table = pairwise.pairwise_table(wide)
    position = {m: i for i, m in enumerate(wide.models)}
    for row in table.itertuples():
        ref = by_definition(x, position[row.model_a], position[row.model_b])
        assert (row.n, row.n10, row.n01) == (ref["n"], ref["n10"], ref["n01"])
        assert row.se_paired == pytest.approx(ref["se_paired"], rel=1e-12, abs=1e-15)
        assert row.p_mcnemar == pytest.approx(ref["p_mcnemar"], rel=1e-10)


@pytest.mark.parametrize("n_categories", [1, 2, 6])
def test_clustered_se_of_every_pair_is_millers_per_pair(n_categories):
    x = board(n=72, k=7)
    labels = categories(len(x), n_categories)
    order = [6, 0, 3, 1, 5, 2, 4]
    fast = pair_products.clustered_pair_se(x, labels, columns=order)
    a, b = np.triu_indices(7, k=1)
    y = x[:, order]
    expected = [clustered_se(y[:, u] - y[:, v], labels) for u, v in zip(a, b, strict=True)]
    if n_categories == 1:  # one cluster: not estimable
        assert np.all(np.isnan(fast)) and np.all(np.isnan(expected))
    else:
        np.testing.assert_allclose(fast, expected, rtol=1e-10, atol=1e-15)


def test_rm_anova_of_a_large_0_1_board_from_counts_is_the_direct_computation(monkeypatch):
    """More than one block of questions: SS_error from exact integer totals and the sphericity
    correction from the Gram matrix, against the two-way residuals summed cell by cell."""
    x = board(n=120, k=8)
    direct = omnibus.rm_anova(x)  # one block: the residuals themselves
    monkeypatch.setattr("evalbars.data.blocks.BLOCK_CELLS", 8 * 16)
    counted = omnibus.rm_anova(x)
    residual = x - x.mean(axis=0) - x.mean(axis=1, keepdims=True) + x.mean()
    assert counted.ss_error == pytest.approx(float((residual**2).sum()), rel=1e-13)
    for field in counted._fields:
        np.testing.assert_allclose(getattr(counted, field), getattr(direct, field), rtol=1e-12)
    fast, slow = omnibus.friedman(x), omnibus.friedman(x + 0.0)
    assert fast.statistic == pytest.approx(stats.friedmanchisquare(*x.T).statistic, rel=1e-12)
    assert fast.statistic == slow.statistic


def grid_items(k: int, n: int, seed: int, missing: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0.2, 0.9, k)[:, None] + rng.normal(0.0, 1.2, n)[None, :]
    correct = (rng.random((k, n)) < special.expit(logit)).astype(int)
    items = pd.DataFrame(
        {
            "model": np.repeat([f"m{i:02d}" for i in range(k)], n),
            "question_id": np.tile(np.arange(n), k),
            "category": np.tile(np.arange(n) % 5, k).astype(str),
            "correct": correct.reshape(-1),
        }
    )
    return items[rng.random(len(items)) >= missing] if missing else items


def test_gee_sandwich_from_the_gram_matrix_is_the_grid_computation():
    """Complete 0/1 board: the meat from Y'Y and rank-two terms, the bread by Sherman-Morrison,
    against the estimating functions' products U'U and the bread's inverse on the grid."""
    items = grid_items(36, 150, seed=5)
    wide = wide_scores(items)
    fast = gee.fit_gee_wide(wide, method="closed_form")
    successes, trials = wide.binomial_counts()
    slow = gee._closed_form_grid(successes, trials, tuple(wide.models), 100, 1e-10, None)
    np.testing.assert_allclose(fast.params, slow.params, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast.cov, slow.cov, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(fast.cov_naive, slow.cov_naive, rtol=1e-9, atol=1e-15)
    assert fast.alpha == pytest.approx(slow.alpha, rel=1e-12)
    assert fast.converged and slow.converged


@pytest.mark.parametrize("missing", [0.0, 0.04])
def test_glmm_from_the_margins_is_the_cell_sum(missing):
    """Deviance, exact gradient and Schur matrix of the nested model from the margins
    (interpolated cell sums, missing cells as corrections) against the sum over cells."""
    items = grid_items(60, 300, seed=8, missing=missing)
    c = glmm.binomial_cells(items)
    args = [c[key] for key in ("successes", "trials", "model", "question_id", "category")]
    x = np.r_[0.9, 0.35, np.linspace(-1.5, 1.8, 60)]
    cells = laplace._Laplace(glmm_cells._encode(*args, None, grid=False))
    value, gradient = cells.deviance_and_gradient(x)
    margins = margin_laplace._MarginLaplace(glmm_cells._encode(*args, None, grid=True))
    assert margins._missing is None if not missing else margins._missing[0].size > 0
    state = margins.modes(laplace._Params.from_packed(x))
    effect = margins._effect(x[0], x[1], state.u, state.v)
    # both sums interpolated: over the models at 300 questions, over the questions at 60 models
    assert not margin_laplace.PanelInterpolation(effect).direct
    assert not margin_laplace.PanelInterpolation(x[2:]).direct
    fast_value, fast_gradient = margins.deviance_and_gradient(x)
    assert fast_value == pytest.approx(value, rel=1e-13)
    np.testing.assert_allclose(fast_gradient, gradient, rtol=1e-9, atol=1e-9)
    schur = margins._schur(x)
    np.testing.assert_allclose(schur, cells._schur(x), rtol=1e-11, atol=1e-11)
    inverse = margins.schur_inverse(x)  # Woodbury on the low-rank form (complete grids)
    if missing:
        assert inverse is None
    else:
        np.testing.assert_allclose(inverse, spd_inverse(schur), rtol=1e-9, atol=1e-13)


def test_panel_interpolation_reaches_rounding():
    points = np.linspace(-9.0, 7.5, 3000)
    grid = margin_laplace.PanelInterpolation(points)
    assert not grid.direct and grid.nodes.size < points.size
    values = np.column_stack([special.expit(grid.nodes), -np.logaddexp(0.0, -grid.nodes)])
    exact = np.column_stack([special.expit(points), -np.logaddexp(0.0, -points)])
    np.testing.assert_allclose(grid(values), exact, rtol=0, atol=1e-14)
    np.testing.assert_allclose(grid.matrix() @ values, exact, rtol=0, atol=1e-14)
    few = margin_laplace.PanelInterpolation(points[:10])  # fewer points than nodes: direct
    assert few.direct and np.array_equal(few.nodes, points[:10])
