"""The Bradley-Terry fit of battles against statsmodels, R (BradleyTerry2, sandwich), arena-rank
and Arena-Hard-Auto's own fits, and its identities (weights, sides, identification)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize, special

from evalbars.stats.bradley_terry import (
    ELO_SCALE,
    aggregate_battles,
    cluster_bootstrap,
    elo_ratings,
    fit_bradley_terry,
    rating_differences,
)

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data" / "battles"
R_OUTPUT = TESTS / "reference" / "r_output" / "battles"
REFERENCE = TESTS / "reference" / "battles"


def _battles(name):
    frame = pd.read_csv(DATA / f"{name}.csv", dtype=str)
    outcome = frame["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    return frame, outcome


def _design(frame, models):
    """The +1/-1 design without the first model's column."""
    x = np.zeros((len(frame), len(models)))
    rows = np.arange(len(frame))
    x[rows, pd.Index(models).get_indexer(frame["model_a"])] = 1.0
    x[rows, pd.Index(models).get_indexer(frame["model_b"])] = -1.0
    return x[:, 1:]


# --- The worked example (methods notes 2026-12-06, section 3b) -------------------------------


def test_worked_example_matches_the_published_numbers_and_statsmodels_live():
    frame, outcome = _battles("worked_example")
    fit = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome)
    # The notes' numbers (statsmodels Logit on the +1/-1 design, reference D).
    expected = {
        ("A", "D"): (1.240950, 0.158053, 0.156010),
        ("B", "D"): (0.696733, 0.150253, 0.150982),
        ("C", "D"): (0.433912, 0.148888, 0.148708),
        ("A", "B"): (0.544217, 0.150048, 0.150930),
    }
    for (a, b), (beta, se_model, se_hc0) in expected.items():
        assert fit.difference(a, b, "model")[0] == pytest.approx(beta, abs=1e-6)
        assert fit.difference(a, b, "model")[1] == pytest.approx(se_model, abs=1e-6)
        assert fit.difference(a, b, "per_battle")[1] == pytest.approx(se_hc0, abs=1e-6)
    assert fit.loglik == pytest.approx(-379.832813, abs=1e-6)
    # statsmodels live, reference D: the same to its own convergence.
    models = ["D", "A", "B", "C"]
    x = _design(frame, models)
    model = sm.Logit(outcome, x).fit(disp=0, tol=1e-12)
    robust = sm.Logit(outcome, x).fit(disp=0, tol=1e-12, cov_type="HC0")
    for i, m in enumerate(models[1:]):
        beta, se = fit.difference(m, "D", "model")
        assert beta == pytest.approx(model.params[i], abs=1e-9)
        assert se == pytest.approx(model.bse[i], abs=1e-9)
        assert fit.difference(m, "D", "per_battle")[1] == pytest.approx(robust.bse[i], abs=1e-9)
    assert fit.loglik == pytest.approx(model.llf, abs=1e-9)
    # Elo: 400/ln 10 per unit; D at 1000 puts A at 1000 + 215.58.
    table = elo_ratings(fit, "per_battle", anchor="D").set_index("model")
    assert table.loc["A", "rating"] == pytest.approx(1000 + 215.58, abs=0.01)
    assert table.loc["D", "se"] == 0


# --- R: BradleyTerry2 and sandwich on a clustered synthetic set --------------------------------


def test_clustered_set_matches_bradleyterry2_and_the_sandwich_package():
    ref = json.loads((R_OUTPUT / "battles_clustered.json").read_text())
    frame, outcome = _battles("clustered")
    models = ref["models"]
    others = models[1:]
    fit = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"], models=models
    )
    by_judge = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["judge"], models=models
    )
    assert fit.theta[1:] == pytest.approx([ref["btm"]["coef"][m] for m in others], abs=1e-9)
    assert fit.theta[1:] == pytest.approx([ref["glm"]["coef"][m] for m in others], abs=1e-9)
    assert fit.loglik == pytest.approx(ref["glm"]["loglik"], abs=1e-8)
    for ours, theirs in (
        (fit.covariances["model"], ref["btm"]["vcov"]),
        (fit.covariances["model"], ref["vcov"]["model"]),
        (fit.covariances["per_battle"], ref["vcov"]["hc0"]),
        (fit.covariances["clustered"], ref["vcov"]["cr1_prompt_id"]),
        (fit.covariances["clustered"], ref["vcov"]["cr1_prompt_id_by_hand"]),
        (by_judge.covariances["clustered"], ref["vcov"]["cr1_judge"]),
    ):
        assert ours[1:, 1:] == pytest.approx(np.array(theirs), rel=1e-7, abs=1e-12)
    assert fit.n_clusters == ref["clusters"]["prompt_id"] == 150
    assert by_judge.n_clusters == ref["clusters"]["judge"] == 25


def test_worked_example_matches_r_too():
    ref = json.loads((R_OUTPUT / "battles_worked_example.json").read_text())
    frame, outcome = _battles("worked_example")
    fit = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome)
    assert fit.theta[1:] == pytest.approx([ref["btm"]["coef"][m] for m in "BCD"], abs=1e-9)
    assert fit.covariances["per_battle"][1:, 1:] == pytest.approx(
        np.array(ref["vcov"]["hc0"]), rel=1e-7
    )


# --- arena-rank 0.1.1 ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["worked_example", "clustered"])
def test_ratings_match_arena_rank_after_its_scale_and_offset(name):
    ref = json.loads((REFERENCE / "arena_rank_output.json").read_text())[name]
    frame, outcome = _battles(name)
    fit = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome)
    ours = elo_ratings(fit, "per_battle").set_index("model")  # mean 1000, as arena-rank's
    theirs = pd.Series(ref["ratings"], index=ref["competitors"])
    # arena-rank's L-BFGS stops at a relative loss change of 1e-9: 1.03e-4 Elo points from the
    # optimum on the worked example (2.0e-4 in a difference), 3e-6 on the clustered set.
    tolerance = {"worked_example": 2.5e-4, "clustered": 1e-5}[name]
    assert ours["rating"].reindex(theirs.index).to_numpy() == pytest.approx(
        theirs.to_numpy(), abs=tolerance
    )
    # Differences: identification-free, the same to L-BFGS's convergence.
    diff = ELO_SCALE * rating_differences(fit, "model")[0]
    index = pd.Index(fit.models).get_indexer(theirs.index)
    assert diff[np.ix_(index, index)] == pytest.approx(
        theirs.to_numpy()[:, None] - theirs.to_numpy()[None, :], abs=tolerance
    )
    # arena-rank's sandwich is HC0 with the ridge 1e-5 N on the Hessian's diagonal; written
    # out at our estimates it gives its variances, and without the ridge our per-battle ones.
    x = np.zeros((len(frame), len(fit.models)))
    x[np.arange(len(frame)), pd.Index(fit.models).get_indexer(frame["model_a"])] = 1.0
    x[np.arange(len(frame)), pd.Index(fit.models).get_indexer(frame["model_b"])] = -1.0
    p = special.expit(x @ fit.theta)
    hessian = x.T @ (x * (p * (1 - p))[:, None])
    meat = x.T @ (x * ((outcome - p) ** 2)[:, None])
    bread = np.linalg.inv(hessian + 1e-5 * len(frame) * np.eye(len(fit.models)))
    ridged = ELO_SCALE**2 * np.diag(bread @ meat @ bread)
    assert ridged[index] == pytest.approx(ref["variances"], rel=1e-5)
    assert ours["se"].reindex(theirs.index).to_numpy() ** 2 == pytest.approx(
        ref["variances"], rel=5e-4
    )


# --- Ties: Rao-Kupper and Davidson ----------------------------------------------------------------


def _rk_case():
    ref = json.loads((REFERENCE / "arena_hard_rk_output.json").read_text())
    a, b, y = [], [], []
    for pair, (wins, ties, losses) in ref["counts"].items():
        first, second = pair.split(" vs ")
        for outcome, n in ((1.0, wins), (0.5, ties), (0.0, losses)):
            a, b, y = a + [first] * n, b + [second] * n, y + [outcome] * n
    return ref, np.array(a), np.array(b), np.array(y)


def test_rao_kupper_matches_arena_hard_autos_own_fit():
    ref, a, b, y = _rk_case()
    fit = fit_bradley_terry(a, b, y, ties="rao_kupper")
    theirs = ref["rk_tight"]
    for m in ("m1", "m2", "m3"):
        assert fit.difference(m, "base", "model")[0] == pytest.approx(
            theirs["difference_from_base"][m], abs=2e-5
        )
    assert fit.tie_parameter == pytest.approx(theirs["eta"], abs=2e-5)

    # With show_result.py's defaults its L-BFGS stops short: our estimate has the higher
    # likelihood under its own loss.
    def rk_loglik(diffs, eta):
        theta = dict(zip(("base", "m1", "m2", "m3"), [0.0, *diffs], strict=True))
        eta_i = np.array([theta[i] - theta[j] for i, j in zip(a, b, strict=True)])
        won, lost = special.expit(eta_i - eta), special.expit(-eta_i - eta)
        return np.sum(np.log(np.select([y == 1, y == 0], [won, lost], 1 - won - lost)))

    short = ref["rk_defaults"]
    ours = [fit.difference(m, "base", "model")[0] for m in ("m1", "m2", "m3")]
    assert rk_loglik(ours, fit.tie_parameter) == pytest.approx(fit.loglik, abs=1e-9)
    assert rk_loglik(ours, fit.tie_parameter) > rk_loglik(
        [short["difference_from_base"][m] for m in ("m1", "m2", "m3")], short["eta"]
    )
    bt = fit_bradley_terry(a, b, y)
    for m in ("m1", "m2", "m3"):
        assert bt.difference(m, "base", "model")[0] == pytest.approx(
            ref["bt_tight"]["difference_from_base"][m], abs=2e-5
        )


def _explicit_loglik(ties, a, b, y, models):
    """The tie models' log-likelihoods written out from their papers (independent of ours)."""

    def loglik(params):
        theta = np.concatenate([[0.0], params[:-1]])
        eta = theta[models.get_indexer(a)] - theta[models.get_indexer(b)]
        if ties == "rao_kupper":  # Rao and Kupper (1967): pi_a / (pi_a + nu pi_b), nu = e^tau
            pa, pb, nu = np.exp(eta), 1.0, np.exp(params[-1])  # params[-1] = tau
            won, lost = pa / (pa + nu * pb), pb / (pb + nu * pa)
            tie = 1 - won - lost
        else:  # Davidson (1970): pi_a / (pi_a + pi_b + nu sqrt(pi_a pi_b))
            pa, pb, nu = np.exp(eta), 1.0, params[-1]
            total = pa + pb + nu * np.sqrt(pa * pb)
            won, lost, tie = pa / total, pb / total, nu * np.sqrt(pa * pb) / total
        return np.sum(np.log(np.select([y == 1, y == 0], [won, lost], tie)))

    return loglik


def _numerical_hessian(f, x, h=1e-4):
    n = len(x)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (
                f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j) + f(x - e_i - e_j)
            ) / (4 * h * h)
    return out


@pytest.mark.parametrize("ties", ["rao_kupper", "davidson"])
def test_tie_models_maximise_their_papers_likelihoods(ties):
    frame, outcome = _battles("clustered")
    fit = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome, ties=ties)
    models = pd.Index(fit.models)
    loglik = _explicit_loglik(ties, frame["model_a"], frame["model_b"], outcome, models)
    # Rao-Kupper's tau (nu = e^tau) and Davidson's nu are reported as they are.
    ours = np.concatenate([fit.theta[1:], [fit.tie_parameter]])
    bounds = [(-3, 3)] * (len(ours) - 1) + [(1e-6, 10)]
    with np.errstate(all="ignore"):
        best = optimize.minimize(
            lambda v: -loglik(v), ours + 0.05, method="L-BFGS-B", bounds=bounds,
            options={"ftol": 1e-15, "gtol": 1e-10},
        )  # fmt: skip
    assert best.x == pytest.approx(ours, abs=1e-5)
    assert loglik(ours) == pytest.approx(fit.loglik, abs=1e-8)
    # The model covariance is the inverse observed information; on Davidson's nu (not log nu)
    # only the strengths' block compares.
    k = len(models)
    numeric = np.linalg.inv(-_numerical_hessian(loglik, ours))
    assert fit.covariances["model"][1:k, 1:k] == pytest.approx(numeric[: k - 1, : k - 1], rel=1e-4)


def test_tie_models_need_ties_and_reject_what_they_cannot_fit():
    with pytest.raises(ValueError, match="needs both ties and decided battles"):
        fit_bradley_terry(["a", "b", "a"], ["b", "a", "b"], [1, 1, 0], ties="davidson")
    with pytest.raises(ValueError, match="ties must be one of"):
        fit_bradley_terry(["a", "b"], ["b", "a"], [1, 1], ties="thirds")


# --- Identities ----------------------------------------------------------------------------------


def test_a_weight_of_three_is_three_copies_and_sides_do_not_matter():
    frame, outcome = _battles("clustered")
    weight = np.where(np.arange(len(frame)) % 5 == 0, 3.0, 1.0)
    weighted = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome, weight=weight)
    copies = np.repeat(np.arange(len(frame)), weight.astype(int))
    repeated = fit_bradley_terry(
        frame["model_a"].to_numpy()[copies], frame["model_b"].to_numpy()[copies], outcome[copies]
    )
    assert weighted.theta == pytest.approx(repeated.theta, abs=1e-12)
    assert weighted.covariances["model"] == pytest.approx(repeated.covariances["model"], abs=1e-12)
    # Per battle, a weighted battle is one observation (its score times w), not w of them.
    assert not np.allclose(weighted.covariances["per_battle"], repeated.covariances["per_battle"])
    # Swapping the sides (and the outcome) and shuffling the rows change nothing.
    order = np.random.default_rng(3).permutation(len(frame))
    swapped = fit_bradley_terry(
        frame["model_b"].to_numpy()[order],
        frame["model_a"].to_numpy()[order],
        1 - outcome[order],
        cluster=frame["prompt_id"].to_numpy()[order],
    )
    plain = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"]
    )
    for name in ("model", "per_battle", "clustered"):
        assert swapped.covariances[name] == pytest.approx(plain.covariances[name], abs=1e-12)
    assert swapped.theta == pytest.approx(plain.theta, abs=1e-12)


def test_differences_and_their_ses_do_not_depend_on_the_reference():
    frame, outcome = _battles("clustered")
    first = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"]
    )
    order = list(reversed(first.models))
    second = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"], models=order
    )
    index = pd.Index(second.models).get_indexer(first.models)
    for name in ("model", "per_battle", "clustered"):
        d1, s1 = rating_differences(first, name)
        d2, s2 = rating_differences(second, name)
        assert d1 == pytest.approx(d2[np.ix_(index, index)], abs=1e-10)
        assert s1 == pytest.approx(s2[np.ix_(index, index)], abs=1e-10)
    mean = elo_ratings(first, "clustered")
    assert mean["rating"].mean() == pytest.approx(1000.0)


def test_units_are_sufficient_statistics():
    units = aggregate_battles(
        ["x", "y", "x", "y"], ["y", "x", "y", "x"], [1, 1, 0.5, 0], weight=[1, 2, 1, 1],
        cluster=["p", "p", "q", "q"],
    )  # fmt: skip
    assert units.models == ("x", "y")
    assert units.pair_counts().tolist() == [[2.0, 1.0, 2.0]]  # x won 1 + 1, tied 1, lost 2
    assert units.squares.sum() == pytest.approx(1 + 4 + 1 + 1)
    assert units.n_clusters == 2


def test_a_group_that_never_lost_is_refused_by_name():
    with pytest.raises(ValueError, match=r"\['a'\] never lost"):
        fit_bradley_terry(["a", "a", "b", "c"], ["b", "c", "c", "b"], [1, 1, 1, 1])
    with pytest.raises(ValueError, match="battling itself"):
        fit_bradley_terry(["a", "b"], ["a", "a"], [1, 0])


# --- Style control -------------------------------------------------------------------------------


def test_style_control_is_statsmodels_logit_with_the_features_beside_the_ratings():
    frame, outcome = _battles("clustered")
    decided = outcome != 0.5  # statsmodels' Logit on 0/1 outcomes
    frame, outcome = frame[decided].reset_index(drop=True), outcome[decided]
    rng = np.random.default_rng(7)
    features = pd.DataFrame(
        {"length": rng.standard_normal(len(frame)), "bold": rng.random(len(frame))}
    )
    features["length"] += 0.8 * (outcome - 0.5)  # a style the judges like
    fit = fit_bradley_terry(
        frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"], features=features
    )
    design = np.column_stack([_design(frame, list(fit.models)), features.to_numpy()])
    groups = pd.factorize(frame["prompt_id"])[0]
    model = sm.Logit(outcome, design).fit(disp=0, tol=1e-12)
    hc0 = sm.Logit(outcome, design).fit(disp=0, tol=1e-12, cov_type="HC0")
    cluster = sm.Logit(outcome, design).fit(
        disp=0, tol=1e-12, cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    g = len(np.unique(groups))
    assert np.concatenate([fit.theta[1:], fit.gamma]) == pytest.approx(model.params, abs=1e-8)
    assert fit.features == ("length", "bold")
    assert fit.covariances["model"][1:, 1:] == pytest.approx(model.cov_params(), rel=1e-7)
    assert fit.covariances["per_battle"][1:, 1:] == pytest.approx(hc0.cov_params(), rel=1e-7)
    assert fit.covariances["clustered"][1:, 1:] == pytest.approx(
        cluster.cov_params() * g / (g - 1), rel=1e-7
    )
    assert fit.gamma[0] > 0


def test_style_features_collinear_with_the_models_are_refused():
    a, b = ["x", "y", "z"] * 20, ["y", "z", "x"] * 20
    y = [1.0, 0.0, 0.5] * 10 + [0.0, 1.0, 1.0] * 10
    side = pd.DataFrame({"f": [1.0, -1.0, 0.0] * 20})  # one value per pair and side
    side["g"] = side["f"] * 0 + np.tile([1.0, 0.0, -1.0], 20)
    with pytest.raises(ValueError, match="collinear"):
        fit_bradley_terry(a, b, y, features=side)


# --- The cluster bootstrap ------------------------------------------------------------------------


def test_cluster_bootstrap_is_seeded_and_agrees_with_the_clustered_sandwich():
    frame, outcome = _battles("clustered")
    fit = fit_bradley_terry(frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"])
    draws = cluster_bootstrap(fit, 400, seed=11)
    again = cluster_bootstrap(fit, 400, seed=11)
    assert np.array_equal(draws.theta, again.theta, equal_nan=True)
    assert draws.failed == 0
    assert draws.theta.shape == (400, len(fit.models))
    sandwich = rating_differences(fit, "clustered")[1]
    boot = draws.difference_se()
    off = ~np.eye(len(fit.models), dtype=bool)
    # 400 replicates estimate an SE to about 3.5%; the bootstrap's own small bias adds a little.
    assert boot[off] == pytest.approx(sandwich[off], rel=0.15)
    poisson = cluster_bootstrap(fit, 400, seed=11, scheme="poisson")
    assert poisson.difference_se()[off] == pytest.approx(sandwich[off], rel=0.15)


def test_cluster_bootstrap_counts_replicates_without_an_estimate():
    # Two prompts: a resample of prompt 1 twice has a model that never lost.
    fit = fit_bradley_terry(
        ["a", "b", "a", "b"], ["b", "a", "b", "a"], [1, 0, 0, 1], cluster=["1", "1", "2", "2"]
    )
    draws = cluster_bootstrap(fit, 50, seed=1)
    assert 0 < draws.failed < 50
    assert np.isnan(draws.theta).any(axis=1).sum() == draws.failed
    for name in ("half", "rao_kupper"):
        frame, outcome = _battles("clustered")
        tied = fit_bradley_terry(
            frame["model_a"], frame["model_b"], outcome, cluster=frame["prompt_id"], ties=name
        )
        assert cluster_bootstrap(tied, 20, seed=2).failed == 0
