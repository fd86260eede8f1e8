"""Parsing and validation of prediction files (evalbars.data.readers)."""

from __future__ import annotations

import json
import logging
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from evalbars.data import readers
from evalbars.data.fetch import archive_name, model_from_archive
from evalbars.data.items import build_item_table
from evalbars.data.readers.long_tables import hive_partitions
from evalbars.errors import InputError

from ...helpers import record, write_json


def write_zip(path, document, member="model_outputs_M_5shots.json"):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, json.dumps(document))
    return path


# --- MMLU-Pro JSON ---------------------------------------------------------------------------


def test_reads_plain_and_zipped_json_identically(tmp_path):
    doc = [record(1), record(2, pred="B"), record(3, pred=None, category="law")]
    plain = readers.read_mmlu_pro(write_json(tmp_path / "model_outputs_M_5shots.json", doc))
    zipped = readers.read_mmlu_pro(write_zip(tmp_path / "model_outputs_M_5shots.zip", doc))
    cols = ["model", "question_id", "category", "answer", "pred", "correct", "n_options"]
    pd.testing.assert_frame_equal(plain[cols], zipped[cols])
    assert plain["model"].unique().tolist() == ["M"]
    assert plain["correct"].tolist() == [1, 0, pd.NA]
    assert plain["n_options"].tolist() == [4, 4, 4]


def test_model_name_from_archive_name_or_file_stem(tmp_path):
    assert model_from_archive("data/raw/model_outputs_Yi-6b-Chat_5shots.zip") == "Yi-6b-Chat"
    assert model_from_archive("my_model.json") is None
    assert archive_name("Yi-6B") == "model_outputs_Yi-6B_5shots.zip"
    # A JSON file with another name is read as the model named by its stem.
    assert readers.read_mmlu_pro(write_json(tmp_path / "my_model.json", [record(1)]))[
        "model"
    ].tolist() == ["my_model"]


def test_non_record_entries_are_skipped_with_a_warning(tmp_path, caplog):
    doc = [record(1), "total", record(2), 17]
    with caplog.at_level(logging.WARNING):
        frame = readers.read_mmlu_pro(write_json(tmp_path / "m.json", doc))
    assert frame["question_id"].tolist() == [1, 2]
    assert "skipped 2 entries that are not records" in caplog.text
    # Entries are numbered from 1, as records are everywhere.
    assert "2 ('total'), 4 (17)" in caplog.text and "m.json" in caplog.text


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"question_id": 1}, r"m\.json: expected a JSON list of records, got a JSON dict"),
        (
            [record(1), {"category": "x", "answer": "A", "pred": "A"}],
            r"m\.json, record 2: missing field 'question_id'",
        ),
        ([{"question_id": 1, "category": "x", "answer": "A"}], r"record 1: missing field 'pred'"),
        (
            [record(1), record(2), record(1, pred="C")],
            r"record 3: question_id 1 occurs 2 times for model 'm' \(records \[1, 3\]\)",
        ),
        ([record(1, category="")], r"record 1: category must be a non-empty string"),
        ([record(None)], r"record 1: question_id must be a non-empty integer or string, got None"),
        ([record(1, answer=3)], r"record 1: answer must be a non-empty string, got 3"),
        ([record(1, pred=["A"])], r"record 1: pred must be a string or null"),
    ],
)
def test_bad_records_are_fatal_with_file_record_and_problem(tmp_path, document, message):
    with pytest.raises(InputError, match=message):
        readers.read_mmlu_pro(write_json(tmp_path / "m.json", document))


def test_empty_inputs_are_fatal(tmp_path):
    with pytest.raises(InputError, match=r"empty\.json: the JSON list holds no records"):
        readers.read_mmlu_pro(write_json(tmp_path / "empty.json", []))
    (tmp_path / "header.csv").write_text("model,question_id,correct\n")
    with pytest.raises(InputError, match=r"header\.csv: the table has no rows"):
        readers.read_long_table(tmp_path / "header.csv")


def test_invalid_json_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("[{")
    with pytest.raises(InputError, match=r"broken\.json: not valid JSON"):
        readers.read_mmlu_pro(path)


@pytest.mark.parametrize("member", ["/etc/evil.json", "../evil.json", "a/../../evil.json"])
def test_archive_members_with_unsafe_paths_are_refused(tmp_path, member):
    path = write_zip(tmp_path / "evil.zip", [record(1)], member=member)
    with pytest.raises(InputError, match="unsafe path"):
        readers.read_mmlu_pro(path)


def test_archive_members_above_the_size_limit_are_refused(tmp_path, monkeypatch):
    path = write_zip(tmp_path / "bomb.zip", [record(i) for i in range(200)])
    monkeypatch.setattr(readers.archives, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(InputError, match="would unpack to .* bytes, more than the 1000 allowed"):
        readers.read_mmlu_pro(path)


def test_archive_needs_exactly_one_json_member(tmp_path):
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.json", "[]")
        zf.writestr("b.json", "[]")
    with pytest.raises(InputError, match="expected exactly one .json member"):
        readers.read_mmlu_pro(path)


# --- long tables -----------------------------------------------------------------------------


def test_long_csv_with_correct_column(tmp_path):
    path = tmp_path / "preds.csv"
    path.write_text(
        "model,question_id,correct,category\nA,q1,1,x\nA,q2,0,x\nB,q1,true,x\nB,q2,,x\n"
    )
    frame = readers.read_long_table(path)
    assert frame["correct"].tolist() == [1, 0, 1, pd.NA]
    assert frame["question_id"].tolist() == ["q1", "q2", "q1", "q2"]


def test_long_table_with_pred_and_answer_and_integer_ids(tmp_path):
    path = tmp_path / "preds.parquet"
    pd.DataFrame(
        {"model": ["A", "A"], "question_id": ["7", "10"], "pred": ["b", None], "answer": ["B", "C"]}
    ).to_parquet(path)
    frame = readers.read_long_table(path)
    assert frame["question_id"].tolist() == [7, 10]
    assert frame["correct"].tolist() == [1, pd.NA]


def test_long_parquet_with_typed_columns_reads_as_its_text_form(tmp_path):
    """Booleans, integers and categoricals take the fast paths and give what text gives."""
    typed = pd.DataFrame(
        {
            "model": pd.Categorical(["B", "A", "B"]),
            "question_id": np.array([3, 1, 1], dtype=np.int32),
            "correct": pd.array([True, None, False], dtype="boolean"),
            "category": pd.Categorical(["x", "y", "y"]),
        }
    )
    typed.to_parquet(tmp_path / "typed.parquet")
    (tmp_path / "text.csv").write_text(
        "model,question_id,correct,category\nB,3,true,x\nA,1,,y\nB,1,false,y\n"
    )
    fast = readers.read_long_table(tmp_path / "typed.parquet")
    slow = readers.read_long_table(tmp_path / "text.csv")
    columns = ["model", "question_id", "correct", "category"]
    pd.testing.assert_frame_equal(fast[columns], slow[columns])
    assert fast["question_id"].dtype == np.int64
    assert list(fast["model"].cat.categories) == ["A", "B"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model,question_id\nA,1\n", r"missing column\(s\): correct \(or pred and answer\)"),
        ("question_id,correct\n1,1\n", r"missing column\(s\): model"),
        (
            "model,question_id,correct\nA,1,yes\n",
            r"preds\.csv, record 1: correct must be a score in \[0, 1\] \(0/1, true/false or a "
            r"fraction\), got 'yes'",
        ),
        (
            "model,question_id,correct\nA,1,1\nA,2,2\n",
            r"record 2: correct must be a score in \[0, 1\] \(0/1, true/false or a fraction\), got 2$",
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
    with pytest.raises(InputError, match=message):
        readers.read_long_table(path)


# --- hive-partitioned Parquet folders ------------------------------------------------------------


def flat_predictions() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        [
            {
                "model": m,
                "question_id": q,
                "category": "xy"[q % 2],
                "correct": int(rng.random() < p),
            }
            for m, p in (("alpha", 0.7), ("beta", 0.5), ("openai/gpt-4o", 0.6))
            for q in range(30)
        ]
    )


def write_hive(folder, frame: pd.DataFrame, keys=("model",)) -> None:
    """``frame`` as pyarrow writes a hive-partitioned dataset: ``model=alpha/part-0.parquet``
    (values percent-encoded: ``model=openai%2Fgpt-4o``), 20 rows a file."""
    ds.write_dataset(
        pa.Table.from_pandas(frame, preserve_index=False),
        folder,
        format="parquet",
        partitioning=list(keys),
        partitioning_flavor="hive",
        max_rows_per_file=20,
        max_rows_per_group=20,
    )


def test_a_hive_partitioned_parquet_folder_reads_its_keys_as_columns(tmp_path):
    flat = flat_predictions()
    write_hive(tmp_path / "preds", flat)
    alpha = tmp_path / "preds" / "model=alpha"
    assert sorted(p.name for p in alpha.iterdir()) == ["part-0.parquet", "part-1.parquet"]
    # Before: "preds/model=alpha/part-0.parquet: missing column(s): model".
    (frame,) = readers.read_source(tmp_path / "preds")  # one dataset, one frame
    items = build_item_table([frame])
    columns = ["model", "question_id", "category", "correct"]
    got = items[columns].astype({"model": str, "category": str}).sort_values(columns[:2])
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True),
        flat.astype({"correct": np.int8}).sort_values(columns[:2]).reset_index(drop=True),
    )
    assert set(items["source_file"]) == {
        f"model={m}/part-{i}.parquet" for m in ("alpha", "beta", "openai%2Fgpt-4o") for i in (0, 1)
    }
    # One file of it, given alone, takes its model from its folder too.
    (part,) = readers.read_source(alpha / "part-1.parquet")
    assert set(part["model"]) == {"alpha"} and part["record"].tolist() == list(range(1, 11))


def test_hive_keys_below_each_other_and_a_null_partition(tmp_path):
    flat = flat_predictions()
    write_hive(tmp_path / "preds", flat, keys=("model", "category"))
    assert (tmp_path / "preds" / "model=beta" / "category=y").is_dir()
    items = build_item_table(readers.read_source(tmp_path / "preds"))
    assert items.groupby("model", observed=True)["correct"].mean().to_dict() == pytest.approx(
        flat.groupby("model")["correct"].mean().to_dict()
    )
    assert hive_partitions("p/model=__HIVE_DEFAULT_PARTITION__/a.parquet") == [("model", None)]
    null = tmp_path / "nulls" / "model=__HIVE_DEFAULT_PARTITION__" / "part-0.parquet"
    null.parent.mkdir(parents=True)
    flat[["question_id", "correct"]].to_parquet(null)
    with pytest.raises(InputError) as raised:
        readers.read_source(null.parents[1])
    assert str(raised.value) == f"{null}, record 1: empty model"


def test_inconsistent_hive_partitions_are_refused_in_one_line(tmp_path):
    scores = pd.DataFrame({"question_id": [1, 2], "correct": [1, 0]})
    mixed = tmp_path / "mixed"
    for folder in ("model=alpha", "category=x"):
        (mixed / folder).mkdir(parents=True)
        scores.assign(model="beta").to_parquet(mixed / folder / "part-0.parquet")
    with pytest.raises(InputError) as raised:
        readers.read_source(mixed)
    assert str(raised.value) == (
        f"{mixed / 'model=alpha' / 'part-0.parquet'}: is partitioned by model but "
        "category=x/part-0.parquet by category: the partitions are inconsistent (every file of a "
        "hive-partitioned folder sits under the same keys, in the same order)"
    )
    twice = tmp_path / "twice" / "model=m" / "model=n" / "part-0.parquet"
    twice.parent.mkdir(parents=True)
    scores.to_parquet(twice)
    with pytest.raises(InputError) as raised:
        readers.read_source(tmp_path / "twice")
    assert str(raised.value) == (
        f"{twice}: its folders name the partition key 'model' twice (model=m/model=n); a "
        "hive-partitioned folder names each key once"
    )
    clash = tmp_path / "clash" / "model=alpha" / "part-0.parquet"
    clash.parent.mkdir(parents=True)
    scores.assign(model=["alpha", "beta"]).to_parquet(clash)
    with pytest.raises(InputError) as raised:
        readers.read_source(clash.parents[1])
    assert str(raised.value) == (
        f"{clash}, record 2: column 'model' holds 'beta' but the folder model=alpha says "
        "'alpha': the partitions are inconsistent"
    )


def test_ids_with_leading_zeros_stay_strings(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("model,question_id,correct\nA,007,1\nA,7,0\nA,10,1\n")
    assert readers.read_long_table(path)["question_id"].tolist() == ["007", "7", "10"]


def test_unsupported_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="file does not exist"):
        readers.read_predictions(tmp_path / "nope.csv")
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(InputError, match="x.txt: not a recognised prediction file"):
        readers.read_predictions(tmp_path / "x.txt")


def test_archives_are_recognised_by_content_and_damage_is_named(tmp_path):
    whole = write_zip(tmp_path / "model_outputs_M_5shots.zip", [record(q) for q in range(50)])
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(whole.read_bytes()[:200])
    with pytest.raises(InputError, match=r"truncated\.zip: the zip archive is damaged"):
        readers.read_mmlu_pro(truncated)
    # A zip whose name says JSON is still read as the archive it is.
    disguised = tmp_path / "disguised.json"
    disguised.write_bytes(whole.read_bytes())
    assert len(readers.read_mmlu_pro(disguised, model="M")) == 50
    # A file named .zip that holds something else is not a zip archive.
    fake = write_json(tmp_path / "fake.zip", [record(1)])
    with pytest.raises(InputError, match=r"fake\.zip: named \.zip but is not a zip archive"):
        readers.read_mmlu_pro(fake, model="M")
