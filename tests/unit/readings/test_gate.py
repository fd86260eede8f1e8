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
from evalbars.stats import pairwise, sequential
from evalbars.stats.cluster_robust import cr2_mean, sign_flip_mean

from ...helpers import long_table, wide_of

STRONG, WEAK = "Mistral-7B-v0.1", "Mistral-7B-Instruct-v0.1"
HARNESS = (
    Path(__file__).resolve().parents[2] / "data" / "harness"
)  # 5.9 points apart on the subsample


def run(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def model_files(default_subsample, tmp_path_factory):
    """One long CSV per default model, and the subsample's item table (score columns)."""
    folder = tmp_path_factory.mktemp("compare")
    items = default_subsample.items[["model", "question_id", "category", "correct"]]
    paths = {}
    for model, rows in items.groupby("model", observed=True):
        paths[model] = folder / f"{model}.csv"
        rows.to_csv(paths[model], index=False)
    paths["table"] = folder / "items.csv"
    items.to_csv(paths["table"], index=False)
    return paths


def test_flip_counts_are_mcnemars_discordant_counts_of_pairwise(real_wide, model_files, capsys):
    columns = [real_wide.models.index(m) for m in (STRONG, WEAK)]
    stats = pairwise.pair_statistics(real_wide.scores[:, columns])
    n10, n01 = int(stats["n10"][0]), int(stats["n01"][0])  # STRONG right, WEAK wrong; reverse
    flips = model_files["table"].parent / "flips.csv"
    status, out, _ = run(
        [
            "compare",
            str(model_files[STRONG]),
            str(model_files[WEAK]),
            "--format",
            "json",
            "--flips",
            str(flips),
        ],
        capsys,
    )
    document = json.loads(out)
    assert document["pass_to_fail"] == n10 == 229 and document["fail_to_pass"] == n01 == 140
    assert document["p_mcnemar"] == pytest.approx(float(pairwise.exact_mcnemar_p(n10, n01)))
    written = pd.read_csv(flips)
    assert (written["flip"] == "pass->fail").sum() == n10
    assert sorted(written.loc[written["flip"] == "fail->pass", "question_id"]) == sorted(
        document["fail_to_pass_ids"]
    )
    assert status == 1  # the weaker model as candidate: a regression


def test_exit_codes_regression_improvement_and_bad_input(model_files, capsys):
    regression = run(["compare", str(model_files[STRONG]), str(model_files[WEAK])], capsys)
    improvement = run(["compare", str(model_files[WEAK]), str(model_files[STRONG])], capsys)
    assert regression[0] == 1 and regression[1].startswith("**regression**")
    assert improvement[0] == 0 and improvement[1].startswith("**better**")
    assert len(regression[1].splitlines()) < 15  # short enough for a PR comment
    missing = run(["compare", str(model_files[STRONG]), "no/such/file.csv"], capsys)
    assert missing[0] == 2 and missing[2].count("\n") == 1
    assert "no/such/file.csv" in missing[2] and missing[2].startswith("evalbars compare: error:")
    two_models = run(["compare", str(model_files["table"])], capsys)
    assert two_models[0] == 2 and "--baseline NAME --candidate NAME" in two_models[2]
    usage = run(["compare", str(model_files["table"]), "--margin", "x"], capsys)
    assert usage[0] == 2


def test_one_table_with_names_and_an_inconclusive_pair(model_files, capsys):
    # Qwen1.5-7B-Chat vs Yi-6b-Chat: 0.3 points apart, the interval straddles 0.
    status, out, _ = run(
        [
            "compare",
            str(model_files["table"]),
            "--baseline",
            "Qwen1.5-7B-Chat",
            "--candidate",
            "Yi-6b-Chat",
            "--format",
            "csv",
            "--by-category",
        ],
        capsys,
    )
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert status == 3 and table["verdict"].iloc[0] == "inconclusive"
    assert table["questions"].iloc[1:].sum() == table["questions"].iloc[0] == 1497
    # A 5-point margin makes the same data non-inferior: the sign-flip interval of the 14
    # categories runs from -4.1 to +3.5 points (CR2 with t on 11.6 df gave -4.3 to +3.8).
    status, out, _ = run(
        [
            "compare",
            str(model_files["table"]),
            "--baseline",
            "Qwen1.5-7B-Chat",
            "--candidate",
            "Yi-6b-Chat",
            "--margin",
            "5",
        ],
        capsys,
    )
    assert status == 0 and out.startswith("**non-inferior**")
    assert "| -0.3 | -4.1 to +3.5 (category sign-flip test, 14 categories, all 16,384 sign " in out
    assert "compare" in cli.build_parser().format_help()


def test_interval_is_the_category_sign_flip_tests_and_tests_are_its_halves(real_wide):
    result = gate.compare_models(real_wide, STRONG, WEAK, margin=0.05, alpha=0.05)
    s = result.summary
    d = (
        real_wide.scores[:, real_wide.models.index(WEAK)]
        - real_wide.scores[:, real_wide.models.index(STRONG)]
    )
    assert s["diff"] == pytest.approx(d.mean(), abs=1e-15)
    # 14 categories of unequal size: CR2's Satterthwaite df are 11.6, below 30, so the
    # sign-flip test over all 2^14 sign patterns decides; the CR2 SE is reported beside it.
    robust = cr2_mean(d, real_wide.categories)
    assert robust.df == pytest.approx(11.6, abs=0.05) and s["se"] == float(robust.se)
    test = sign_flip_mean(d, real_wide.categories, nulls=[-0.05, 0.0], level=0.95)
    assert (s["se_kind"], s["clusters"], s["sign_patterns"]) == ("sign-flip", 14, 2**14)
    assert (s["low"], s["high"]) == (test.low, test.high)
    assert [round(100 * v, 1) for v in (s["low"], s["high"])] == [-8.2, -3.7]
    assert s["p_noninferiority"] == test.p_greater[0] and s["p_regression"] == test.p_less[0]
    assert s["p_superiority"] == test.p_greater[1]
    # Each decision is the one-sided test at alpha / 2 that the interval implies.
    assert (s["p_noninferiority"] <= 0.025) == (s["low"] > -0.05)
    assert (s["p_regression"] <= 0.025) == (s["high"] < -0.05)
    assert s["verdict"] == gate.verdict(s["low"], s["high"], 0.05)
    # The paired reading of the same questions stays beside it.
    paired = float(np.sqrt(np.mean((d - d.mean()) ** 2) / len(d)))
    assert s["paired_low"] == pytest.approx(d.mean() - 1.959963984540054 * paired, rel=1e-12)


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


def test_sequential_verdict_is_the_sequences_over_the_arrival_order(real_wide, model_files, capsys):
    result = gate.compare_models(real_wide, STRONG, WEAK, sequential=True)
    s = result.summary
    d = (
        real_wide.scores[:, real_wide.models.index(WEAK)]
        - real_wide.scores[:, real_wide.models.index(STRONG)]
    )
    _, low, high = sequential.empirical_bernstein_cs(d, alpha=0.05)
    assert (s["cs_low"], s["cs_high"]) == (low[-1], high[-1])
    assert s["cs_low"] < s["low"] and s["cs_high"] > s["high"]  # wider than the fixed interval
    assert s["verdict"] == gate.verdict(low[-1], high[-1], 0.0)
    backwards = gate.compare_models(
        real_wide, STRONG, WEAK, sequential=True, arrival=real_wide.question_ids[::-1]
    )
    _, low, high = sequential.empirical_bernstein_cs(d[::-1], alpha=0.05)
    assert backwards.summary["cs_low"] == low[-1]
    decided = np.flatnonzero((low > 0) | (high < 0))
    assert backwards.summary["cs_decided_at"] == (decided[0] + 1 if decided.size else None)
    status, out, _ = run(
        ["compare", str(model_files[STRONG]), str(model_files[WEAK]), "--sequential"], capsys
    )
    assert status == gate.EXIT_CODES[out.split("**")[1]] and "anytime-valid" in out


def test_identical_runs_are_inconclusive_at_margin_zero_and_non_inferior_beyond(real_wide):
    twin = real_wide.columns([STRONG])
    twin = wide_scores(
        pd.DataFrame(
            {
                "model": np.repeat(["a", "b"], len(twin.question_ids)),
                "question_id": np.tile(twin.question_ids, 2),
                "category": np.tile(twin.categories, 2),
                "correct": np.tile(twin.scores[:, 0], 2),
            }
        )
    )
    same = gate.compare_models(twin, "a", "b").summary
    assert (same["diff"], same["se"], same["verdict"]) == (0.0, 0.0, "inconclusive")
    assert same["p_noninferiority"] == 1.0 and same["p_regression"] == 1.0
    assert same["pass_to_fail"] == same["fail_to_pass"] == 0 and same["p_mcnemar"] == 1.0
    within = gate.compare_models(twin, "a", "b", margin=0.005).summary
    # No flip on n questions: the exact p of non-inferiority at m is (1 - m)^n (gate._zero_se).
    n = len(twin.question_ids)
    assert within["verdict"] == "non-inferior" and within["p_noninferiority"] == 0.995**n


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
