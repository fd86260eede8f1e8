"""The release gate (`evalbars compare`): verdicts, exit codes, flips and McNemar's counts; the
clustered readings at few categories, degenerate SEs, intervals cut to [-1, 1], unequal epochs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars import cli
from evalbars.data.scores import WideScores, wide_scores
from evalbars.readings import gate
from evalbars.stats.cluster_robust import cr2_mean

from ...helpers import long_table, wide_of

HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness"


def run(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_thirty_or_more_degrees_of_freedom_read_cr2_with_satterthwaite_t():
    rng = np.random.default_rng(4)
    categories = np.repeat([f"c{j:02d}" for j in range(40)], 25)
    effect = rng.normal(0, 0.1, 40)[np.repeat(np.arange(40), 25)]
    cand = (rng.random(1000) < 0.6 + effect).astype(float)
    base = (rng.random(1000) < 0.6).astype(float)
    wide = wide_scores(
        pd.DataFrame(
            {
                "model": np.repeat(["base", "cand"], 1000),
                "question_id": np.tile(np.arange(1000), 2),
                "category": np.tile(categories, 2),
                "correct": np.r_[base, cand],
            }
        )
    )
    s = gate.compare_models(wide, "base", "cand").summary
    robust = cr2_mean(cand - base, categories)
    assert robust.df == pytest.approx(39) and (s["se_kind"], s["clusters"]) == ("clustered", 40)
    q = special.stdtrit(robust.df, 0.975)
    assert (s["low"], s["high"]) == pytest.approx(
        (robust.estimate - q * robust.se, robust.estimate + q * robust.se), rel=1e-12
    )
    assert s["p_noninferiority"] == pytest.approx(special.stdtr(39, -s["diff"] / robust.se))
    assert s["sign_patterns"] is None


def test_epochs_are_averaged_and_unshared_questions_left_out():
    rows = pd.DataFrame(
        {
            "model": ["base"] * 6 + ["cand"] * 5,
            "question_id": ["q1", "q1", "q2", "q2", "q3", "q4", "q1", "q1", "q2", "q2", "q3"],
            "category": "c",
            "correct": [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1],
        }
    )
    wide = wide_scores(rows)
    result = gate.compare_models(wide, "base", "cand")
    s = result.summary
    assert s["questions"] == 3 and s["left_out"] == 1  # q4 answered by the baseline only
    # Per-question means: base (0.5, 1, 0), cand (1, 0.5, 1): differences +0.5, -0.5, +1.
    assert s["diff"] == pytest.approx(1 / 3) and s["se_kind"] == "paired"
    # Means of two samples are no flips: the candidate's mean is higher on two, lower on one.
    assert (s["higher"], s["lower"], s["flips_apply"]) == (2, 1, False)
    assert s["fail_to_pass"] is None and s["p_mcnemar"] is None
    assert list(result.flips["change"]) == ["higher", "lower", "higher"]
    assert list(result.flips["candidate_samples"]) == [2, 2, 1]
    assert np.isclose(s["se"], np.sqrt(np.var([0.5, -0.5, 1.0]) / 3))


# --- Issue 37: no verdict from a degenerate SE, few categories, intervals, unequal epochs ------


def categories_table(path, categories: int, up: int, down: int, size: int = 100):
    """``base`` and ``cand`` on ``categories`` categories of ``size`` questions, each with ``up``
    fail -> pass and ``down`` pass -> fail flips, half the rest passed by both."""
    agree = size - up - down
    pattern = (
        [(0, 1)] * up + [(1, 0)] * down + [(1, 1)] * (agree // 2) + [(0, 0)] * (agree - agree // 2)
    )
    rows = [
        {"model": model, "question_id": f"{c}-{k:03d}", "category": f"cat{c}", "correct": pair[m]}
        for c in range(categories)
        for k, pair in enumerate(pattern)
        for m, model in enumerate(("base", "cand"))
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_equal_category_means_are_no_certainty(tmp_path, capsys):
    # Every category's mean difference is +4 points, so the CR2 SE was 1e-17: the gate said
    # "better", "+4.0 to +4.0", p = 1e-32 and exited 0, while exact McNemar's p is 0.11.
    path = categories_table(tmp_path / "three.csv", 3, up=10, down=6)
    status, out, _ = run(
        ["compare", str(path), "--baseline", "base", "--candidate", "cand"], capsys
    )
    assert status == 3 and "+4.0 to +4.0" not in out
    assert out.startswith(
        "**inconclusive**: with 3 categories no category-clustered test can reject at the 5% "
        "level: a sign-flip test's smallest one-sided p is 1/8 (it needs 6 categories)"
    )
    assert (
        "| +4.0 | none: 3 categories cannot bound it (category sign-flip test; 6 needed) |" in out
    )
    assert "Flips: 18 pass→fail, 30 fail→pass (exact McNemar p = 0.111)." in out
    assert (
        ": -0.5 to +8.5 points, inconclusive (add `--categories fixed`" in out
    )  # the paired reading, as without categories
    # Six such categories could be read clustered, but their spread is 0: the paired reading
    # decides, and says why (60 up, 36 down in 600: +4.0, 0.8 to 7.2 points).
    s = gate.compare_models(
        wide_of(categories_table(tmp_path / "six.csv", 6, 10, 6)), "base", "cand"
    )
    s = s.summary
    assert (s["se_kind"], s["clusters"], s["verdict"]) == ("paired", 6, "better")
    assert "mean differences are all equal" in s["note"]
    d = np.tile(np.r_[np.ones(10), -np.ones(6), np.zeros(84)], 6)
    assert s["low"] == pytest.approx(0.04 - 1.959963984540054 * d.std() / np.sqrt(600), rel=1e-12)


def test_balanced_flips_are_not_no_flips(tmp_path, capsys):
    # 15 fail -> pass and 15 pass -> fail in each of 3 categories: the CR2 SE was 0 and the gate
    # read it as "no flips", -1.2 to +1.2 (exact: no flips), non-inferior at 2 points, exit 0.
    path = categories_table(tmp_path / "balanced.csv", 3, up=15, down=15)
    argv = ["compare", str(path), "--baseline", "base", "--candidate", "cand", "--margin", "2"]
    status, out, _ = run(argv, capsys)
    assert status == 3 and "exact: no flips" not in out
    assert (
        ": -6.2 to +6.2 points, inconclusive (add `--categories fixed`" in out
    )  # the paired interval
    six = gate.compare_models(
        wide_of(categories_table(tmp_path / "six.csv", 6, 15, 15)), "base", "cand", margin=0.02
    ).summary
    assert (six["se_kind"], six["verdict"]) == ("paired", "inconclusive")
    assert round(100 * six["high"], 1) == 4.4  # 1.96 * sqrt(180 / 600) / sqrt(600)


def test_three_categories_say_they_cannot_decide(capsys):
    # The README's example: 39 questions in 3 lm-eval tasks. CR2 with t on 2 df said better,
    # +17.9 to +38.5; no test of 3 categories can reject at 5% without assuming how the
    # categories' effects are distributed, so the gate says so, beside the paired reading.
    logs = HARNESS / "lm_eval"
    status, out, _ = run(
        ["compare", str(logs / "evalbars__fake-weak"), str(logs / "evalbars__fake-strong")]
        + ["--id-field", "id", "--format", "json"],
        capsys,
    )
    s = json.loads(out)
    assert status == 3 and (s["verdict"], s["se_kind"], s["clusters"]) == (
        "inconclusive",
        "sign-flip",
        3,
    )
    assert (s["low"], s["high"], s["p_superiority"]) == (-1.0, 1.0, 0.125)
    assert s["paired_verdict"] == "better" and s["questions_to_decide"] is None


def test_intervals_stay_within_what_a_difference_can_be(tmp_path, capsys):
    # Two questions flipped opposite ways: the paired interval ran from -138.6 to +138.6 points.
    path = long_table(tmp_path / "two.csv", {"base": [1, 0], "cand": [0, 1]})
    status, out, _ = run(
        ["compare", str(path), "--baseline", "base", "--candidate", "cand", "--by-category"],
        capsys,
    )
    assert status == 3
    assert "| +0.0 | -100.0 to +100.0 (paired SE) |" in out
    assert "| a | 2 | +0.0 | -100.0 to +100.0 | 1 | 1 |" in out
    result = gate.compare_models(wide_of(path), "base", "cand", by_category=True)
    for low, high in [
        (result.summary["low"], result.summary["high"]),
        (result.summary["paired_low"], result.summary["paired_high"]),
        *zip(result.by_category["low"], result.by_category["high"], strict=True),
    ]:
        assert -1.0 <= low <= high <= 1.0


def epochs_wide(seed: int, n: int, p_a, p_b, epochs_a: int = 3):
    """Model A with ``epochs_a`` samples per question, B with one, at per-question rates."""
    rng = np.random.default_rng(seed)
    a = (rng.random((n, epochs_a)) < np.asarray(p_a)[:, None]).astype(float)
    b = (rng.random(n) < np.asarray(p_b)).astype(float)
    ss = (a * a).sum(1) - a.sum(1) ** 2 / epochs_a
    return WideScores(
        scores=np.c_[a.mean(1), b],
        models=["A", "B"],
        question_ids=np.array([f"q{i:03d}" for i in range(n)]),
        categories=np.full(n, "all"),
        samples=np.c_[np.full(n, epochs_a), np.ones(n, int)],
        within_ss=np.c_[ss, np.zeros(n)],
    )


def test_unequal_epochs_list_mean_changes_not_flips(tmp_path, capsys):
    # A answers each of 300 questions 3 times at 80%, B once at 75%: the questions where A
    # scored 2 of 3 against B's 1 were listed as pass -> fail flips and fed to exact McNemar.
    rng = np.random.default_rng(3)
    rows = [("A", f"q{q:03d}", int(rng.random() < 0.8), e) for q in range(300) for e in (1, 2, 3)]
    rows += [("B", f"q{q:03d}", int(rng.random() < 0.75), 1) for q in range(300)]
    path = tmp_path / "epochs.csv"
    pd.DataFrame(rows, columns=["model", "question_id", "correct", "epoch"]).to_csv(
        path, index=False
    )
    flips = tmp_path / "changes.csv"
    argv = ["compare", str(path), "--baseline", "B", "--candidate", "A", "--flips", str(flips)]
    status, out, _ = run(argv, capsys)
    assert "pass→fail" not in out and "fail->pass" not in out
    assert "exact McNemar: not applicable (repeated samples per question)" in out
    assert "Bayesian reading" not in out
    written = pd.read_csv(flips)
    assert list(written.columns) == [
        "question_id",
        "category",
        "baseline",
        "candidate",
        "baseline_samples",
        "candidate_samples",
        "change",
    ]
    assert set(written["baseline_samples"]) == {1} and set(written["candidate_samples"]) == {3}
    two_of_three = written[np.isclose(written["candidate"], 2 / 3) & (written["baseline"] == 1)]
    assert len(two_of_three) and set(two_of_three["change"]) == {"lower"}
    status, out, _ = run([*argv[:-2], "--format", "json"], capsys)
    document = json.loads(out)
    assert document["p_mcnemar"] is None and document["pass_to_fail"] is None
    assert (
        len(document["lower_ids"]) == document["lower"] == int((written["change"] == "lower").sum())
    )
    assert status == document["exit_code"]
    # Partial credit with one sample each: no flips either.
    partial = long_table(tmp_path / "partial.csv", {"base": [0.5, 1, 0], "cand": [1, 0.25, 0]})
    s = gate.compare_models(wide_of(partial), "base", "cand").summary
    assert s["flips_note"] == "scores are not 0/1" and s["fail_to_pass"] is None


def test_more_samples_for_one_model_favour_neither():
    # Under the null both models share each question's rate; A has 3 samples per question, B 1.
    # Over 500 seeded evaluations of 200 questions the gate's one-sided rejections stay at
    # alpha / 2 = 2.5% each way (binomial 95% range 1.3% to 4.0%).
    rates = np.random.default_rng(0).beta(3, 1.5, 200)
    verdicts = pd.Series(
        [
            gate.compare_models(epochs_wide(seed, 200, rates, rates), "B", "A").summary["verdict"]
            for seed in range(500)
        ]
    )
    better, worse = (verdicts == "better").mean(), (verdicts == "regression").mean()
    assert 0.013 <= better <= 0.040 and 0.013 <= worse <= 0.040, (better, worse)


def test_zero_se_of_means_is_no_sign_test():
    # Every question's mean differs by +1/3 (A 2 of 3, B 0): a sign test would say p = 2^-n, but
    # means of epochs can all sit above 0 while the mean difference is 0.
    wide = epochs_wide(1, 12, np.full(12, 0.5), np.zeros(12))
    a = np.full((12, 3), [1.0, 1.0, 0.0])
    wide = WideScores(
        scores=np.c_[a.mean(1), np.zeros(12)],
        models=wide.models,
        question_ids=wide.question_ids,
        categories=wide.categories,
        samples=wide.samples,
        within_ss=np.c_[np.full(12, 2 / 3), np.zeros(12)],
    )
    s = gate.compare_models(wide, "B", "A").summary
    assert (s["se_kind"], s["verdict"], s["p_superiority"]) == ("none", "inconclusive", 1.0)


def test_categories_fixed_reads_the_questions_paired_and_the_printed_hint_runs(capsys):
    # The shipped lm-eval example: 8 categories, so the sign-flip reading is inconclusive; the
    # line under the table offers --categories fixed, and that command decides on the paired
    # reading of the same questions (exit 0: better).
    logs = "tests/data/harness/lm_eval"
    command = [
        "compare",
        f"{logs}/evalbars__fake-weak",
        f"{logs}/evalbars__fake-strong",
        "--id-field",
        "id",
        "--category-field",
        "category",
    ]
    assert cli.main(command) == 3
    out = capsys.readouterr().out
    assert "(add `--categories fixed` to make it the verdict" in out
    assert "+5.8 to +50.6 points, better" in out
    assert cli.main([*command, "--categories", "fixed"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("**better**") and "+5.8 to +50.6 (paired SE)" in out
    assert "categories read as fixed" in out
