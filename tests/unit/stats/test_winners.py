"""The winner's-curse readings, the confidence sets for the best, and cost: against honestboard
0.6.1 (tests/reference/make_winners_reference.py), closed forms and hand-computed cases."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from evalbars.stats import cost
from evalbars.stats.best import sets as best_set
from evalbars.stats.best import winners
from evalbars.stats.cluster_robust import cr2_mean
from evalbars.studies.winners_coverage import simulate_winner_coverage

REFERENCE = json.loads(
    (Path(__file__).parents[2] / "reference" / "winners_output" / "honestboard.json").read_text()
)
BOARDS = REFERENCE["boards"]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_conditional_reading_equals_honestboard(board):
    # No Monte Carlo in the conditional reading: the two implementations agree to the solver.
    ref = BOARDS[board]
    reading = winners.winner_conditional(ref["scores"], np.array(ref["cov"]))
    assert reading.estimate == pytest.approx(ref["conditional"]["estimate"], abs=1e-6)
    assert [reading.low, reading.high] == pytest.approx(ref["conditional"]["ci"], abs=1e-6)


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_hybrid_and_zoom_readings_equal_honestboard_to_its_monte_carlo_error(board):
    # honestboard's critical values are quantiles of 20,000 plain draws (error ~0.02 at 0.5%).
    ref = BOARDS[board]
    cov = np.array(ref["cov"])
    hybrid = winners.winner_hybrid(ref["scores"], cov)
    assert hybrid.estimate == pytest.approx(ref["hybrid"]["estimate"], abs=1e-3)
    assert [hybrid.low, hybrid.high] == pytest.approx(ref["hybrid"]["ci"], abs=1e-3)
    zoom = winners.winner_zoom(ref["scores"], cov)
    assert [zoom.low, zoom.high] == pytest.approx(ref["zoom"]["ci"], abs=1e-3)
    assert zoom.plausible == ref["zoom"]["plausible"]


def test_the_worked_example_of_the_issue():
    independent = np.eye(4) * 0.02**2
    hybrid = winners.winner_hybrid([0.80, 0.78, 0.75, 0.70], independent)
    assert (hybrid.estimate, hybrid.low, hybrid.high) == pytest.approx(
        (0.79376, 0.7388, 0.8395), abs=1e-3
    )
    zoom = winners.winner_zoom([0.80, 0.78, 0.75, 0.70], independent)
    assert (zoom.low, zoom.high) == pytest.approx((0.7495, 0.8505), abs=1e-3)
    correlated = 0.02**2 * (0.6 + 0.4 * np.eye(4))
    hybrid = winners.winner_hybrid([0.80, 0.78, 0.75, 0.70], correlated)
    assert (hybrid.low, hybrid.high) == pytest.approx((0.7566, 0.8398), abs=1e-3)


@pytest.mark.parametrize("models", [2, 4, 10])
@pytest.mark.parametrize("tail", [0.005, 0.05])
def test_simultaneous_critical_value_of_independent_components_is_sidak(models, tail):
    # (2 Phi(c) - 1)^K = 1 - tail exactly for independent components.
    exact = special.ndtri(0.5 + 0.5 * (1 - tail) ** (1 / models))
    value = winners.simultaneous_critical_value(np.eye(models) * 3.0, tail)
    assert value == pytest.approx(exact, abs=2e-3)
    one_sided = special.ndtri((1 - tail) ** (1 / models))
    assert winners.simultaneous_critical_value(
        np.eye(models), tail, one_sided=True
    ) == pytest.approx(one_sided, abs=2e-3)


def test_simultaneous_critical_value_of_equicorrelated_components_against_the_integral():
    # P(max_j Z_j <= c) for equicorrelated rho: integral over the common factor (Dunnett 1955).
    rho, size, tail = 0.5, 6, 0.05
    value = winners.simultaneous_critical_value(
        rho + (1 - rho) * np.eye(size), tail, one_sided=True
    )
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)

    def inside(c):
        return np.sum(
            weights * special.ndtr((c - np.sqrt(rho) * nodes) / np.sqrt(1 - rho)) ** size
        ) / np.sqrt(2 * np.pi)

    # 2e-4 is 1.6 SDs of the estimate over seeds (1.2e-4, 60 seeds): the draws of the default
    # seed are the same on every CPU (test below), so this holds everywhere or nowhere
    assert inside(value) == pytest.approx(1 - tail, abs=2e-4)


def test_the_draws_do_not_depend_on_the_eigenvectors_lapack_picks(monkeypatch):
    # An equicorrelated matrix has one eigenvalue five times: any orthonormal basis of its space
    # is an answer, and the basis LAPACK returns differs between CPUs. The critical values must
    # not (the same seed gives the same table on every machine).
    cov = 0.5 + 0.5 * np.eye(6)
    one = winners.simultaneous_critical_value(cov, 0.05, one_sided=True)
    many = winners.simultaneous_critical_values(np.stack([cov, np.eye(6)]), 0.05)
    eigh = np.linalg.eigh
    turn = np.linalg.qr(np.random.default_rng(3).normal(size=(5, 5)))[0]

    def another_basis(matrix):
        values, vectors = eigh(matrix)
        vectors = vectors.copy()
        vectors[..., :5] = vectors[..., :5] @ turn  # the repeated eigenvalue's space, turned
        return values, vectors

    monkeypatch.setattr(np.linalg, "eigh", another_basis)
    assert winners.simultaneous_critical_value(cov, 0.05, one_sided=True) == pytest.approx(
        one, abs=1e-12
    )
    np.testing.assert_allclose(
        winners.simultaneous_critical_values(np.stack([cov, np.eye(6)]), 0.05), many, atol=1e-12
    )


def test_bonferroni_above_the_monte_carlo_dimension(monkeypatch):
    monkeypatch.setattr(winners, "MONTE_CARLO_MAX_DIMENSION", 3)
    assert winners.simultaneous_critical_value(np.eye(5), 0.05) == pytest.approx(
        special.ndtri(1 - 0.05 / 10)
    )


def test_mean_covariance_gives_the_paired_and_the_cr2_standard_errors():
    rng = np.random.default_rng(7)
    scores = (rng.random((300, 3)) < [0.6, 0.55, 0.5]).astype(float)
    cov = winners.mean_covariance(scores)
    gap = scores[:, 0] - scores[:, 1]
    # The paired SE: population variance of the per-question differences over n.
    assert cov[0, 0] + cov[1, 1] - 2 * cov[0, 1] == pytest.approx(gap.var() / 300)
    clusters = rng.integers(0, 7, 300)
    clustered = winners.mean_covariance(scores, clusters)
    assert np.sqrt(clustered[0, 0]) == pytest.approx(cr2_mean(scores[:, 0], clusters).se)
    assert np.sqrt(clustered[0, 0] + clustered[1, 1] - 2 * clustered[0, 1]) == pytest.approx(
        cr2_mean(gap, clusters).se
    )
    assert winners.mean_variance(scores, clusters) == pytest.approx(np.diag(clustered))


def test_selection_truncation_by_brute_force():
    rng = np.random.default_rng(3)
    factor = rng.normal(size=(5, 5))
    cov = factor @ factor.T / 50
    scores = rng.normal(0.6, 0.05, 5)
    winner = int(scores.argmax())
    lower, upper = winners.selection_truncation(scores, cov, winner)
    # The winner stays the winner exactly while its score moves inside [lower, upper] with
    # Z held fixed, and loses just outside.
    slope = cov[:, winner] / cov[winner, winner]
    rest = scores - slope * scores[winner]

    def wins(value):
        moved = rest + slope * value
        return moved.argmax() == winner

    assert lower <= scores[winner] <= upper
    for value in np.linspace(max(lower, -5.0) + 1e-9, min(upper, 5.0) - 1e-9, 50):
        assert wins(value)
    if np.isfinite(lower):
        assert not wins(lower - 1e-6)
    if np.isfinite(upper):
        assert not wins(upper + 1e-6)


def test_truncated_normal_cdf_equals_scipy_and_stays_finite_far_in_the_tail():
    value = winners.truncated_normal_cdf(0.3, 0.1, 0.2, -0.1, 0.5)
    expected = stats.truncnorm(a=-1.0, b=2.0, loc=0.1, scale=0.2).cdf(0.3)
    assert value == pytest.approx(expected, rel=1e-12)
    # Truncation 40 SDs above the mean, where Phi(40) - Phi(...) is 0 in double precision:
    # 1 - P(Z > 40.02)/P(Z > 40), the ratio from the log tails.
    far = winners.truncated_normal_cdf(40.02, 0.0, 1.0, 40.0, np.inf)
    expected = 1 - np.exp(special.log_ndtr(-40.02) - special.log_ndtr(-40.0))
    assert far == pytest.approx(expected, rel=1e-10)
    assert 0.5 < far < 0.6


def test_hybrid_interval_lies_inside_the_projection_interval_and_batches_agree():
    cov = 0.01**2 * (0.5 + 0.5 * np.eye(6))
    rng = np.random.default_rng(11)
    boards = rng.multivariate_normal(np.full(6, 0.6), cov, size=5)
    batch = winners.winner_hybrid(boards, cov)
    c = winners.simultaneous_critical_value(cov, 0.005)
    for row, scores in enumerate(boards):
        one = winners.winner_hybrid(scores, cov)
        assert (one.estimate, one.low, one.high) == pytest.approx(
            (batch.estimate[row], batch.low[row], batch.high[row]), abs=1e-12
        )
        assert scores.max() - c * 0.01 <= one.low <= one.estimate <= one.high
        assert one.high <= scores.max() + c * 0.01


def test_a_zero_standard_error_gives_no_reading():
    reading = winners.winner_hybrid([0.9, 0.5], np.zeros((2, 2)))
    assert np.isnan(reading.estimate) and np.isnan(reading.low)


def test_winner_table_refuses_a_model_that_did_not_win():
    scores = np.array([[1, 0], [1, 1], [0, 0], [1, 0.0]])
    with pytest.raises(ValueError, match="not the top model"):
        winners.winner_table(scores, ["a", "b"], winner="b")
    table = winners.winner_table(scores, ["a", "b"])
    assert table["method"].tolist() == list(winners.WINNER_METHODS)
    assert (table["model"] == "a").all() and (table["questions"] == 4).all()


# --- confidence sets for the best -----------------------------------------------------------


def test_mcb_of_two_models_is_the_one_sided_z_test():
    # K = 2: d = z_{1-alpha}, and b stays in exactly when a - b < z * SE(a - b).
    cov = np.array([[4e-4, 1e-4], [1e-4, 4e-4]])
    se = np.sqrt(4e-4 + 4e-4 - 2e-4)
    z = special.ndtri(0.95)
    for gap in (z * se - 1e-6, z * se + 1e-6):
        table = best_set.best_set([0.7 + gap, 0.7], cov, ["a", "b"])
        assert table["critical_value"].tolist() == pytest.approx([z, z], abs=2e-3)
        assert table["in_set"].tolist() == [True, gap < z * se]


def test_mcb_keeps_only_a_clear_winner():
    table = best_set.best_set([0.9, 0.7, 0.65], np.eye(3) * 0.01**2, list("abc"))
    assert table.loc[table["in_set"], "model"].tolist() == ["a"]
    # The worked example: the last model is out, the near three in.
    table = best_set.best_set([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2, list("abcd"))
    assert table["in_set"].tolist() == [True, True, True, False]


def test_top_k_set_of_every_model_holds_them_all_and_drops_the_clearly_worse():
    cov = np.eye(4) * 0.01**2
    assert best_set.top_k_set([0.8, 0.7, 0.6, 0.5], cov, 4)["in_set"].all()
    table = best_set.top_k_set([0.80, 0.79, 0.60, 0.50], cov, 2, list("abcd"))
    assert table["in_set"].tolist() == [True, True, False, False]


def test_the_coverage_study_in_a_small_setting():
    # Twenty tied models: the naive interval of the winner under-covers badly, the hybrid keeps
    # its level, the MCB set holds the unique best (spacing 0.5).
    tied = simulate_winner_coverage(20, 0.0, 0.0, replicates=800)
    assert tied["naive_coverage"] < 0.75
    assert tied["hybrid_coverage"] >= 0.93
    spaced = simulate_winner_coverage(20, 0.5, 0.5, replicates=800)
    assert spaced["best_set_coverage"] >= 0.95
    assert abs(spaced["hybrid_median_bias"]) < abs(spaced["naive_median_bias"])


# --- cost -------------------------------------------------------------------------------------


def test_cost_table_by_hand():
    correct = np.array([[1, 0], [1, 1], [0, 1], [1, 1.0]])
    spend = np.array([[0.02, 0.01], [0.03, 0.01], [0.02, 0.02], [0.01, 0.01]])
    table = cost.cost_table(correct, spend, ["a", "b"])
    a = table.iloc[0]
    # Model a: accuracy 0.75, mean cost 0.02; population (co)variances over n, divided by n.
    var_a = np.var(correct[:, 0]) / 4
    var_c = np.var(spend[:, 0]) / 4
    cov_ac = np.mean((correct[:, 0] - 0.75) * (spend[:, 0] - 0.02)) / 4
    assert a["cost_se"] == pytest.approx(np.sqrt(var_c))
    ratio = 0.75 / 0.02
    ratio_se = ratio * np.sqrt(var_a / 0.75**2 + var_c / 0.02**2 - 2 * cov_ac / (0.75 * 0.02))
    assert a["accuracy_per_dollar"] == pytest.approx(ratio)
    z = special.stdtrit(3, 0.975)  # t on n - 1 = 3 degrees of freedom (cost.reference_df)
    assert (a["apd_low"], a["apd_high"]) == pytest.approx(
        (max(ratio - z * ratio_se, 0), ratio + z * ratio_se)
    )
    assert a["cost_low"] >= 0


def test_frontier_by_hand():
    # a: accurate and costly; b: dominated by c (less accurate and dearer); c: cheap.
    n = 400
    rng = np.random.default_rng(5)
    correct = (rng.random((n, 3)) < [0.85, 0.55, 0.70]).astype(float)
    spend = np.column_stack([np.full(n, 3.0), np.full(n, 1.0), np.full(n, 0.5)])
    spend = spend + rng.normal(0, 0.05, (n, 3))
    table = cost.frontier_set(correct, spend, list("abc"))
    assert table["on_frontier"].tolist() == [True, False, True]
    assert table["in_frontier_set"].tolist() == [True, False, True]
    assert table["dominated_by"].tolist() == ["", "c", ""]


def test_noninferior_at_cost_is_the_larger_of_two_one_sided_p_values():
    rng = np.random.default_rng(2)
    n = 500
    correct = (rng.random((n, 2)) < [0.78, 0.80]).astype(float)
    spend = np.column_stack([rng.gamma(2.0, 0.1, n), rng.gamma(2.0, 0.5, n)])
    p = cost.cost_claim_p(
        correct,
        spend,
        ["a", "b"],
        "a",
        "b",
        kind="noninferior_at_cost",
        margin=0.03,
        cost_ratio=0.5,
    )
    gap = correct[:, 0] - correct[:, 1]
    p_accuracy = special.stdtr(n - 1, -(gap.mean() + 0.03) / (gap.std() / np.sqrt(n)))
    saving = 0.5 * spend[:, 1] - spend[:, 0]
    p_cost = special.stdtr(n - 1, -saving.mean() / (saving.std() / np.sqrt(n)))
    assert p == pytest.approx(max(p_accuracy, p_cost))


def test_on_frontier_claim_by_hand():
    n = 300
    rng = np.random.default_rng(4)
    correct = (rng.random((n, 3)) < [0.9, 0.6, 0.5]).astype(float)
    spend = np.column_stack([np.full(n, 1.0), np.full(n, 0.2), np.full(n, 0.1)])
    spend = spend + rng.normal(0, 0.02, (n, 3))
    p = cost.cost_claim_p(correct, spend, list("abc"), "a", kind="on_frontier")
    # a is far more accurate than both: each rival's doubled min p is tiny.
    pieces = []
    for rival in (1, 2):
        gap = correct[:, 0] - correct[:, rival]
        p_accuracy = special.stdtr(n - 1, -gap.mean() / (gap.std() / np.sqrt(n)))
        cheaper = spend[:, rival] - spend[:, 0]
        p_cheaper = special.stdtr(n - 1, -cheaper.mean() / (cheaper.std() / np.sqrt(n)))
        pieces.append(min(1.0, 2 * min(p_accuracy, p_cheaper)))
    assert p == pytest.approx(max(pieces))
    # The cheapest model: cheaper than both, significantly.
    assert cost.cost_claim_p(correct, spend, list("abc"), "c", kind="on_frontier") < 1e-6
    assert isinstance(cost.cost_table(correct, spend, list("abc")), pd.DataFrame)
