"""Readings of Bradley-Terry ratings: pairs with Holm, letters, max-t tiers, rank intervals,
claims' p under the clustered and per-battle readings, the planner, naive against blocked."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars.data.battles import read_battles
from evalbars.errors import InputError
from evalbars.readings.battles import (
    adjacent_tiers,
    battle_claims,
    battle_letters,
    battle_plan,
    battles_needed,
    fit_battles,
    naive_vs_clustered,
    pairwise_table,
    rank_intervals,
    style_features,
)
from evalbars.readings.leaderboard.letters import letter_sets, letters_valid
from evalbars.stats.bradley_terry import ELO_SCALE, cluster_bootstrap, rating_differences
from evalbars.stats.pairwise import adjust_pvalues
from evalbars.stats.planning.sample_size import questions_for_effect
from evalbars.studies.battles_coverage import (
    STRENGTHS,
    simulate_battles_coverage,
    target_differences,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "battles"
JUDGMENTS = DATA / "arena_hard" / "model_judgment" / "stand-in-judge"


@pytest.fixture(scope="module")
def clustered():
    return read_battles(DATA / "clustered.csv")


@pytest.fixture(scope="module")
def arena_hard():
    logging.disable(logging.WARNING)  # the seven dropped judgments
    try:
        return read_battles(JUDGMENTS, answers=DATA / "arena_hard" / "model_answer")
    finally:
        logging.disable(logging.NOTSET)


def test_pairs_are_z_tests_of_the_differences_with_holm(clustered):
    fit = fit_battles(clustered)
    table = pairwise_table(fit)
    diff, se = rating_differences(fit, "clustered")
    index = pd.Index(fit.models)
    a, b = index.get_indexer(table["model_a"]), index.get_indexer(table["model_b"])
    assert table["diff"].to_numpy() == pytest.approx(ELO_SCALE * diff[a, b])
    assert table["se"].to_numpy() == pytest.approx(ELO_SCALE * se[a, b])
    assert (table["diff"] >= 0).all()  # model_a is rated higher
    p = 2 * special.ndtr(-np.abs(diff[a, b] / se[a, b]))
    assert table["p"].to_numpy() == pytest.approx(p)
    assert table["p_adjusted"].to_numpy() == pytest.approx(adjust_pvalues(p, "holm"))
    assert (table["separated"] == (table["p_adjusted"] < 0.05)).all()
    half = table["ci_high"] - table["diff"]
    assert half.to_numpy() == pytest.approx(1.959964 * table["se"].to_numpy(), rel=1e-6)
    # Bonferroni is never sharper than Holm.
    assert (
        pairwise_table(fit, adjust="bonferroni")["p_adjusted"] >= table["p_adjusted"] - 1e-15
    ).all()


def test_letters_tell_the_truth_about_every_pair(clustered):
    fit = fit_battles(clustered, cluster=None)
    table = pairwise_table(fit, "per_battle")
    models = list(dict.fromkeys([*table["model_a"], *table["model_b"]]))
    letters = battle_letters(table, models)
    sets = letter_sets(letters["letters"])
    membership = np.array([[letter in s for letter in sorted(set().union(*sets))] for s in sets])
    separated = np.zeros((len(models), len(models)), dtype=bool)
    for _, row in table.iterrows():
        i, j = models.index(row["model_a"]), models.index(row["model_b"])
        separated[i, j] = separated[j, i] = row["separated"]
    assert letters_valid(membership, separated).all()
    assert letters["letters"].iloc[0].startswith("a")


def test_adjacent_tiers_use_a_max_t_critical_value(arena_hard, clustered):
    fit = fit_battles(arena_hard)
    tiers = adjacent_tiers(fit, seed=5)
    k = len(fit.models)
    c = tiers.attrs["critical"]
    # Between one test's 1.96 and Bonferroni's over the K - 1 gaps.
    assert special.ndtri(0.975) < c < special.ndtri(1 - 0.05 / (2 * (k - 1)))
    gaps = tiers["gap"].to_numpy()[:-1]
    assert (gaps >= 0).all()
    assert tiers["separated"].iloc[:-1].tolist() == (np.abs(tiers["t"].iloc[:-1]) > c).tolist()
    assert tiers["tier"].tolist() == [1, 2, 2, 2, 3]
    assert tiers.attrs["separated_one_at_a_time"] >= int(tiers["separated"].sum())
    draws = cluster_bootstrap(fit, 500, seed=3)
    boot = adjacent_tiers(fit, draws=draws, critical="bootstrap")
    assert boot.attrs["critical"] == pytest.approx(c, rel=0.12)
    assert adjacent_tiers(fit, seed=5).attrs["critical"] == c  # seeded
    # Two models: max |T| over one gap is |T|, so c is 1.96 up to the simulation's error.
    pair = clustered[
        clustered["model_a"].isin(["model-a", "model-f"])
        & clustered["model_b"].isin(["model-a", "model-f"])
    ]
    two = adjacent_tiers(fit_battles(pair), seed=1)
    assert two.attrs["critical"] == pytest.approx(1.959964, abs=0.03)


def test_rank_intervals_hold_the_rank_and_widen_when_simultaneous(arena_hard):
    fit = fit_battles(arena_hard)
    draws = cluster_bootstrap(fit, 400, seed=2)
    marginal = rank_intervals(fit, draws=draws)
    joint = rank_intervals(fit, simultaneous=True)
    assert (marginal["rank_low"] <= marginal["rank"]).all()
    assert (marginal["rank"] <= marginal["rank_high"]).all()
    assert (joint["rank_low"] <= marginal["rank_low"]).all()
    assert (joint["rank_high"] >= marginal["rank_high"]).all()
    top = marginal.iloc[0]
    assert (top["model"], top["rank_low"], top["rank_high"]) == ("model-alpha", 1, 1)
    assert top["p_first"] == pytest.approx(1.0)
    assert marginal["p_first"].sum() == pytest.approx(1.0)
    assert marginal.iloc[-1][["rank_low", "rank_high"]].tolist() == [5, 5]


def test_naive_against_clustered_side_by_side(arena_hard):
    fit = fit_battles(arena_hard)
    table = naive_vs_clustered(fit)
    assert table["design_effect"].to_numpy() == pytest.approx(
        (table["se_clustered"] / table["se_per_battle"]).to_numpy() ** 2
    )
    counts = table.attrs["separations"]
    assert counts == {
        "per_battle": int(table["separated_per_battle"].sum()),
        "clustered": int(table["separated_clustered"].sum()),
    }
    # Against the baseline every prompt is battled twice with the sides swapped: the verdicts
    # of a prompt agree, and the clustered SE is larger.
    baseline = (table["model_a"] == "baseline-model") | (table["model_b"] == "baseline-model")
    assert (table.loc[baseline, "design_effect"] > 1.3).all()


def test_claims_give_one_sided_p_under_both_readings(arena_hard):
    claims = [
        "model-alpha > model-beta",
        "model-beta > model-gamma",
        "best: model-alpha",
        "top 2: model-beta",
        "model-alpha > baseline-model in coding",
        "model-beta >= model-gamma - 20",
        "|model-beta - baseline-model| < 60",
    ]
    table = battle_claims(arena_hard, claims)
    assert table["reading"].tolist() == ["clustered", "per_battle"] * len(claims)
    fit = fit_battles(arena_hard)
    for reading in ("clustered", "per_battle"):
        rows = table[table["reading"] == reading].set_index("claim")
        d, s = (x * ELO_SCALE for x in fit.difference("model-beta", "model-gamma", reading))
        row = rows.loc["model-beta > model-gamma"]
        assert (row["estimate"], row["se"]) == pytest.approx((d, s))
        assert row["p"] == pytest.approx(special.ndtr(-d / s))
        assert row["p_opposite"] == pytest.approx(special.ndtr(d / s))
        margin = rows.loc["model-beta >= model-gamma - 20"]
        assert margin["p"] == pytest.approx(special.ndtr(-(d + 20) / s))
        # best: the largest p of "alpha > X" (intersection-union); top 2: 2 x the 3rd smallest.
        others = [m for m in fit.models if m != "model-alpha"]
        p_best = [
            special.ndtr(
                -np.divide(*(x * ELO_SCALE for x in fit.difference("model-alpha", m, reading)))
            )
            for m in others
        ]
        assert rows.loc["best: model-alpha", "p"] == pytest.approx(max(p_best))
        p_top = sorted(
            special.ndtr(
                -np.divide(*(x * ELO_SCALE for x in fit.difference("model-beta", m, reading)))
            )
            for m in fit.models
            if m != "model-beta"
        )
        assert rows.loc["top 2: model-beta", "p"] == pytest.approx(min(1.0, 2 * p_top[2]))
        coding = rows.loc["model-alpha > baseline-model in coding"]
        assert coding["battles"] == int((arena_hard["category"] == "coding").sum())
    clustered_se = table[table["reading"] == "clustered"]["se"].to_numpy()
    per_battle_se = table[table["reading"] == "per_battle"]["se"].to_numpy()
    assert (clustered_se[[4]] > per_battle_se[[4]]).all()  # baseline pair in coding


def test_claims_refuse_unknown_models(arena_hard):
    with pytest.raises(InputError, match="unknown model 'model-omega'"):
        battle_claims(arena_hard, ["model-omega > model-beta"])


def test_battles_needed_is_the_sample_size_formula_and_has_its_power():
    d = 50.0
    plain = battles_needed(d)
    p = special.expit(d / ELO_SCALE)
    assert plain == pytest.approx(
        questions_for_effect(d / ELO_SCALE, 1 / (p * (1 - p)), alpha=0.05, power=0.8)
    )
    # Ties lower the variance of a battle's score; clustering raises it.
    assert battles_needed(d, tie_rate=0.3) < plain < battles_needed(d, design_effect=2.0)
    assert battles_needed(d, design_effect=2.0) == pytest.approx(2 * plain)
    # Simulated: n battles with 20% ties reach the planned 80% power.
    n = int(np.ceil(battles_needed(d, tie_rate=0.2)))
    rng = np.random.default_rng(4)
    u = rng.random((4000, n))
    won, tie = p - 0.1, 0.2
    score = np.where(u < won, 1.0, np.where(u < won + tie, 0.5, 0.0))
    mean, var = score.mean(axis=1), score.var(axis=1, ddof=1)
    z = (special.logit(mean)) / np.sqrt(var / n / (mean * (1 - mean)) ** 2)
    assert np.mean(np.abs(z) > special.ndtri(0.975)) == pytest.approx(0.8, abs=0.025)
    with pytest.raises(ValueError, match="tie_rate is too high"):
        battles_needed(10.0, tie_rate=1.0)


def test_the_plan_of_adjacent_pairs(arena_hard):
    fit = fit_battles(arena_hard)
    plan = battle_plan(fit)
    tiers = adjacent_tiers(fit)
    assert plan["gap"].to_numpy() == pytest.approx(tiers["gap"].to_numpy()[:-1])
    level = 0.05 / (len(fit.models) - 1)
    expected = battles_needed(
        plan["gap"], tie_rate=plan["tie_rate"], design_effect=plan["design_effect"], alpha=level
    )
    assert plan["battles_needed"].to_numpy() == pytest.approx(np.ceil(expected))
    # model-beta met only the baseline: its battles, weighted (a strong verdict counts 3).
    row = plan[(plan["model_a"] == "model-beta") & (plan["model_b"] == "baseline-model")].iloc[0]
    beta = (arena_hard["model_a"] == "model-beta") | (arena_hard["model_b"] == "model-beta")
    assert row["battles"] == arena_hard.loc[beta, "weight"].sum()
    assert row["tie_rate"] == pytest.approx(
        arena_hard.loc[beta & (arena_hard["outcome"] == 0.5), "weight"].sum() / row["battles"]
    )
    # A gap already separated needs less than the data hold, in the same design.
    separated = tiers["separated"].to_numpy()[:-1]
    assert (plan["scale_up"].to_numpy()[separated] < 1).all()


def test_fit_battles_options(arena_hard):
    style = fit_battles(arena_hard, style=True)
    assert style.features == ("length", "headers", "lists", "bold")
    assert set(style.covariances) == {"model", "per_battle", "clustered"}
    plain = fit_battles(arena_hard, cluster=None)
    assert "clustered" not in plain.covariances
    by_judge = fit_battles(read_battles(DATA / "clustered.csv"), cluster="judge")
    assert by_judge.n_clusters == 25
    coding = fit_battles(arena_hard, category="coding")
    assert coding.n_battles == int((arena_hard["category"] == "coding").sum())
    with pytest.raises(InputError, match="no battles in category 'poetry'"):
        fit_battles(arena_hard, category="poetry")
    worked = read_battles(DATA / "worked_example.csv")
    with pytest.raises(InputError, match="without a prompt_id cannot be clustered"):
        fit_battles(worked)
    with pytest.raises(InputError, match="style control needs the style columns"):
        fit_battles(worked, cluster=None, style=True)
    features = style_features([[10, 0], [30, 2]], [[30, 2], [10, 0]])
    assert features.mean(axis=0) == pytest.approx([0, 0]) and features.std(axis=0) == pytest.approx(
        [1, 1]
    )


# --- The coverage study (its full run: python -m tests.benchmark --battles-coverage) ----------


def test_the_coverage_targets_are_the_strengths_when_the_model_is_right():
    theta = np.array(STRENGTHS)
    # No prompt effect and no ties: Bradley-Terry is the model, its target the strengths.
    assert target_differences(0.0, 0.0) == pytest.approx(theta[:, None] - theta[None, :], abs=1e-9)
    # A prompt effect flattens the population's preferences: smaller targets, same order.
    flat = target_differences(1.0, 0.35)
    assert (np.abs(flat) <= np.abs(theta[:, None] - theta[None, :]) + 1e-12).all()
    assert (np.diff(flat[0]) > 0).all()


def test_the_coverage_study_is_seeded_and_shows_the_clustering():
    # One pair per prompt, 8 battles each: a design effect near 3, per-battle intervals far off.
    settings = dict(prompts=(40,), per_prompt=(8,), prompt_sd=(1.0,), designs=("repeated_pair",))
    table = simulate_battles_coverage(**settings, replicates=60)
    coverage = table.set_index("reading")["coverage"]
    assert coverage["clustered"] > coverage["per_battle"] + 0.1
    assert table["design_effect"].iloc[0] > 2
    assert (table["no_estimate"] == 0).all()
    again = simulate_battles_coverage(**settings, replicates=60)
    pd.testing.assert_frame_equal(table, again)
    paired = simulate_battles_coverage(
        prompts=(40,), per_prompt=(2,), prompt_sd=(1.0,), replicates=5, designs=("repeated_pair",),
        bootstrap_replicates=30,
    )  # fmt: skip
    assert paired["reading"].tolist() == ["per_battle", "model", "clustered", "bootstrap"]
