"""Parsing and validation of prediction files (evalbars.io)."""

from __future__ import annotations

import json
import logging
import zipfile

import numpy as np
import pandas as pd
import pytest

from evalbars import io
from evalbars.errors import ConfigError


def record(qid, category="math", answer="A", pred="A", options=4, src="ori"):
    return {
        "question_id": qid,
        "category": category,
        "answer": answer,
        "pred": pred,
        "src": src,
        "options": [f"option {i}" for i in range(options)],
    }


def write_json(path, document):
    path.write_text(json.dumps(document))
    return path


def write_zip(path, document, member="model_outputs_M_5shots.json"):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, json.dumps(document))
    return path


# --- MMLU-Pro JSON ---------------------------------------------------------------------------


def test_reads_plain_and_zipped_json_identically(tmp_path):
    doc = [record(1), record(2, pred="B"), record(3, pred=None, category="law")]
    plain = io.read_mmlu_pro(write_json(tmp_path / "model_outputs_M_5shots.json", doc))
    zipped = io.read_mmlu_pro(write_zip(tmp_path / "model_outputs_M_5shots.zip", doc))
    cols = ["model", "question_id", "category", "answer", "pred", "correct", "n_options"]
    pd.testing.assert_frame_equal(plain[cols], zipped[cols])
    assert plain["model"].unique().tolist() == ["M"]
    assert plain["correct"].tolist() == [1, 0, pd.NA]
    assert plain["n_options"].tolist() == [4, 4, 4]


def test_model_name_from_archive_name():
    assert io.model_from_archive("data/raw/model_outputs_Yi-6b-Chat_5shots.zip") == "Yi-6b-Chat"
    assert io.model_from_archive("my_model.json") == "my_model"
    assert io.archive_name("Yi-6B") == "model_outputs_Yi-6B_5shots.zip"


def test_non_record_entries_are_skipped_with_a_warning(tmp_path, caplog):
    doc = [record(1), "total", record(2), 17]
    with caplog.at_level(logging.WARNING):
        frame = io.read_mmlu_pro(write_json(tmp_path / "m.json", doc))
    assert frame["question_id"].tolist() == [1, 2]
    assert "skipped 2 entries that are not records" in caplog.text
    assert "1 ('total')" in caplog.text and "m.json" in caplog.text


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"question_id": 1}, r"m\.json: expected a JSON list of records, got a JSON dict"),
        (
            [record(1), {"category": "x", "answer": "A", "pred": "A"}],
            r"m\.json, record 1: missing field 'question_id'",
        ),
        ([{"question_id": 1, "category": "x", "answer": "A"}], r"record 0: missing field 'pred'"),
        (
            [record(1), record(2), record(1, pred="C")],
            r"record 2: question_id 1 occurs 2 times for model 'm' \(records \[0, 2\]\)",
        ),
        ([record(1, category="")], r"record 0: category must be a non-empty string"),
        ([record(None)], r"record 0: question_id must be a non-empty integer or string, got None"),
        ([record(1, answer=3)], r"record 0: answer must be a non-empty string, got 3"),
        ([record(1, pred=["A"])], r"record 0: pred must be a string or null"),
    ],
)
def test_bad_records_are_fatal_with_file_record_and_problem(tmp_path, document, message):
    with pytest.raises(io.InputError, match=message):
        io.read_mmlu_pro(write_json(tmp_path / "m.json", document))


def test_empty_inputs_are_fatal(tmp_path):
    with pytest.raises(io.InputError, match=r"empty\.json: the JSON list holds no records"):
        io.read_mmlu_pro(write_json(tmp_path / "empty.json", []))
    (tmp_path / "header.csv").write_text("model,question_id,correct\n")
    with pytest.raises(io.InputError, match=r"header\.csv: the table has no rows"):
        io.read_long_table(tmp_path / "header.csv")


def test_invalid_json_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("[{")
    with pytest.raises(io.InputError, match=r"broken\.json: not valid JSON"):
        io.read_mmlu_pro(path)


@pytest.mark.parametrize("member", ["/etc/evil.json", "../evil.json", "a/../../evil.json"])
def test_archive_members_with_unsafe_paths_are_refused(tmp_path, member):
    path = write_zip(tmp_path / "evil.zip", [record(1)], member=member)
    with pytest.raises(io.InputError, match="unsafe path"):
        io.read_mmlu_pro(path)


def test_archive_members_above_the_size_limit_are_refused(tmp_path, monkeypatch):
    path = write_zip(tmp_path / "bomb.zip", [record(i) for i in range(200)])
    monkeypatch.setattr(io, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(io.InputError, match="would unpack to .* bytes, more than the 1000 allowed"):
        io.read_mmlu_pro(path)


def test_archive_needs_exactly_one_json_member(tmp_path):
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.json", "[]")
        zf.writestr("b.json", "[]")
    with pytest.raises(io.InputError, match="expected exactly one .json member"):
        io.read_mmlu_pro(path)


# --- long tables -----------------------------------------------------------------------------


def test_long_csv_with_correct_column(tmp_path):
    path = tmp_path / "preds.csv"
    path.write_text(
        "model,question_id,correct,category\nA,q1,1,x\nA,q2,0,x\nB,q1,true,x\nB,q2,,x\n"
    )
    frame = io.read_long_table(path)
    assert frame["correct"].tolist() == [1, 0, 1, pd.NA]
    assert frame["question_id"].tolist() == ["q1", "q2", "q1", "q2"]


def test_long_table_with_pred_and_answer_and_integer_ids(tmp_path):
    path = tmp_path / "preds.parquet"
    pd.DataFrame(
        {"model": ["A", "A"], "question_id": ["7", "10"], "pred": ["b", None], "answer": ["B", "C"]}
    ).to_parquet(path)
    frame = io.read_long_table(path)
    assert frame["question_id"].tolist() == [7, 10]
    assert frame["correct"].tolist() == [1, pd.NA]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model,question_id\nA,1\n", r"missing column\(s\): correct \(or pred and answer\)"),
        ("question_id,correct\n1,1\n", r"missing column\(s\): model"),
        (
            "model,question_id,correct\nA,1,yes\n",
            r"preds\.csv, record 1: correct must be 0/1 or true/false, got 'yes'",
        ),
        (
            "model,question_id,correct\nA,1,1\nA,2,2\n",
            r"record 2: correct must be 0/1 or true/false, got 2$",
        ),
        ("model,question_id,correct\nA,1,1\nA,,0\n", r"record 2: empty question_id"),
        (
            "model,question_id,correct\nA,1,1\nA,1,0\n",
            r"record 2: question_id 1 occurs 2 times for model 'A'",
        ),
    ],
)
def test_bad_long_tables(tmp_path, text, message):
    path = tmp_path / "preds.csv"
    path.write_text(text)
    with pytest.raises(io.InputError, match=message):
        io.read_long_table(path)


def test_ids_with_leading_zeros_stay_strings(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("model,question_id,correct\nA,007,1\nA,7,0\nA,10,1\n")
    assert io.read_long_table(path)["question_id"].tolist() == ["007", "7", "10"]


def test_unsupported_and_missing_files(tmp_path):
    with pytest.raises(io.InputError, match="file does not exist"):
        io.read_predictions(tmp_path / "nope.csv")
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(io.InputError, match="unsupported file type '.txt'"):
        io.read_predictions(tmp_path / "x.txt")


# --- the item table ----------------------------------------------------------------------------


def raw_pair(tmp_path):
    a = io.read_mmlu_pro(
        write_json(
            tmp_path / "model_outputs_A_5shots.json",
            [record(1), record(2, pred=None), record(3, category="law", pred="C")],
        )
    )
    b = io.read_mmlu_pro(
        write_json(
            tmp_path / "model_outputs_B_5shots.json",
            [record(1, pred=None), record(2), record(3, category="law")],
        )
    )
    return [a, b]


def test_item_table_columns_and_policy_wrong(tmp_path):
    items = io.build_item_table(raw_pair(tmp_path), "wrong", 0)
    assert items.columns.tolist() == io.ITEM_COLUMNS
    assert items["correct"].tolist() == [1, 0, 0, 0, 1, 1]
    assert items["pred"].isna().tolist() == [False, True, False, True, False, False]


def test_item_table_policy_exclude_drops_and_reports(tmp_path):
    raw = raw_pair(tmp_path)
    items = io.build_item_table(raw, "exclude", 0)
    assert len(items) == 4 and items["pred"].notna().all()
    counts = io.missing_prediction_counts(raw)
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
        }
    )
    first = io.apply_missing_policy(frame, "random_guess", 7)
    again = io.apply_missing_policy(frame.sample(frac=1, random_state=3), "random_guess", 7)
    assert first["correct"].tolist() == again["correct"].tolist()
    four = first.loc[first["n_options"] == 4, "correct"].mean()
    ten = first.loc[first["n_options"] == 10, "correct"].mean()
    # Binomial standard errors are 0.0031 and 0.0021; allow 4 of them.
    assert abs(four - 0.25) < 4 * np.sqrt(0.25 * 0.75 / (n / 2))
    assert abs(ten - 0.10) < 4 * np.sqrt(0.10 * 0.90 / (n / 2))
    assert not first["correct"].equals(io.apply_missing_policy(frame, "random_guess", 8)["correct"])


def test_exclude_refuses_to_drop_a_whole_model(tmp_path):
    a = io.read_mmlu_pro(
        write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2)])
    )
    b = io.read_mmlu_pro(
        write_json(
            tmp_path / "model_outputs_B_5shots.json", [record(1, pred=None), record(2, pred=None)]
        )
    )
    with pytest.raises(
        ConfigError,
        match=r"exclude leaves no scored question for model\(s\) B \(model_outputs_B_5shots\.json\)",
    ):
        io.build_item_table([a, b], "exclude", 0)


def test_unknown_policy(tmp_path):
    with pytest.raises(ValueError, match="missing_prediction must be one of"):
        io.build_item_table(raw_pair(tmp_path), "drop", 0)


def test_category_conflict_between_models_is_fatal(tmp_path):
    a = io.read_mmlu_pro(
        write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2)])
    )
    b = io.read_mmlu_pro(
        write_json(tmp_path / "model_outputs_B_5shots.json", [record(1), record(2, category="law")])
    )
    with pytest.raises(
        io.InputError,
        match=r"model_outputs_B_5shots\.json, record 1: question 2 has category 'law' for model 'B' but 'math' for model 'A'",
    ):
        io.build_item_table([a, b])


def test_same_model_from_two_files_is_fatal(tmp_path):
    a = io.read_mmlu_pro(write_json(tmp_path / "one.json", [record(1)]), model="A")
    b = io.read_mmlu_pro(write_json(tmp_path / "two.json", [record(2)]), model="A")
    with pytest.raises(io.InputError, match=r"two\.json: model 'A' also comes from one\.json"):
        io.build_item_table([a, b])


def test_long_table_takes_categories_from_other_sources(tmp_path):
    a = io.read_mmlu_pro(
        write_json(tmp_path / "model_outputs_A_5shots.json", [record(1), record(2, category="law")])
    )
    path = tmp_path / "mine.csv"
    path.write_text("model,question_id,correct\nMine,1,1\nMine,2,0\n")
    items = io.build_item_table([a, io.read_long_table(path)])
    assert items.loc[items["model"] == "Mine", "category"].tolist() == ["math", "law"]


def test_wide_scores_orders_rows_by_category_and_marks_gaps(tmp_path):
    items = io.build_item_table(raw_pair(tmp_path), "exclude", 0)
    wide = io.wide_scores(items, models=["B", "A"])
    assert wide.models == ["B", "A"]
    assert wide.question_ids.tolist() == [3, 1, 2]
    assert wide.categories.tolist() == ["law", "math", "math"]
    assert not wide.complete
    np.testing.assert_array_equal(wide.scores, [[1, 0], [np.nan, 1], [1, np.nan]])
    assert wide.category_codes.tolist() == [0, 1, 1]


def test_write_columns_reads_back_as_the_dataframe(tmp_path):
    columns = {
        "rule": np.array(["higher_score_wins", 'a, quoted "name"']),
        "questions": [200, 5000],
        "share": np.array([0.1 + 0.2, 1e-300]),  # shortest round-trip form keeps every bit
        "missing": [np.nan, 0.5],
        "flag": np.array([True, False]),
        "small": np.array([1, 0], dtype=np.int8),
    }
    path = tmp_path / "table.csv"
    io.write_columns(columns, path)
    pd.testing.assert_frame_equal(pd.read_csv(path), pd.DataFrame(columns), check_dtype=False)
    assert pd.read_csv(path)["share"].iloc[0] == 0.1 + 0.2
    # pandas writes the same table to the same bytes.
    pandas_path = tmp_path / "pandas.csv"
    pd.DataFrame(columns).to_csv(pandas_path, index=False)
    assert path.read_bytes() == pandas_path.read_bytes()


def test_write_columns_refuses_ragged_columns(tmp_path):
    with pytest.raises(ValueError, match="equal length"):
        io.write_columns({"a": [1, 2], "b": [1]}, tmp_path / "x.csv")
    with pytest.raises(ValueError, match="1-D"):
        io.write_columns({"a": np.zeros((2, 2))}, tmp_path / "x.csv")
