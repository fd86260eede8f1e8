"""Run-to-run variance components against lme4 (tests/reference/r_output/run_variance/), the
balanced ANOVA moment estimators, and the run-aware paired difference."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars.stats.repeats.run_variance import (
    crossed_variance_components,
    detectable_run_gap,
    gap_sign_by_run,
    run_aware_difference,
    run_variance_table,
)

TESTS = Path(__file__).parents[2]
R_RUNS = json.loads(
    (TESTS / "reference" / "r_output" / "run_variance" / "synthetic_runs.json").read_text()
)
RUNS = pd.read_csv(TESTS / "data" / "synthetic_runs.csv")
DESIGNS = list(R_RUNS["designs"])


def _fit(design):
    rows = RUNS[RUNS["model"] == design]
    return crossed_variance_components(rows["question_id"], rows["run"], rows["score"])


@pytest.mark.parametrize("design", DESIGNS)
def test_the_components_are_lme4s(design):
    reference = R_RUNS["designs"][design]
    fit = _fit(design)
    variance = reference["lmer"]["variance"]
    assert fit.var_question == pytest.approx(variance["question"], abs=1e-7)
    assert fit.var_run == pytest.approx(variance["run"], abs=1e-7)
    assert fit.var_within == pytest.approx(variance["residual"], abs=1e-7)
    assert fit.mean == pytest.approx(reference["lmer"]["fixef"], abs=1e-7)
    # Our optimum is at least as good as lme4's (its REML criterion, to its printed digits).
    assert fit.reml_criterion == pytest.approx(reference["lmer"]["reml_criterion"], abs=1e-6)
    assert fit.reml_criterion <= reference["lmer"]["reml_criterion"] + 1e-9
    counts = reference["counts"]
    assert (fit.questions, fit.runs, fit.samples, fit.balanced) == (
        counts["questions"],
        counts["runs"],
        counts["samples"],
        counts["balanced"],
    )
    assert fit.method == ("anova" if counts["balanced"] else "reml")


@pytest.mark.parametrize(
    "design", [d for d in DESIGNS if R_RUNS["designs"][d]["counts"]["balanced"]]
)
def test_balanced_designs_are_the_anova_moment_estimators_exactly(design):
    anova = R_RUNS["designs"][design]["anova"]
    counts = R_RUNS["designs"][design]["counts"]
    ms, per_cell = anova["mean_sq"], counts["samples"] / (counts["questions"] * counts["runs"])
    fit = _fit(design)
    assert fit.var_within == pytest.approx(ms["residual"], rel=1e-12)
    assert fit.var_question == pytest.approx(
        (ms["question"] - ms["residual"]) / (counts["runs"] * per_cell), rel=1e-11
    )
    assert fit.var_run == pytest.approx(
        (ms["run"] - ms["residual"]) / (counts["questions"] * per_cell), rel=1e-11
    )


def test_the_numerical_path_agrees_with_the_closed_form_on_a_balanced_design():
    rows = RUNS[RUNS["model"] == "gaussian_balanced"]
    # Drop one sample: unbalanced by a hair, so the numerical REML runs; it must land next
    # to the closed form of the full design and match a fit of the same data by lme4's logic.
    fit = _fit("gaussian_balanced")
    nearly = rows.iloc[1:]
    numeric = crossed_variance_components(nearly["question_id"], nearly["run"], nearly["score"])
    assert numeric.method == "reml"
    assert numeric.var_question == pytest.approx(fit.var_question, rel=0.05)
    assert numeric.var_within == pytest.approx(fit.var_within, rel=0.01)


def test_a_negative_moment_estimate_pools_into_the_residual():
    # Runs whose means differ less than sampling predicts: MS_run < MS_error, so REML sets
    # the run variance to 0 and pools the run mean square into the residual's.
    q = np.repeat(np.arange(6), 8)
    r = np.tile(np.repeat([1, 2], 4), 6)
    y = np.tile([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0], 6) + 0.3 * q
    fit = crossed_variance_components(q, r, y)
    assert fit.var_run == 0.0
    frame = pd.DataFrame({"q": q, "r": r, "y": y})
    ss_q = 8 * ((frame.groupby("q")["y"].mean() - y.mean()) ** 2).sum()
    ss_rest = ((y - y.mean()) ** 2).sum() - ss_q
    pooled = ss_rest / (y.size - 6)
    assert fit.var_within == pytest.approx(pooled, rel=1e-12)
    assert fit.var_question == pytest.approx((ss_q / 5 - pooled) / 8, rel=1e-12)


def test_one_run_has_no_run_variance():
    rows = RUNS[(RUNS["model"] == "binary_balanced") & (RUNS["run"] == 1)]
    fit = crossed_variance_components(rows["question_id"], rows["run"], rows["score"])
    assert np.isnan(fit.var_run) and fit.runs == 1
    # One run: the one-way random-effects ANOVA of questions.
    means = rows.groupby("question_id")["score"]
    within = means.var(ddof=1).mean()
    assert fit.var_within == pytest.approx(within, rel=1e-12)


def test_the_table_reports_points_flaky_questions_and_the_detectable_gap():
    samples = RUNS.rename(columns={"score": "correct"})
    table = run_variance_table(samples).set_index("model")
    binary = table.loc["binary_balanced"]
    rows = RUNS[RUNS["model"] == "binary_balanced"]
    spread = rows.groupby("question_id")["score"].agg(["min", "max"])
    assert binary["flaky_questions"] == int((spread["min"] != spread["max"]).sum())
    assert binary["flaky_share"] == pytest.approx(binary["flaky_questions"] / 40)
    assert binary["always_right"] == int((spread["min"] == 1).sum())
    assert binary["always_wrong"] == int((spread["max"] == 0).sum())
    fit = _fit("binary_balanced")
    assert binary["sd_run_points"] == pytest.approx(100 * np.sqrt(fit.var_run))
    assert binary["sd_rerun_points"] == pytest.approx(
        100 * np.sqrt(fit.var_run + fit.var_within / 120)
    )
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert binary["detectable_gap_points"] == pytest.approx(
        100 * z * np.sqrt(2 * (fit.var_run + fit.var_within / 120))
    )
    assert table.loc["gaussian_balanced", "flaky_share"] == 1.0
    assert list(table.index) == DESIGNS


def test_detectable_gap_closed_form():
    assert detectable_run_gap(0.0, 0.25, 100) == pytest.approx(
        (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * np.sqrt(0.005)
    )
    gap = detectable_run_gap([0.0, 0.001], 0.25, 100, alpha=0.01, power=0.9)
    assert gap[1] > gap[0]


def _two_models(run_sd_a, run_sd_b, seed=0, runs=4, questions=80):
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 0.2, questions)
    frames = []
    for model, skill, run_sd in (("A", 0.62, run_sd_a), ("B", 0.55, run_sd_b)):
        shift = rng.normal(0, run_sd, runs)
        q, r = (
            np.repeat(np.arange(questions), runs * 2),
            np.tile(np.repeat(np.arange(runs), 2), questions),
        )
        p = np.clip(skill + difficulty[q] + shift[r], 0.01, 0.99)
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "question_id": q,
                    "category": q % 8,
                    "run": r + 1,
                    "correct": (rng.random(q.size) < p).astype(float),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_the_run_aware_difference_adds_each_models_run_variance():
    samples = _two_models(0.04, 0.02)
    result = run_aware_difference(samples, "A", "B")
    means = samples.groupby(["question_id", "model"])["correct"].mean().unstack()
    d = means["A"] - means["B"]
    assert result.difference == pytest.approx(d.mean())
    assert result.se_questions == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))
    fits = {
        m: crossed_variance_components(g["question_id"], g["run"], g["correct"])
        for m, g in samples.groupby("model")
    }
    terms = [result.se_questions**2, fits["A"].var_run / 4, fits["B"].var_run / 4]
    assert result.se_with_runs == pytest.approx(np.sqrt(sum(terms)))
    satterthwaite = sum(terms) ** 2 / (
        terms[0] ** 2 / (d.size - 1) + sum(t**2 / 3 for t in terms[1:])
    )
    assert result.df == pytest.approx(satterthwaite)
    half = stats.t.ppf(0.975, satterthwaite) * result.se_with_runs
    assert (result.ci_low, result.ci_high) == pytest.approx(
        (result.difference - half, result.difference + half)
    )
    assert result.p_value == pytest.approx(
        2 * stats.t.sf(abs(result.difference) / result.se_with_runs, satterthwaite)
    )
    clustered = run_aware_difference(samples, "A", "B", clusters="category")
    assert clustered.df_questions < d.size - 1


def test_large_run_shifts_can_undo_a_verdict_the_questions_alone_would_give():
    samples = _two_models(0.08, 0.08, seed=0, runs=3, questions=300)
    result = run_aware_difference(samples, "A", "B")
    assert result.decided_without_runs
    assert result.se_with_runs > 2 * result.se_questions
    assert not result.survives_rerun


def test_gap_sign_by_run_pairs_runs_by_label_or_every_pair():
    samples = _two_models(0.04, 0.02, seed=1)
    signs = gap_sign_by_run(samples, "A", "B")
    assert signs.pairing == "run" and len(signs.table) == 4
    per_run = samples.groupby(["model", "run"])["correct"].mean().unstack("model")
    np.testing.assert_allclose(signs.table["gap"], per_run["A"] - per_run["B"])
    assert signs.holds_in_every_run == bool((per_run["A"] > per_run["B"]).all())
    relabelled = samples.assign(
        run=np.where(samples["model"] == "B", samples["run"] + 10, samples["run"])
    )
    crossed = gap_sign_by_run(relabelled, "A", "B")
    assert crossed.pairing == "every pair" and len(crossed.table) == 16
    assert crossed.gap == pytest.approx(signs.gap)


def test_too_few_questions_are_refused():
    with pytest.raises(ValueError, match="two or more questions"):
        crossed_variance_components(["a"] * 4, [1, 1, 2, 2], [1, 0, 1, 1])
