"""Judge-scored evals with human labels: the data contract (evalbars.data.labels) and the
judge-corrected readings in every table (evalbars.readings.judge_corrected and its users).

The data are tests/data/judged/ (tests/reference/make_judged_table.py): three models, 240
questions, a lenient judge (a wrong answer passes 30% of the time), people's labels on a
uniformly random 30% of the questions; truth.csv holds every true score.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalbars as eb
from evalbars.cli import main
from evalbars.data.labels import (
    attach_labels,
    questions_to_label,
    read_labels,
    tables_carry_labels,
)
from evalbars.data.scores import read_wide_scores, wide_scores, write_wide_scores
from evalbars.errors import ConfigError, InputError
from evalbars.readings import gate
from evalbars.readings.claims import claims_headline, claims_markdown
from evalbars.readings.claims import evaluate_claims as _evaluate_claims
from evalbars.readings.judge_corrected import (
    corrected_pair_columns,
    corrected_readings,
    judge_vs_corrected,
    judge_vs_corrected_display,
)
from evalbars.readings.leaderboard.table import leaderboard_table
from evalbars.readings.planner import plan
from evalbars.readings.ranks import ranks_readings
from evalbars.stats.ppi import normal_p_value, ppi_means, ppi_pair_means

from ...helpers import reading_labels


def evaluate_claims(*args, **kwargs):
    """The claims table with a reading and its adjustment in one label (tests.helpers)."""
    return reading_labels(_evaluate_claims(*args, **kwargs))


JUDGED = Path(__file__).resolve().parents[2] / "data" / "judged"


@pytest.fixture(scope="module")
def labelled():
    """The judged table read with its labels file (as --labels joins it)."""
    return eb.read_items(JUDGED / "judged_scores.csv", labels=JUDGED / "labels.csv")


@pytest.fixture(scope="module")
def truth():
    table = pd.read_csv(JUDGED / "truth.csv")
    return table.groupby("model")["truth"].mean()


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the data contract ----------------------------------------------------------------------------


def test_a_labels_file_and_a_human_column_give_the_same_item_table(labelled):
    inline = eb.read_items(JUDGED / "judged.csv")
    assert labelled["human"].notna().sum() == inline["human"].notna().sum() == 210
    merged = labelled.merge(inline, on=["model", "question_id"], suffixes=("", "_inline"))
    np.testing.assert_array_equal(merged["human"], merged["human_inline"])
    np.testing.assert_array_equal(merged["correct"], merged["correct_inline"])


def test_correct_stays_the_judges_score_and_unlabelled_rows_are_empty(labelled):
    scores = pd.read_csv(JUDGED / "judged_scores.csv")
    assert labelled["correct"].sum() == scores["correct"].sum()
    assert labelled.groupby("model")["human"].count().tolist() == [70, 70, 70]


def test_labels_shared_by_every_model_label_each_models_answer(tmp_path):
    items = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "question_id": [1, 2, 1, 2],
            "category": "x",
            "correct": [1, 0, 0, 1],
        }
    )
    labels = write(tmp_path, "shared.csv", "question_id,human\n2,1\n")
    joined = attach_labels(items, read_labels(labels), labels)
    assert joined["human"].tolist()[1::2] == [1.0, 1.0]
    assert joined["human"].isna().tolist()[0::2] == [True, True]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "model,question_id,human\nmodel-a,q999,1\n",
            "labels.csv, record 1: question 'q999' is not in the data (ids there look like "
            "'q001'); a label must name a question the predictions hold",
        ),
        (
            "model,question_id,human\nmodel-a,q001,1.5\n",
            "labels.csv, record 1: human must be a score in [0, 1] (0/1, true/false or a "
            "fraction), got 1.5",
        ),
        (
            "model,question_id,human\nmodel-a,q001,-1\n",
            "labels.csv, record 1: human must be a score in [0, 1] (0/1, true/false or a "
            "fraction), got -1",
        ),
        (
            "model,question_id,human\nmodel-z,q001,1\n",
            "labels.csv, record 1: model 'model-z' is not in the data (models: model-a, "
            "model-b, model-c)",
        ),
        (
            "model,question_id,human\nmodel-a,q001,1\nmodel-a,q001,0\n",
            "labels.csv, record 2: model 'model-a' question_id 'q001' is labelled twice with "
            "different values (1 at record 1, 0 here); keep one label per answer",
        ),
        (
            "model,question_id,human\nmodel-a,q009,nan\nmodel-b,q009,1\nmodel-c,q009,1\n",
            "labels.csv, record 1: human is 'nan': give a score in [0, 1], or leave the cell "
            "empty where no person labelled the answer",
        ),
        (
            "question_id,category,human\nq009,arith,1\nq001,code,0\n",
            "labels.csv, record 2: question 'q001' is in category 'arith' in the data but 'code' "
            "here; are these labels of other data? (drop the category column to join by "
            "question id alone)",
        ),
        (
            "question_id,category,human\nq009,arith,\nq001,arith,\n",
            "labels.csv: no labels filled in: the human column is empty on all 2 rows; fill it "
            "in (0/1 or a score in [0, 1]) before passing the file as --labels",
        ),
        (
            "model,id,human\nmodel-a,q001,1\n",
            "labels.csv: a labels file needs the column(s) question_id (and model, for labels "
            "of one model's answers); found ['model', 'id', 'human']",
        ),
    ],
)
def test_bad_labels_are_refused_in_one_line_naming_file_and_record(tmp_path, text, line):
    path = write(tmp_path, "labels.csv", text)
    with pytest.raises(InputError) as caught:
        eb.read_items(JUDGED / "judged_scores.csv", labels=path)
    assert str(caught.value) == f"{tmp_path}/{line}"


def test_a_human_column_saying_nan_names_its_record(tmp_path):
    # was: "models ... are labelled on different questions", the nan read as unlabelled
    text = (
        (JUDGED / "judged.csv")
        .read_text()
        .replace("model-a,q009,arith,1,1", "model-a,q009,arith,1,nan")
    )
    path = write(tmp_path, "judged.csv", text)
    with pytest.raises(InputError) as caught:
        eb.read_items(path)
    assert str(caught.value) == (
        f"{path}, record 9: human is 'nan': give a score in [0, 1], or leave the cell empty "
        "where no person labelled the answer"
    )


def test_the_unfilled_template_and_a_filled_file_are_never_overwritten(tmp_path, capsys):
    template = tmp_path / "to_label.csv"
    source = str(JUDGED / "judged_scores.csv")
    sample = ["labels", "sample", source, "--n", "12", "--seed", "1", "-o", str(template)]
    assert main(sample) == 0
    # the unfilled template as --labels: one line, not an IndexError traceback
    capsys.readouterr()
    assert main(["claims", source, "--labels", str(template), "--claim", "model-a > model-b"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"evalbars claims: error: {template}: no labels filled in: the human column is empty "
        "on all 12 rows; fill it in (0/1 or a score in [0, 1]) before passing the file as "
        "--labels"
    ]
    filled = template.read_text().replace(",\n", ",1\n")
    template.write_text(filled)
    # a second draw into the filled file is refused in one line naming it, and leaves it be
    assert main(sample) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"evalbars labels: error: {template}: already exists (it may hold labels people filled "
        "in): not overwritten; name another file, or pass --force to replace it"
    ]
    assert template.read_text() == filled
    assert main([*sample, "--force"]) == 0
    assert template.read_text() != filled and template.read_text().endswith(",\n")


def test_models_labelled_on_different_questions_are_refused_for_a_paired_reading(tmp_path):
    path = write(tmp_path, "labels.csv", "model,question_id,human\nmodel-a,q001,1\n")
    with pytest.raises(InputError) as caught:
        eb.read_items(JUDGED / "judged_scores.csv", labels=path)
    assert str(caught.value) == (
        f"{path}: models 'model-a' and 'model-b' are labelled on different questions "
        "(question 'q001' is labelled for 'model-a' only); a paired judge-corrected reading "
        "needs human labels of every model's answers to the same questions"
    )


def test_two_sources_of_labels_are_refused():
    items = eb.read_items(JUDGED / "judged.csv")
    with pytest.raises(ConfigError, match="already carry a 'human' column"):
        attach_labels(items, read_labels(JUDGED / "labels.csv"), JUDGED / "labels.csv")


def test_a_labels_file_is_never_modified(tmp_path):
    path = write(tmp_path, "labels.csv", (JUDGED / "labels.csv").read_text())
    before = path.read_bytes()
    eb.read_items(JUDGED / "judged_scores.csv", labels=path)
    assert path.read_bytes() == before


def test_tables_carry_labels_from_the_header_alone(tmp_path):
    assert tables_carry_labels([JUDGED / "judged.csv"])
    assert not tables_carry_labels([JUDGED / "judged_scores.csv", tmp_path / "absent.csv"])
    parquet = tmp_path / "judged.parquet"
    pd.read_csv(JUDGED / "judged.csv").to_parquet(parquet)
    assert tables_carry_labels([parquet])


def test_questions_to_label_are_seeded_uniform_and_the_same_for_every_model(labelled):
    first = questions_to_label(labelled, 50, seed=7)
    assert first.equals(questions_to_label(labelled, 50, seed=7))
    assert not first.equals(questions_to_label(labelled, 50, seed=8))
    assert first["question_id"].is_unique and len(first) == 50
    assert first["human"].isna().all() and list(first.columns) == [
        "question_id",
        "category",
        "human",
    ]
    # Uniform: over many seeds every question is drawn about 50/240 of the time.
    counts = pd.concat(
        [questions_to_label(labelled, 50, seed=s)["question_id"] for s in range(400)]
    ).value_counts()
    share = counts.reindex(labelled["question_id"].unique(), fill_value=0) / 400
    assert abs(share.mean() - 50 / 240) < 1e-12
    assert share.between(0.10, 0.32).all()  # binomial(400, 0.208): 6 SD either side


def test_stratified_labels_follow_the_category_sizes(labelled):
    drawn = questions_to_label(labelled, 40, seed=1, stratify=True)
    assert drawn["category"].value_counts().to_dict() == {
        "arith": 10,
        "code": 10,
        "facts": 10,
        "logic": 10,
    }
    with pytest.raises(ConfigError, match="--n must be between 1 and the 240 questions"):
        questions_to_label(labelled, 241, seed=1)


def test_the_score_matrix_keeps_its_labels_and_a_matrix_without_them_is_unchanged(
    tmp_path, labelled
):
    wide = wide_scores(labelled)
    path = tmp_path / "scores.npz"
    write_wide_scores(wide, path)
    again = read_wide_scores(path)
    np.testing.assert_array_equal(again.human, wide.human)
    plain = wide_scores(labelled.drop(columns="human"))
    write_wide_scores(plain, tmp_path / "plain.npz")
    assert read_wide_scores(tmp_path / "plain.npz").human is None
    assert not plain.has_labels and wide.has_labels


# --- the readings -------------------------------------------------------------------------------


def test_one_model_with_labels_gets_its_three_readings(labelled, tmp_path):
    # was: "cannot reshape array of size 0 into shape (240,0)" in the readings stage
    one = labelled[labelled["model"] == "model-a"]
    wide = wide_scores(one)
    table = judge_vs_corrected(wide)
    assert table["scope"].eq("model").all() and len(table) == 3
    rows = table.set_index("reading")
    direct = ppi_means(wide.scores, wide.human)
    assert rows.loc["judge-corrected", "estimate"] == pytest.approx(float(direct.estimate[0]))
    assert rows.loc["human-only", "estimate"] == pytest.approx(float(direct.human_only_estimate[0]))
    assert rows.loc["judge-only", "estimate"] == pytest.approx(float(wide.scores.mean()))
    ranks, _ = ranks_readings(wide, draws=200, replicates=200)
    assert ranks.loc[ranks["reading"] == "judge-corrected", "name"].tolist() == ["model-a"]
    assert corrected_pair_columns(wide, [], []).empty


def test_one_labelled_question_says_why_and_counts_the_family(labelled):
    # one labelled question: no estimate, and every empty cell says why in words
    first = labelled.loc[labelled["human"].notna(), "question_id"].iloc[0]
    items = labelled.assign(human=labelled["human"].where(labelled["question_id"] == first))
    wide = wide_scores(items)
    claims = ["model-a > model-b", "model-b > model-c"]
    table = _evaluate_claims(wide, claims, replicates=200)
    headline = claims_headline(table)
    assert headline.startswith(
        "The judge-corrected reading decides nothing (no estimate: 1 labelled question (a "
        "reading needs 2, and 10 to decide)): the verdicts are of the judge's own scores"
    )
    assert "Holm adjustment for 2 claims" in headline and "0 tests" not in headline
    assert "n/a: no estimate: 1 labelled question" in claims_markdown(table)
    shown = judge_vs_corrected_display(judge_vs_corrected(wide))
    cells = shown[["human-only", "judge-corrected", "lambda-hat", "worth (labels)"]]
    assert not cells.apply(lambda c: c.str.contains("nan|n/a")).any().any()
    assert (
        (cells.iloc[:3] == "no estimate: 1 labelled question (a reading needs 2, and 10 to decide)")
        .all()
        .all()
    )


def test_nine_labels_do_not_decide_and_ten_do(labelled):
    labelled_ids = labelled.loc[labelled["human"].notna(), "question_id"].unique()
    for n, decides in ((9, False), (10, True)):
        keep = labelled["question_id"].isin(labelled_ids[:n])
        wide = wide_scores(labelled.assign(human=labelled["human"].where(keep)))
        table = judge_vs_corrected(wide)
        corrected = table[(table["reading"] == "judge-corrected") & (table["scope"] == "pair")]
        assert corrected["significant"].notna().all() == decides
        note = "" if decides else "too few labels to decide (n < 10): 9 labelled questions"
        assert set(corrected["note"]) == {note}
        result = gate.compare_models(wide, "model-c", "model-a")
        assert (result.summary["verdict"] == result.summary["judge_verdict"]) or decides
        assert (result.summary["judge_corrected_verdict"] is None) == (not decides)


def test_judge_vs_corrected_is_stats_ppi_on_the_shared_questions(labelled):
    wide = wide_scores(labelled)
    table = judge_vs_corrected(wide, level=0.95)
    direct = ppi_means(wide.scores, wide.human)
    models = table[(table["scope"] == "model") & (table["reading"] == "judge-corrected")]
    by_name = dict(zip(wide.models, direct.estimate, strict=True))
    for row in models.itertuples():
        assert row.estimate == pytest.approx(by_name[row.model_a], abs=1e-15)
    human_only = table[(table["scope"] == "model") & (table["reading"] == "human-only")]
    np.testing.assert_allclose(
        human_only.set_index("model_a").loc[wide.models, "estimate"],
        direct.human_only_estimate,
        rtol=0,
        atol=1e-15,
    )
    pair = ppi_pair_means(wide.scores, wide.human, ([0], [1]))
    row = table[
        (table["scope"] == "pair")
        & (table["reading"] == "judge-corrected")
        & (table["model_a"] == "model-a")
        & (table["model_b"] == "model-b")
    ].iloc[0]
    assert row.estimate == pytest.approx(float(pair.estimate[0]), abs=1e-15)
    assert row.se == pytest.approx(float(pair.se[0]), abs=1e-15)
    # the test and interval are the small-sample ones (two pseudo-labels)
    centre, spread = pair.interval_estimate_and_se("ppi++")
    assert row.p_value == pytest.approx(float(normal_p_value(centre, spread)[0]))
    low, high = pair.intervals(0.95)["ppi++"]
    assert (row.ci_low, row.ci_high) == pytest.approx((float(low[0]), float(high[0])))
    assert row.note == "" and row.labels == 70


def test_the_corrected_interval_covers_the_truth_and_the_judge_only_one_does_not(labelled, truth):
    table = judge_vs_corrected(wide_scores(labelled))
    models = table[table["scope"] == "model"].set_index(["reading", "model_a"])
    corrected = models.loc["judge-corrected"]
    judge = models.loc["judge-only"]
    inside = (corrected["ci_low"] <= truth) & (truth <= corrected["ci_high"])
    assert inside.all()
    # The lenient judge overstates model-b by 9.6 points and model-c by 13.8: its interval
    # misses the truth of both.
    missed = (judge["ci_low"] > truth) | (truth > judge["ci_high"])
    assert missed.loc[["model-b", "model-c"]].all()


def test_the_covariance_diagonal_is_the_squared_se(labelled):
    corrected = corrected_readings(wide_scores(labelled))
    np.testing.assert_allclose(np.diag(corrected.covariance), corrected.per_model.se**2, rtol=1e-12)


def test_the_judge_corrected_claim_reading_is_the_pairs_ppi_test_with_holm(labelled):
    wide = wide_scores(labelled)
    claims = ["model-a > model-c", "model-b > model-c"]
    table = evaluate_claims(wide, claims, replicates=200)
    corrected = table[table["reading"] == "judge_corrected_holm"].set_index("claim")
    pairs = ppi_pair_means(wide.scores, wide.human, ([0, 1], [2, 2]))
    p = normal_p_value(*pairs.interval_estimate_and_se("ppi++"))
    # Both one-sided p are below 1/2 here: the doubled one-sided p is the two-sided one.
    np.testing.assert_allclose(corrected.loc[claims, "p"], p, rtol=1e-12)
    holm = np.maximum.accumulate(np.sort(p) * [2, 1])
    np.testing.assert_allclose(np.sort(corrected.loc[claims, "p_adjusted"]), holm, rtol=1e-12)
    np.testing.assert_allclose(
        corrected.loc[claims, "estimate_points"], 100 * pairs.estimate, rtol=1e-12
    )
    assert "judge_corrected_holm" not in set(
        evaluate_claims(wide_scores(labelled.drop(columns="human")), claims, replicates=200)[
            "reading"
        ]
    )


def test_the_pairwise_table_gains_corrected_columns_only_with_labels(labelled):
    with_labels = eb.pairwise_table(labelled)
    without = eb.pairwise_table(labelled.drop(columns="human"))
    assert set(with_labels.columns) - set(without.columns) == {
        "diff_corrected",
        "se_corrected",
        "p_corrected",
        "p_corrected_holm",
        "significant_corrected",
    }
    pd.testing.assert_frame_equal(with_labels[without.columns], without)
    columns = corrected_pair_columns(
        wide_scores(labelled), with_labels["model_a"], with_labels["model_b"]
    )
    np.testing.assert_array_equal(with_labels["p_corrected"], columns["p_corrected"])


def test_ranks_leaderboard_and_compare_read_the_corrected_scores(labelled):
    wide = wide_scores(labelled)
    corrected = corrected_readings(wide)
    ranks, _ = ranks_readings(wide, draws=500, replicates=500)
    rows = ranks[ranks["reading"] == "judge-corrected"]
    assert rows["name"].tolist() == corrected.order()
    estimate = dict(zip(corrected.models, corrected.per_model.estimate, strict=True))
    np.testing.assert_allclose(rows["score"], [estimate[m] for m in rows["name"]], rtol=1e-15)
    board = leaderboard_table(wide, splits=5)
    np.testing.assert_allclose(
        board.set_index("model").loc[corrected.models, "corrected_accuracy"],
        corrected.per_model.estimate,
        rtol=1e-15,
    )
    result = gate.compare_models(wide, "model-c", "model-a", margin=0.01)
    s = result.summary
    pair = ppi_pair_means(
        wide.columns(["model-a", "model-c"]).scores,
        wide.columns(["model-a", "model-c"]).human,
        ([0], [1]),
    )
    assert s["judge_corrected_diff"] == pytest.approx(float(pair.estimate[0]), abs=1e-15)
    assert s["labels"] == 70 and s["verdict"] == s["judge_corrected_verdict"]
    assert "judge-corrected (PPI++, 70 human labels)" in gate.compare_markdown(result)


def test_the_planner_counts_labels_by_the_effective_sample_size_rule():
    # 5 points, disagreement 0.30, rho 0.7, 80% power at 5%: 935 questions, 477 labels
    # (the labels_needed docstring's example), 618 of 2,000 judged questions.
    answer = plan(2, 0.05, 0.30, procedure="none", judge_correlation=0.7)
    assert (answer["questions_high"], answer["labels_high"]) == (935.0, 477.0)
    assert (
        plan(2, 0.05, 0.30, procedure="none", judge_correlation=0.7, judged_questions=2000)[
            "labels_high"
        ]
        == 618.0
    )


def test_intervals_on_a_few_labels_stay_within_what_the_score_can_be():
    # The real Inspect model_graded logs: 8 labelled questions, a human-only accuracy of 0.75
    # with SE 0.153, whose normal interval would run to 1.05.
    logs = Path(__file__).resolve().parents[2] / "data" / "harness" / "inspect" / "model_graded"
    items = eb.read_items([logs], labels=logs / "labels.csv")
    table = eb.judge_corrected_table(items)
    models = table[table["scope"] == "model"]
    human = models[models["reading"] == "human-only"].iloc[0]
    assert human["estimate"] == 0.75 and human["se"] == pytest.approx(np.sqrt(0.75 * 0.25 / 8))
    # the interval: two pseudo-labels (7 of 10 with the half-counts), cut at 1
    centre = (6 + 1) / 10
    spread = np.sqrt((6 * 0.3**2 + 2 * 0.7**2 + 2 * 0.5 * 0.3**2 + 2 * 0.5 * 0.7**2) / (10 * 9))
    assert human["ci_low"] == pytest.approx(centre - 1.959964 * spread)
    assert human["ci_high"] == pytest.approx(centre + 1.959964 * spread)  # 0.9994, was 1.05
    # 8 labels: shown, and deciding nothing, in words
    assert set(models.loc[models["reading"] != "judge-only", "note"]) == {
        "too few labels to decide (n < 10): 8 labelled questions"
    }
    assert (models["ci_low"].dropna() >= 0).all() and (models["ci_high"].dropna() <= 1).all()
    pairs = table[table["scope"] == "pair"]
    assert (pairs["ci_low"].dropna() >= -1).all() and (pairs["ci_high"].dropna() <= 1).all()
