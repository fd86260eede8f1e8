"""The release gate (`evalbars compare`) on the MMLU-Pro default subsample: flips against McNemar's
discordant counts, exit codes, the category sign-flip interval, the sequential verdict."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalbars import cli
from evalbars.data.scores import wide_scores
from evalbars.readings import gate
from evalbars.stats import pairwise, sequential
from evalbars.stats.cluster_robust import cr2_mean, sign_flip_mean

from ..unit.readings.test_gate import run

STRONG, WEAK = "Mistral-7B-v0.1", "Mistral-7B-Instruct-v0.1"  # 5.9 points apart on the subsample


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
