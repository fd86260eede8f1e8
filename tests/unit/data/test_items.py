"""The canonical item table (evalbars.data.items): joining sources, categories, missing predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from evalbars.cli import main
from evalbars.data.items import (
    ITEM_COLUMNS,
    apply_missing_policy,
    build_item_table,
    missing_prediction_counts,
    rescore,
    write_item_table,
)
from evalbars.data.readers import read_long_table, read_mmlu_pro
from evalbars.data.scores import wide_scores
from evalbars.errors import InputError

from ...helpers import record, write_json


def raw_pair(tmp_path):
    a = read_mmlu_pro(
        write_json(
            tmp_path / "model_outputs_A_5shots.json",
            [record(1), record(2, pred=None), record(3, category="law", pred="C")],
        )
    )
    b = read_mmlu_pro(
        write_json(
            tmp_path / "model_outputs_B_5shots.json",
            [record(1, pred=None), record(2), record(3, category="law")],
        )
    )
    return [a, b]


def test_item_table_columns_and_policy_wrong(tmp_path):
    items = build_item_table(raw_pair(tmp_path), "wrong", 0)
    assert items.columns.tolist() == ITEM_COLUMNS
    assert items["correct"].tolist() == [1, 0, 0, 0, 1, 1]
    assert items["pred"].isna().tolist() == [False, True, False, True, False, False]
    assert items["missing_prediction"].tolist() == [False, True, False, True, False, False]


def test_rescore_changes_only_the_missing_predictions(tmp_path):
    raw = raw_pair(tmp_path)
    wrong = build_item_table(raw, "wrong", 0)
    guessed = build_item_table(raw, "random_guess", 5)
    # Re-scoring the `wrong` table as random guesses gives the table built that way.
    pd.testing.assert_frame_equal(rescore(wrong, "random_guess", 5), guessed)
    pd.testing.assert_frame_equal(rescore(guessed, "wrong", 0), wrong)
    kept = ~wrong["missing_prediction"]
    assert wrong.loc[kept, "correct"].tolist() == guessed.loc[kept, "correct"].tolist()


def test_empty_correct_in_a_long_table_is_a_missing_prediction(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("model,question_id,category,correct\nA,1,x,1\nA,2,y,\nB,1,x,0\nB,2,y,1\n")
    items = build_item_table([read_long_table(path)], "wrong", 0)
    assert items["missing_prediction"].tolist() == [False, True, False, False]
    assert items["correct"].tolist() == [1, 0, 0, 1]
    assert missing_prediction_counts([read_long_table(path)])["missing_predictions"].tolist() == [
        1,
        0,
    ]


def test_item_table_policy_exclude_drops_and_reports(tmp_path):
    raw = raw_pair(tmp_path)
    items = build_item_table(raw, "exclude", 0)
    assert len(items) == 4 and items["pred"].notna().all()
    counts = missing_prediction_counts(raw)
    assert counts["missing_predictions"].tolist() == [1, 1]
    assert counts["missing_share"].tolist() == pytest.approx([1 / 3, 1 / 3])


def test_random_guess_is_seeded_and_right_one_time_in_n_options():
    n = 40_000
    frame = pd.DataFrame(
        {
            "model": "M",
            "question_id": np.arange(n),
            "category": "c",
            "src": None,
            "answer": "A",
            "pred": None,
            "n_options": np.where(np.arange(n) % 2 == 0, 4, 10),
            "correct": pd.array([pd.NA] * n, dtype="Int8"),
            "source_file": "f",
            "missing_prediction": True,
        }
    )
    first = apply_missing_policy(frame, "random_guess", 7)
    again = apply_missing_policy(frame.sample(frac=1, random_state=3), "random_guess", 7)
    # The guesses follow (model, question) order, not the order the rows came in.
    assert again["question_id"].tolist() != first["question_id"].tolist()
    assert first["correct"].tolist() == again.sort_values("question_id")["correct"].tolist()
    four = first.loc[first["n_options"] == 4, "correct"].mean()
    ten = first.loc[first["n_options"] == 10, "correct"].mean()
    # Binomial standard errors are 0.0031 and 0.0021; allow 4 of them.
    assert abs(four - 0.25) < 4 * np.sqrt(0.25 * 0.75 / (n / 2))
    assert abs(ten - 0.10) < 4 * np.sqrt(0.10 * 0.90 / (n / 2))
    assert not first["correct"].equals(apply_missing_policy(frame, "random_guess", 8)["correct"])


@pytest.mark.parametrize("policy", ["wrong", "random_guess", "exclude"])
def test_a_model_with_no_score_at_all_is_refused_up_front(tmp_path, policy):
    """Every prediction missing: `wrong` would analyse it as 0%, `exclude` drop it."""
    a = read_mmlu_pro(write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2)]))
    path = write_json(
        tmp_path / "model_outputs_B_5shots.json", [record(1, pred=None), record(2, pred=None)]
    )
    with pytest.raises(InputError) as caught:
        build_item_table([a, read_mmlu_pro(path)], policy, 0)
    assert str(caught.value) == (
        f"{path}: model 'B' has no score: all 2 of its rows are missing predictions (pred null "
        "(the answer could not be extracted)), which would be analysed as 0%; fix its source or "
        "leave it out"
    )


def test_unknown_policy(tmp_path):
    with pytest.raises(ValueError, match="missing_prediction must be one of"):
        build_item_table(raw_pair(tmp_path), "drop", 0)


def test_category_conflict_between_models_is_fatal(tmp_path):
    a = read_mmlu_pro(write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2)]))
    b = read_mmlu_pro(
        write_json(tmp_path / "model_outputs_B_5shots.json", [record(1), record(2, category="law")])
    )
    with pytest.raises(
        InputError,
        match=r"model_outputs_B_5shots\.json, record 2: question 2 has category 'law' for model 'B' but 'math' for model 'A'",
    ):
        build_item_table([a, b])


def test_same_model_from_two_files_is_fatal(tmp_path):
    a = read_mmlu_pro(write_json(tmp_path / "one.json", [record(1)]), model="A")
    b = read_mmlu_pro(write_json(tmp_path / "two.json", [record(2)]), model="A")
    with pytest.raises(InputError, match=r"/two\.json: model 'A' also comes from \S*/one\.json"):
        build_item_table([a, b])


def test_long_table_takes_categories_from_other_sources(tmp_path):
    a = read_mmlu_pro(
        write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2, category="law")])
    )
    path = tmp_path / "mine.csv"
    path.write_text("model,question_id,correct\nMine,1,1\nMine,2,0\n")
    items = build_item_table([a, read_long_table(path)])
    assert items.loc[items["model"] == "Mine", "category"].tolist() == ["math", "law"]


def test_wide_scores_orders_rows_by_category_and_marks_gaps(tmp_path):
    items = build_item_table(raw_pair(tmp_path), "exclude", 0)
    wide = wide_scores(items, models=["B", "A"])
    assert wide.models == ["B", "A"]
    assert wide.question_ids.tolist() == [3, 1, 2]
    assert wide.categories.tolist() == ["law", "math", "math"]
    assert not wide.complete
    np.testing.assert_array_equal(wide.scores, [[1, 0], [np.nan, 1], [1, np.nan]])
    assert wide.category_codes.tolist() == [0, 1, 1]


def test_a_question_with_no_option_is_refused(tmp_path, capsys):
    table = tmp_path / "nopt.csv"
    table.write_text("model,question_id,correct,n_options\nA,1,1,4\nA,2,,0\nB,1,0,4\nB,2,1,4\n")
    assert main(["read", str(table), "--missing-prediction", "random_guess"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars read: error: {table}, record 2: a question has at least 1 option, got "
        "n_options 0"
    )


def test_an_item_table_is_written_whole_with_statistics_of_its_numeric_columns_only(tmp_path):
    """write_item_table reads back as Arrow's default writer's table (every value, type and
    attribute); min/max statistics are written
    for the numeric and boolean columns (a reader may filter on them) and not for the
    dictionary columns, whose statistics cost Arrow more than their encoding."""
    source = tmp_path / "mine.csv"
    source.write_text("model,question_id,category,correct\nA,1,x,1\nA,2,y,\nB,1,x,0\nB,2,y,1\n")
    items = build_item_table([read_long_table(source)], "wrong", 0)
    path = tmp_path / "items.parquet"
    write_item_table(items, path)
    items.to_parquet(tmp_path / "default.parquet", index=False)  # Arrow's defaults
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, pd.read_parquet(tmp_path / "default.parquet"))
    pd.testing.assert_frame_equal(back, items, check_categorical=False, check_dtype=False)
    assert back.attrs == items.attrs
    metadata = pq.ParquetFile(path).metadata
    columns = [metadata.row_group(0).column(i) for i in range(metadata.num_columns)]
    with_statistics = {column.path_in_schema for column in columns if column.is_stats_set}
    categorical = {name for name, dtype in items.dtypes.items() if dtype == "category"}
    assert categorical and "model" in categorical
    assert with_statistics == set(items.columns) - categorical
    question = next(c for c in columns if c.path_in_schema == "question_id").statistics
    assert (question.min, question.max) == (items["question_id"].min(), items["question_id"].max())
