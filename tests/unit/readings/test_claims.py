"""Claims: parsing, verdicts on data with known truth, each reading against an independent
computation (statsmodels, scipy), best/top k on a constructed case, the real subsample, the CLI."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats import proportion
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ztest

from evalbars import api, cli
from evalbars.cli import main
from evalbars.data.scores import WideScores, wide_scores
from evalbars.errors import ConfigError
from evalbars.jobs import claims as claim_jobs
from evalbars.readings.claims import (
    CLAIM_COLUMNS,
    ClaimError,
    claims_display,
    claims_markdown,
    parse_claim,
    parse_claims,
    read_claims_table,
    table_readings,
)
from evalbars.readings.claims import (
    evaluate_claims as _evaluate_claims,
)
from evalbars.stats.mixed import fit_lmm, lmm_contrasts
from evalbars.stats.pairwise import pair_statistics, pairwise_table

from ...helpers import last_error, reading_labels


def evaluate_claims(*args, **kwargs):
    """The claims table with a reading and its adjustment in one label (tests.helpers)."""
    return reading_labels(_evaluate_claims(*args, **kwargs))


DATA = Path(__file__).resolve().parents[2] / "data"
MODELS = ["Alpha-7B", "Beta-7B-v0.1", "Gamma-2B", "Delta-1B"]
CATEGORIES = ["computer science", "law", "math"]


# --- Parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "a", "b", "margin", "k", "category"),
    [
        ("Alpha-7B > Beta-7B-v0.1", "superiority", "Alpha-7B", "Beta-7B-v0.1", 0, 1, None),
        ("Alpha-7B < Beta-7B-v0.1", "superiority", "Beta-7B-v0.1", "Alpha-7B", 0, 1, None),
        ("Alpha-7B >= Gamma-2B - 1.5", "noninferiority", "Alpha-7B", "Gamma-2B", 1.5, 1, None),
        ("Alpha-7B >= Gamma-2B - 2 points", "noninferiority", "Alpha-7B", "Gamma-2B", 2, 1, None),
        ("|Alpha-7B - Gamma-2B| < 1", "equivalence", "Alpha-7B", "Gamma-2B", 1, 1, None),
        ("best: Alpha-7B", "best", "Alpha-7B", None, 0, 1, None),
        ("top 1: Alpha-7B", "best", "Alpha-7B", None, 0, 1, None),
        ("top 3: Gamma-2B in law", "top", "Gamma-2B", None, 0, 3, "law"),
        (
            "alpha-7b > Delta-1B in Computer Science",
            "superiority",
            "Alpha-7B",
            "Delta-1B",
            0,
            1,
            "computer science",
        ),
        (
            "  Alpha-7B   >   Beta-7B-v0.1   in  math ",
            "superiority",
            "Alpha-7B",
            "Beta-7B-v0.1",
            0,
            1,
            "math",
        ),
    ],
)
def test_every_claim_form_parses(text, kind, a, b, margin, k, category):
    claim = parse_claim(text, MODELS, CATEGORIES)
    assert (claim.kind, claim.model_a, claim.model_b) == (kind, a, b)
    assert (claim.margin, claim.k, claim.category) == (margin, k, category)
    assert parse_claim(claim.label, MODELS, CATEGORIES).label == claim.label


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Alpha-7B >> Beta-7B-v0.1", "claim 'Alpha-7B >> Beta-7B-v0.1': malformed; write 'A > B'"),
        ("Alpha-7B>Beta-7B-v0.1", "malformed"),
        ("Alpha-7B >= Beta-7B-v0.1", "a non-inferiority claim needs a margin: 'A >= B - d'"),
        ("Alpha > Beta-7B-v0.1", "unknown model 'Alpha'; did you mean 'Alpha-7B'? (models: "),
        ("Alpha-7B > Beta-7B-v0.1 in maths", "unknown category 'maths'; did you mean 'math'?"),
        ("Alpha-7B > Alpha-7B", "compares 'Alpha-7B' with itself"),
        ("|Alpha-7B - Gamma-2B| < 0", "the margin must be positive points, got 0"),
        ("top 4: Alpha-7B", "'top 4' needs 1 <= k < 4, the number of models in the data"),
        ("", "empty"),
    ],
)
def test_bad_claims_fail_with_one_line_naming_the_claim(text, message):
    with pytest.raises(ClaimError, match=None) as info:
        parse_claim(text, MODELS, CATEGORIES)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_claim_listed_twice_is_an_error():
    with pytest.raises(ClaimError, match="listed twice"):
        parse_claims(["Alpha-7B > Gamma-2B", "Gamma-2B < Alpha-7B"], MODELS, CATEGORIES)


# --- Margins that were misread -------------------------------------------------------------------


CLAIM_MODELS = ["Alpha-7B", "Beta-7B", "Gamma-2B"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("|Alpha-7B - Beta-7B| < -2", "the margin must be positive points, got -2"),
        ("Alpha-7B >= Beta-7B - -2", "the margin must be positive points, got -2"),
        ("|Alpha-7B - Beta-7B| < 0", "the margin must be positive points, got 0"),
        ("Alpha-7B >= Beta-7B - 150", "the margin must be below 100 points, got 150"),
        (
            "|Alpha-7B - Beta-7B| < 0.02",
            "a margin of 0.02 points is below 1 point: did you mean 2 points? (margins are "
            "accuracy points; write '0.02 points' if you mean it)",
        ),
        (
            "Alpha-7B > Beta-7B - 2",
            "'A > B' subtracts no margin; for non-inferiority by 2 points write 'A >= B - 2', "
            "for superiority by 2 points 'A > B + 2'",
        ),
        (
            "Alpha-7B < Beta-7B + 3 points",
            "'A < B' takes no margin; write it from the better side: 'B > A + 3' for "
            "superiority by 3 points, or 'B >= A - 3' for non-inferiority",
        ),
        ("Alpha-7B >= Beta-7B + 2", "the margin is subtracted: write 'A >= B - 2'"),
        ("top -1: Alpha-7B", "'top k' needs a whole number k >= 1, got '-1'"),
        ("top 0: Alpha-7B", "'top k' needs a whole number k >= 1, got '0'"),
        ("top 1.5: Alpha-7B", "'top k' needs a whole number k >= 1, got '1.5'"),
    ],
)
def test_claims_with_a_misread_margin_say_what_is_wrong_with_the_margin(text, problem):
    with pytest.raises(ClaimError) as info:
        parse_claim(text, CLAIM_MODELS, ["math"])
    assert str(info.value) == f"claim {text!r}: {problem}"


def test_a_margin_under_one_point_with_its_unit_is_kept_and_spelled_back_with_it():
    claim = parse_claim("|Alpha-7B - Beta-7B| < 0.5 points", CLAIM_MODELS, ["math"])
    assert (claim.kind, claim.margin, claim.label) == (
        "equivalence",
        0.5,
        "|Alpha-7B - Beta-7B| < 0.5 points",
    )
    assert parse_claim(claim.label, CLAIM_MODELS, ["math"]) == claim
    assert parse_claim("top-2: Gamma-2B", CLAIM_MODELS, ["math"]).k == 2


# --- Known truth ---------------------------------------------------------------------------------


def known_truth(n=3000, seed=7) -> WideScores:
    """Four models with true accuracies 0.60, 0.60, 0.50, 0.40 and a shared question effect.

    Alpha and Beta are equally good; Alpha beats Gamma by 10 points and Delta by 20.
    """
    rng = np.random.default_rng(seed)
    truth = np.array([0.60, 0.60, 0.50, 0.40])
    easy = rng.normal(0, 1.0, size=(n, 1))
    latent = 0.6 * easy + 0.8 * rng.normal(size=(n, 4))
    scores = (latent < stats.norm.ppf(truth)).astype(float)
    categories = np.array(CATEGORIES)[np.arange(n) % 3]
    order = np.argsort(categories, kind="stable")
    return WideScores(scores[order], MODELS, np.arange(n)[order], categories[order])


TRUTH_CLAIMS = {
    "Alpha-7B > Gamma-2B": "supported",  # true gap 10
    "Delta-1B > Gamma-2B": "contradicted",  # the opposite is true
    "Alpha-7B > Beta-7B-v0.1": "not supported",  # tied
    "|Alpha-7B - Beta-7B-v0.1| < 5": "supported",  # tied, margin 5
    "|Alpha-7B - Gamma-2B| < 2": "contradicted",  # 10 apart
    "Gamma-2B >= Alpha-7B - 2": "contradicted",  # 10 worse
    "Beta-7B-v0.1 >= Alpha-7B - 5": "supported",  # tied, margin 5
    "best: Alpha-7B": "not supported",  # tied with Beta
    "top 2: Alpha-7B": "supported",
    "top 2: Gamma-2B": "contradicted",  # two models beat it
    "Alpha-7B > Delta-1B in law": "supported",  # 20 points on 1,000 questions
}


@pytest.fixture(scope="module")
def truth():
    wide = known_truth()
    return wide, evaluate_claims(wide, list(TRUTH_CLAIMS), replicates=2000, seed=3)


def test_verdicts_on_data_with_known_truth(truth):
    _, table = truth
    assert list(table.columns) == CLAIM_COLUMNS
    for reading in ("paired", "paired_holm", "mixed_holm"):
        got = table[table["reading"] == reading].set_index("claim")["verdict"]
        expected = {parse_claim(c, MODELS, CATEGORIES).label: v for c, v in TRUTH_CLAIMS.items()}
        assert got.to_dict() == expected, reading
    boot = table[(table["reading"] == "bootstrap") & (table["verdict"] != "n/a")]
    assert boot.set_index("claim")["verdict"].to_dict() == {
        "best: Alpha-7B": "not supported",
        "top 2: Alpha-7B": "supported",
        "top 2: Gamma-2B": "contradicted",
    }


def rows(table, claim, reading):
    return table[(table["claim"] == claim) & (table["reading"] == reading)].iloc[0]


def test_paired_reading_matches_statsmodels_z_and_tost(truth):
    wide, table = truth
    a, b, g = (wide.scores[:, MODELS.index(m)] for m in ("Alpha-7B", "Beta-7B-v0.1", "Gamma-2B"))
    # Superiority: the one-sided z-test of the per-question differences (population variance).
    one = ztest(a - g, value=0, alternative="larger", ddof=0)[1]
    assert rows(table, "Alpha-7B > Gamma-2B", "paired")["p"] == pytest.approx(2 * one, rel=1e-9)
    # Non-inferiority: against -d.
    one = ztest(b - a, value=-0.05, alternative="larger", ddof=0)[1]
    got = rows(table, "Beta-7B-v0.1 >= Alpha-7B - 5", "paired")["p"]
    assert got == pytest.approx(2 * one, rel=1e-9)
    # Equivalence: Schuirmann's two one-sided tests, each statsmodels' z-test.
    tost = max(
        ztest(a - b, value=-0.05, alternative="larger", ddof=0)[1],
        ztest(a - b, value=0.05, alternative="smaller", ddof=0)[1],
    )
    got = rows(table, "|Alpha-7B - Beta-7B-v0.1| < 5", "paired")["p"]
    assert got == pytest.approx(min(1, 2 * tost), rel=1e-9)


def test_naive_reading_matches_statsmodels_wald_test_of_two_proportions(truth):
    wide, table = truth
    n = wide.scores.shape[0]
    a, g = wide.scores[:, 0].sum(), wide.scores[:, 2].sum()
    result = proportion.test_proportions_2indep(a, n, g, n, method="wald", alternative="larger")
    assert rows(table, "Alpha-7B > Gamma-2B", "naive")["p"] == pytest.approx(
        2 * result.pvalue, rel=1e-9
    )


def test_mcnemar_reading_is_the_exact_binomial_test(truth):
    wide, table = truth
    a, g = wide.scores[:, 0], wide.scores[:, 2]
    wins, losses = int(((a == 1) & (g == 0)).sum()), int(((a == 0) & (g == 1)).sum())
    p = stats.binomtest(wins, wins + losses, 0.5, alternative="greater").pvalue
    assert rows(table, "Alpha-7B > Gamma-2B", "mcnemar")["p"] == pytest.approx(2 * p, rel=1e-9)
    assert rows(table, "|Alpha-7B - Beta-7B-v0.1| < 5", "mcnemar")["verdict"] == "n/a"


def test_holm_readings_adjust_over_the_claims_made(truth):
    _, table = truth
    for reading in ("paired_holm", "mixed_holm"):
        part = table[table["reading"] == reading]
        expected = multipletests(part["p"], method="holm")[1]
        np.testing.assert_allclose(part["p_adjusted"], expected, rtol=1e-12)
        assert (part["family_size"] == len(TRUTH_CLAIMS)).all()


def test_mixed_reading_uses_the_nested_model_contrast(truth):
    wide, table = truth
    contrasts = lmm_contrasts(fit_lmm(wide, "category_question")).set_index(["model_a", "model_b"])
    z = contrasts.loc[("Alpha-7B", "Gamma-2B"), "z"]
    row = rows(table, "Alpha-7B > Gamma-2B", "mixed_holm")
    assert row["p"] == pytest.approx(2 * stats.norm.sf(z), rel=1e-9)


def test_category_claims_use_only_that_categorys_questions(truth):
    wide, table = truth
    keep = wide.categories == "law"
    d = wide.scores[keep, 0] - wide.scores[keep, 3]
    row = rows(table, "Alpha-7B > Delta-1B in law", "paired")
    assert row["questions"] == keep.sum() == 1000
    assert row["estimate_points"] == pytest.approx(100 * d.mean())
    assert row["p"] == pytest.approx(2 * ztest(d, alternative="larger", ddof=0)[1], rel=1e-9)


def test_a_category_claim_with_epochs_is_the_whole_set_claim_on_that_category():
    # with repeated samples, a claim "... in math" used to fit its mixed reading to cell means
    wide = wide_scores(pd.read_csv(DATA / "synthetic_epochs.csv"))
    assert wide.has_repeats
    math = wide.rows(wide.categories == "math")
    assert math.has_repeats and math.scores.shape[0] < wide.scores.shape[0]
    claim = "Falcon-7B > Orca-2-7B"
    per_category = evaluate_claims(wide, [f"{claim} in math"], replicates=200)
    whole_set = evaluate_claims(math, [claim], replicates=200)
    numbers = per_category.columns.difference(["claim", "category"])
    pd.testing.assert_frame_equal(per_category[numbers], whole_set[numbers])
    # and the mixed reading is the model of the repeated samples, not of the cell means
    mixed = rows(per_category, f"{claim} in math", "mixed_holm")
    labels = np.asarray([str(q) for q in math.question_ids])
    cell_means = {"samples": None, "within_ss": None}
    for repeats, agrees in (({}, True), (cell_means, False)):
        fit = fit_lmm(replace(math, categories=labels, **repeats), "category")
        pair = lmm_contrasts(fit).set_index(["model_a", "model_b"]).loc[("Falcon-7B", "Orca-2-7B")]
        assert 0.05 < pair["p"] < 0.99
        p = 2 * stats.norm.sf(pair["z"])
        assert bool(mixed["p"] == pytest.approx(p, rel=1e-9)) is agrees


def test_family_of_claims_and_all_pairs_adds_every_pair():
    wide = known_truth(600, seed=1)
    table = evaluate_claims(wide, ["Alpha-7B > Gamma-2B"], family="claims_and_all_pairs")
    holm = rows(table, "Alpha-7B > Gamma-2B", "paired_holm")
    pairs = pairwise_table(wide)
    assert holm["family_size"] == 1 + len(pairs)
    family = np.concatenate([[holm["p"]], pairs["p_paired"]])
    assert holm["p_adjusted"] == pytest.approx(multipletests(family, method="holm")[1][0])


def test_best_and_top_k_on_a_constructed_case():
    """A answers everything, B the first 100 of 200, C the first 80: the order is A > B > C."""
    n = 200
    q = np.arange(n)
    scores = np.column_stack([np.ones(n), (q < 100), (q < 80)]).astype(float)
    wide = WideScores(scores, ["A", "B", "C"], q, np.array(["x", "y"])[q % 2])
    claims = ["best: A", "best: B", "top 2: B", "top 2: C", "B > C", "best: C"]
    table = evaluate_claims(wide, claims, replicates=500, seed=1)
    for reading in ("paired", "mcnemar", "paired_holm", "bootstrap"):
        got = table[table["reading"] == reading].set_index("claim")["verdict"].to_dict()
        assert got["best: A"] == "supported", reading
        assert got["best: B"] == "contradicted", reading
        assert got["top 2: B"] == "supported", reading
        assert got["top 2: C"] == "contradicted", reading
    boot = rows(table, "best: A", "bootstrap")
    assert (boot["rank_low"], boot["rank_high"], boot["p_top"]) == (1, 1, 1.0)
    assert rows(table, "best: B", "paired")["rival"] == "A"


def test_questions_needed_follow_the_closed_form(truth):
    wide, table = truth
    row = rows(table, "Alpha-7B > Beta-7B-v0.1", "paired_holm")
    a, b = wide.scores[:, 0], wide.scores[:, 1]
    g, delta = (a - b).mean(), (a != b).mean()
    level = 0.05 / len(TRUTH_CLAIMS)
    z = stats.norm.ppf(1 - level / 2) + stats.norm.ppf(0.8)
    assert row["questions_needed"] == np.ceil(z**2 * (delta - g**2) / g**2)
    assert row["more_questions"] == row["questions_needed"] - 3000
    assert rows(table, "Alpha-7B > Gamma-2B", "paired_holm")["more_questions"] == 0


def test_questions_needed_of_margin_claims_follow_chow_shao_and_wang(truth):
    # Non-inferiority (margin d): effect g + d; equivalence: effect d - |g|; the variance of a
    # paired difference at the observed gap, delta - g^2 (Chow, Shao and Wang, section 3.1).
    wide, table = truth
    z = stats.norm.ppf(1 - 0.05 / len(TRUTH_CLAIMS) / 2) + stats.norm.ppf(0.8)
    a, b = wide.scores[:, 0], wide.scores[:, 1]
    g, delta = (b - a).mean(), (a != b).mean()
    row = rows(table, "Beta-7B-v0.1 >= Alpha-7B - 5", "paired_holm")
    assert row["verdict"] == "supported"
    assert row["questions_needed"] == np.ceil(z**2 * (delta - g**2) / (g + 0.05) ** 2)
    row = rows(table, "|Alpha-7B - Beta-7B-v0.1| < 5", "paired_holm")
    assert row["questions_needed"] == np.ceil(z**2 * (delta - g**2) / (0.05 - abs(g)) ** 2)


def test_equivalence_at_no_observed_gap_needs_both_one_sided_tests():
    # g = 0 exactly: both one-sided tests must reject, so z_{1-beta/2} replaces z_{1-beta}
    # (Chow, Shao and Wang, example 3.1.4: 35 where z_{1-beta} would give 25).
    q = np.arange(400)
    a, b = (q % 4 == 0), (q % 4 == 1)  # disagree on half of the questions, tied overall
    wide = WideScores(np.column_stack([a, b]).astype(float), ["A", "B"], q, np.full(400, "x"))
    row = rows(evaluate_claims(wide, ["|A - B| < 2"]), "|A - B| < 2", "paired_holm")
    assert row["estimate_points"] == 0.0 and row["disagreement"] == 0.5
    z = stats.norm.ppf(1 - 0.05 / 2) + stats.norm.ppf(1 - 0.2 / 2)
    assert row["questions_needed"] == np.ceil(z**2 * 0.5 / 0.02**2)
    assert row["more_questions"] == row["questions_needed"] - 400


def test_same_inputs_give_identical_tables(truth, tmp_path):
    wide, table = truth
    again = evaluate_claims(wide, list(TRUTH_CLAIMS), replicates=2000, seed=3)
    pd.testing.assert_frame_equal(table, again)
    table.to_csv(tmp_path / "claims.csv", index=False)
    back = read_claims_table(tmp_path / "claims.csv")
    assert (back["verdict"] == table["verdict"]).all() and (
        back["model_b"] == table["model_b"]
    ).all()
    shown = claims_display(_evaluate_claims(wide, list(TRUTH_CLAIMS), replicates=2000, seed=3))
    assert len(shown) == len(TRUTH_CLAIMS) and "paired, Holm" in shown.columns


def test_a_reading_and_its_adjustment_are_two_columns(truth):
    wide, _ = truth
    table = _evaluate_claims(wide, ["Alpha-7B > Gamma-2B"], replicates=200, adjust="bh")
    pairs = list(zip(table["reading"], table["adjustment"], strict=True))
    assert pairs == [
        ("naive", "none"),
        ("paired", "none"),
        ("mcnemar", "none"),
        ("bayes", "none"),
        ("paired", "bh"),
        ("mixed", "bh"),
        ("bootstrap", "none"),
        ("mcb", "none"),
    ]
    assert [r.title for r in table_readings(table)] == [
        "naive",
        "paired",
        "McNemar",
        "Bayesian",
        "paired, BH",
        "mixed, BH",
        "bootstrap ranks",
        "confidence set",
    ]
    # Only the adjusted readings count the family; the others are alone.
    assert set(table.loc[table["adjustment"] == "none", "family_size"]) == {1}


def test_empty_claims_give_an_empty_table(truth):
    wide, _ = truth
    table = _evaluate_claims(wide, [])
    assert table.empty and list(table.columns) == CLAIM_COLUMNS
    assert claims_markdown(table).startswith("No claims configured")


# --- Command line ------------------------------------------------------------------------------------


def run(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def items_csv(tmp_path):
    wide = known_truth(300, seed=2)
    frame = pd.DataFrame(
        [
            {"model": m, "question_id": int(q), "category": c, "correct": int(s)}
            for q, c, row in zip(wide.question_ids, wide.categories, wide.scores, strict=True)
            for m, s in zip(MODELS, row, strict=True)
        ]
    )
    path = tmp_path / "items.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_claims_markdown_csv_and_json(items_csv, tmp_path, capsys):
    claims_file = tmp_path / "claims.txt"
    claims_file.write_text("# mine\nbest: Alpha-7B\n\nAlpha-7B > Delta-1B in law\n")
    argv = [
        "claims",
        str(items_csv),
        "--claim",
        "Alpha-7B > Gamma-2B",
        "--claims-file",
        str(claims_file),
        "--replicates",
        "200",
    ]
    status, out, err = run(argv, capsys)
    assert status == 0 and err == ""
    # 300 questions: fewer than 332, so the answer leads with the exact and Bayesian readings.
    assert out.startswith(
        "With 300 questions (fewer than 332) the z readings' intervals are too narrow; "
        "supported: 1 of 3 by the exact McNemar reading"
    )
    assert "| best: Alpha-7B" in out
    status, out, _ = run([*argv, "--format", "csv"], capsys)
    assert status == 0 and list(pd.read_csv(io.StringIO(out)).columns) == CLAIM_COLUMNS
    status, out, _ = run([*argv, "--format", "json"], capsys)
    assert status == 0 and len(json.loads(out)["rows"]) == 3 * 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--claim", "Alpha-7B >> Gamma-2B"], "claim 'Alpha-7B >> Gamma-2B': malformed"),
        (["--claim", "best: Omega"], "claim 'best: Omega': unknown model 'Omega'"),
        ([], "no claims given; use --claim or --claims-file"),
        (["--claims-file", "/nonexistent/claims.txt"], "/nonexistent/claims.txt: cannot read"),
    ],
)
def test_cli_claims_bad_input_is_one_line_and_exit_1(items_csv, capsys, args, message):
    status, out, err = run(["claims", str(items_csv), *args], capsys)
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_cli_claims_on_a_missing_file(capsys):
    status, _, err = run(["claims", "nope.parquet", "--claim", "best: A"], capsys)
    assert status == 1 and "nope.parquet: file does not exist" in err


LM_EVAL = DATA / "harness" / "lm_eval"


def test_a_claim_listed_twice_in_a_claims_file_names_the_file_and_line(tmp_path, capsys):
    claims_file = tmp_path / "claims.txt"
    claims_file.write_text(
        "# mine\nevalbars/fake-strong > evalbars/fake-weak\n\nevalbars/fake-strong  >  "
        "evalbars/fake-weak\n"
    )
    before = claims_file.read_bytes()
    arguments = ["claims", str(LM_EVAL), "--runs", "newest", "--id-field", "id"]
    assert main([*arguments, "--claims-file", str(claims_file)]) == 1
    assert last_error(capsys) == (
        # (the command line shows a message's runs of spaces as one)
        f"evalbars claims: error: {claims_file}, record 4: claim 'evalbars/fake-strong > "
        "evalbars/fake-weak' is listed twice (first at record 2)"
    )
    assert claims_file.read_bytes() == before
    claim = "evalbars/fake-strong > evalbars/fake-weak"
    assert main([*arguments, "--claim", claim, "--claim", claim]) == 1
    assert last_error(capsys) == (
        f"evalbars claims: error: claim {claim!r}: listed twice (also as {claim!r})"
    )


def test_a_claims_questions_are_those_its_comparison_used(tmp_path, capsys):
    # B lacks question 5: "A > B" is tested on the 4 questions both answered, not on 5.
    rows = [f"A,{q},{q % 2},x" for q in range(1, 6)] + [f"B,{q},0,x" for q in range(1, 5)]
    rows += [f"C,{q},1,x" for q in range(1, 6)]
    table = tmp_path / "unequal.csv"
    table.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    status = main(
        ["claims", str(table), "--claim", "A > B", "--format", "csv", "--replicates", "100"]
    )
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    header, first = out[0].split(","), out[1].split(",")
    assert first[header.index("questions")] == "4"


# --- Unequal samples per question --------------------------------------------------------------


def unequal_epochs(seed=0, n=300) -> pd.DataFrame:
    """The issue's case: A answers each question 3 times at 80%, B once at 75%."""
    rng = np.random.default_rng(seed)
    a, b = rng.random((n, 3)) < 0.8, rng.random(n) < 0.75
    q = np.arange(n)
    return pd.concat(
        [
            pd.DataFrame(
                {"model": "A", "question_id": np.repeat(q, 3), "category": "x"}
                | {"correct": a.ravel().astype(int), "epoch": np.tile([1, 2, 3], n)}
            ),
            pd.DataFrame(
                {"model": "B", "question_id": q, "category": "x", "correct": b.astype(int)}
                | {"epoch": 1}
            ),
        ],
        ignore_index=True,
    )


def test_unequal_epochs_do_not_turn_the_exact_readings_around(tmp_path, capsys):
    items = unequal_epochs()
    wide = wide_scores(items)
    d = wide.scores[:, 0] - wide.scores[:, 1]
    # The sign test on epoch means read "A > B" (4.7 points ahead) as contradicted: B is ahead
    # on 113 questions, A on 79 (exact p 0.017), because one sample of B is more often 1.
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    assert (round(d.mean(), 4), wins, losses) == (0.0467, 79, 113)
    assert stats.binomtest(wins, wins + losses).pvalue == pytest.approx(0.01701206, rel=1e-6)
    table = reading_labels(api.check_claims(items, ["A > B"])).set_index("reading")
    for reading in ("mcnemar", "bayes"):
        row = table.loc[reading]
        assert row["verdict"] == "n/a" and np.isnan(row["p"]) and np.isnan(row["p_adjusted"])
        assert row["note"] == "not applicable (repeated samples per question)"
    # No flip count or odds ratio of the 2x2 table either; the paired z of the per-question
    # means stays (statsmodels' z-test of the differences), and no reading contradicts A > B.
    assert np.isnan(table.loc["paired", "odds_ratio"]) and np.isfinite(
        table.loc["paired", "cohens_h"]
    )
    assert table.loc["paired", "p"] == pytest.approx(
        2 * ztest(d, value=0, alternative="larger", ddof=0)[1], rel=1e-9
    )
    assert "contradicted" not in set(table["verdict"])
    # The answer no longer points at the exact readings below 332 questions.
    path = tmp_path / "unequal.csv"
    items.to_csv(path, index=False)
    status, out, err = run(["claims", str(path), "--claim", "A > B", "--replicates", "100"], capsys)
    assert status == 0 and err == ""
    assert out.startswith(
        "With 300 questions (fewer than 332) the z readings' intervals can be too narrow; the "
        "exact McNemar and Bayesian readings do not apply (repeated samples per question). The "
        "claim is not supported by the paired reading."
    )
    assert "| not applicable (repeated samples per question) |" in out
    assert "| contradicted" not in out and "(1 test)" in out


def test_no_reading_favours_the_model_with_fewer_samples():
    """A: 3 samples per question, B: 1, at the same true probability on every question (drawn
    from Beta(3, 1), mean 0.75), 300 questions. Every reading that decides rejects "A > B"
    and "B > A" at about its nominal 2.5% each way; none favours B."""
    n, alpha = 300, 0.05
    rng = np.random.default_rng(37)
    # The z readings, vectorized over 4,000 samples: the pair statistics the claims read.
    p = rng.beta(3, 1, (4000, n))
    stack = np.stack([rng.binomial(3, p) / 3, rng.binomial(1, p).astype(float)], axis=-1)
    pair = pair_statistics(stack)
    band = 4 * np.sqrt(0.025 * 0.975 / 4000)  # four binomial SEs about 2.5%
    for se in ("se_paired", "se_unpaired"):
        z = pair["diff"][:, 0] / pair[se][:, 0]
        a_ahead, b_ahead = (
            (z > stats.norm.isf(alpha / 2)).mean(),
            (z < stats.norm.ppf(alpha / 2)).mean(),
        )
        assert b_ahead < 0.025 + band and a_ahead < 0.025 + band, se
        if se == "se_paired":  # the paired z holds its level (the naive one is conservative)
            assert abs(a_ahead - 0.025) < band and abs(b_ahead - 0.025) < band
    # Every reading of the claims table, mixed model included, on 20 samples: the exact ones
    # never decide, none contradicts "A > B" more often than chance allows.
    favours_b = {}
    for replicate in range(20):
        p = rng.beta(3, 1, n)
        a, b = rng.binomial(3, p), rng.binomial(1, p)
        wide = WideScores(
            np.column_stack([a / 3, b]).astype(float),
            ["A", "B"],
            np.arange(n),
            np.full(n, "x"),
            samples=np.column_stack([np.full(n, 3), np.ones(n, int)]),
            within_ss=np.column_stack([a * (3 - a) / 3, np.zeros(n)]),
        )
        table = evaluate_claims(wide, ["A > B"], seed=replicate).set_index("reading")
        assert (table.loc[["mcnemar", "bayes"], "verdict"] == "n/a").all()
        for reading, verdict in table["verdict"].items():
            favours_b[reading] = favours_b.get(reading, 0) + (verdict == "contradicted")
    # P(4 or more of 20 | 2.5%) = 0.0015; the sign test on epoch means contradicted in 63%.
    assert max(favours_b.values()) <= 3, favours_b


# --- Models that share no question -------------------------------------------------------------


@pytest.fixture
def unshared(tmp_path):
    """A and B answer different questions; D shares with A only question 2 (category b)."""
    answered = {"A": [1, 2], "B": [3, 4], "C": [1, 2, 3, 4], "D": [2, 3]}
    rows = [
        {"model": m, "question_id": q, "category": "ab"[1 - q % 2], "correct": (q + len(m)) % 2}
        for m, questions in answered.items()
        for q in questions
    ]
    path = tmp_path / "unshared.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("claim", "problem"),
    [
        ("A > B", "'A' and 'B' share no question"),
        (
            "best: A",
            "'A' and 'B' share no question ('best: A' compares 'A' with every other model)",
        ),
        ("A > D in a", "'A' and 'D' share no question in 'a'"),
    ],
)
def test_a_claim_on_models_that_share_no_question_is_refused(unshared, capsys, claim, problem):
    # It printed 0 questions, +nan intervals, "not supported (p 1.000)" and a mixed-model p.
    status, out, err = run(["claims", str(unshared), "--claim", claim], capsys)
    assert status == 1 and out == ""
    assert err.splitlines()[-1] == f"evalbars claims: error: claim {claim!r}: {problem}"
    items = pd.read_csv(unshared)
    with pytest.raises(ClaimError, match=re.escape(problem)):
        evaluate_claims(wide_scores(items), [claim])
    # The API and the workflow's claims_check job refuse it as the command does.
    with pytest.raises(ConfigError, match=re.escape(problem)):
        api.check_claims(items, [claim])
    coded = items.astype({"model": "category", "category": "category"})  # as Parquet gives
    with pytest.raises(ConfigError) as raised:
        claim_jobs.checked_claims(
            claim_jobs.model_accuracy(items), ["a", "b"], claims=[claim], notes=[], answered=coded
        )
    assert str(raised.value) == f"claim {claim!r}: {problem}; edit `claims:` in the config"
    # A pair that shares a question passes, in its category too.
    checked = claim_jobs.checked_claims(
        claim_jobs.model_accuracy(items),
        ["a", "b"],
        claims=["A > D", "A > D in b"],
        notes=[],
        answered=items,
    )
    assert json.loads(checked["checked"].text)["claims"] == ["A > D", "A > D in b"]


def test_questions_needed_on_epoch_means_plan_on_their_variance():
    # The disagreement is the mean square of the per-question differences; on epoch means it
    # is not the share of questions on which the two differ (that overstated the variance).
    wide = wide_scores(pd.read_csv(DATA / "synthetic_epochs.csv"))
    claim = "Falcon-7B > Orca-2-7B"
    row = rows(evaluate_claims(wide, [claim], replicates=100), claim, "paired_holm")
    d = (
        wide.scores[:, wide.models.index("Falcon-7B")]
        - wide.scores[:, wide.models.index("Orca-2-7B")]
    )
    d = d[np.isfinite(d)]  # the questions both answered
    g, delta = d.mean(), (d**2).mean()
    assert row["disagreement"] == pytest.approx(delta, rel=1e-12) and delta < (d != 0).mean()
    z = stats.norm.ppf(1 - 0.05 / 2) + stats.norm.ppf(0.8)
    assert row["questions_needed"] == np.ceil(z**2 * (delta - g**2) / g**2)


def test_a_claim_typed_in_another_unicode_normal_form_names_the_model_read_in_nfc():
    # Names are read in NFC; a claim typed with a decomposed e + U+0301 is the same model.
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    claim = parse_claim(f"{nfd} > beta", models=[nfc, "beta"])
    assert claim.model_a == nfc
