"""The question x model matrix: the pivot of the item table and its stored form."""

import numpy as np
import pandas as pd
import pytest

from evalbars.data.scores import (
    WideScores,
    accuracy_order,
    read_wide_scores,
    repeated_text,
    stacked_text,
    text_column,
    wide_scores,
    write_wide_scores,
)
from evalbars.render.tables import write_parquet


def long_table(question_ids, categories, rows):
    """Item rows ``(model, question index, score[, epoch])`` on the given questions."""
    frame = pd.DataFrame(rows, columns=["model", "q", "correct", "epoch"][: len(rows[0])])
    frame["question_id"] = np.asarray(question_ids, dtype=object)[frame.pop("q")]
    frame["category"] = np.asarray(categories)[
        [list(question_ids).index(q) for q in frame["question_id"]]
    ]
    if isinstance(question_ids[0], (int, np.integer)):
        frame["question_id"] = frame["question_id"].astype(np.int64)
    frame["model"] = frame["model"].astype("category")
    frame["category"] = frame["category"].astype("category")
    return frame


def by_hand(frame, models):
    """The cell means, counts and within-cell sums of squares of ``frame`` by groupby."""
    cells = frame.groupby(["question_id", "model"], observed=True)["correct"]
    order = (
        frame[["question_id", "category"]]
        .drop_duplicates("question_id")
        .sort_values(["category", "question_id"], kind="stable")["question_id"]
    )
    mean = cells.mean().unstack()[models].reindex(order)
    count = cells.size().unstack()[models].reindex(order).fillna(0)
    within = cells.apply(lambda s: ((s - s.mean()) ** 2).sum()).unstack()[models].reindex(order)
    return order.to_numpy(), mean.to_numpy(float), count.to_numpy(int), within.fillna(0).to_numpy()


CASES = {
    # 0/1 scores, one sample per cell, a missing cell, integer ids in a narrow range
    "binary with a gap": (
        [12, 10, 11],
        ["math", "law", "math"],
        [("A", 0, 1), ("B", 0, 0), ("A", 1, 0), ("B", 1, 1), ("A", 2, 1)],
    ),
    # ids far apart (hashing path), partial credit
    "partial credit, sparse ids": (
        [10**12, 7, -3],
        ["b", "a", "b"],
        [("A", 0, 0.25), ("B", 0, 1.0), ("A", 1, 0.5), ("B", 1, 0.0), ("A", 2, 1), ("B", 2, 0)],
    ),
    # integer ids from 0 that index the matrix's rows themselves, one number (1) missing
    "ids as their own slots": (
        [3, 0, 2, 4],
        ["b", "a", "a", "b"],
        [("A", 0, 1), ("B", 0, 0), ("A", 1, 0), ("B", 1, 1), ("A", 2, 1), ("B", 3, 1)],
    ),
    # text ids, repeated samples (epochs)
    "epochs, text ids": (
        ["q-2", "q-10", "q-1"],
        ["x", "x", "y"],
        [
            ("A", 0, 1, 1),
            ("A", 0, 0, 2),
            ("A", 0, 1, 3),
            ("B", 0, 1, 1),
            ("A", 1, 0, 1),
            ("B", 1, 1, 1),
            ("B", 1, 1, 2),
            ("A", 2, 1, 1),
            ("B", 2, 0, 1),
        ],
    ),
}


@pytest.mark.parametrize("block", [None, 2])
@pytest.mark.parametrize("case", CASES)
def test_pivot_equals_groupby_means_counts_and_squares(case, block, monkeypatch):
    if block:  # the rows' cells made a few rows at a time
        monkeypatch.setattr("evalbars.data.scores.MARK_BLOCK", block)
    frame = long_table(*CASES[case])
    order, mean, count, within = by_hand(frame, ["B", "A"])
    wide = wide_scores(frame, models=["B", "A"])
    assert wide.question_ids.tolist() == order.tolist()
    np.testing.assert_array_equal(wide.scores, mean)
    np.testing.assert_array_equal(wide.sample_counts, count)
    np.testing.assert_allclose(wide.within_squares, within, atol=1e-15)
    assert wide.has_repeats == (case == "epochs, text ids")


@pytest.mark.parametrize("case", CASES)
def test_stored_matrix_reads_back_equal(case, tmp_path):
    frame = long_table(*CASES[case])
    wide = wide_scores(frame)
    path = tmp_path / "scores.npz"
    write_wide_scores(wide, path)
    back = read_wide_scores(path)
    assert back.models == wide.models
    assert back.question_ids.tolist() == wide.question_ids.tolist()
    assert back.question_ids.dtype == wide.question_ids.dtype
    assert back.categories.tolist() == wide.categories.tolist()
    for attribute in ("scores", "sample_counts", "within_squares"):
        np.testing.assert_array_equal(getattr(back, attribute), getattr(wide, attribute))
    # selecting and ordering columns as the long-table path does
    np.testing.assert_array_equal(
        read_wide_scores(path, models=["B"]).scores, wide_scores(frame, models=["B"]).scores
    )
    with pytest.raises(ValueError, match="not in the item table"):
        read_wide_scores(path, models=["C"])


def test_binary_matrix_is_stored_as_int8(tmp_path):
    scores = np.array([[1.0, 0.0], [np.nan, 1.0]])
    wide = WideScores(scores, ["A", "B"], np.array([1, 2]), np.array(["c", "c"]))
    write_wide_scores(wide, tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as stored:
        assert stored["scores"].dtype == np.int8
        assert stored["scores"].tolist() == [[1, 0], [-1, 1]]
        assert "samples" not in stored


def test_accuracy_order_in_blocks_is_the_unblocked_order(monkeypatch):
    rng = np.random.default_rng(3)
    scores = (rng.random((50, 7)) < np.linspace(0.2, 0.8, 7)).astype(float)
    scores[rng.random(scores.shape) < 0.1] = np.nan
    wide = WideScores(scores, [f"m{k}" for k in range(7)], np.arange(50), np.full(50, "c"))
    whole = accuracy_order(wide)
    monkeypatch.setattr("evalbars.data.scores.BLOCK_CELLS", 20)  # the blocked path
    monkeypatch.setattr("evalbars.data.blocks.BLOCK_CELLS", 20)  # in blocks of 2 questions
    assert accuracy_order(wide) == whole
    means = np.nanmean(scores, axis=0)
    assert whole == [f"m{k}" for k in np.argsort(-means, kind="stable")]


def test_integer_categories_stay_whole_numbers_beside_ids_with_gaps():
    # Ids 0, 2 and 3 are their own slots (1 is empty); the categories are read at held slots only.
    items = pd.DataFrame(
        {"model": "A", "question_id": [3, 0, 2], "category": [2, 1, 1], "correct": [1, 0, 1]}
    )
    wide = wide_scores(items)
    assert wide.question_ids.tolist() == [0, 2, 3]
    assert wide.categories.tolist() == ["1", "1", "2"]


def test_repeated_and_stacked_text_are_the_columns_text_column_makes():
    names = ["org/model-b", "model-a", "ünïcode"]
    codes = np.array([2, 0, 0, 1, 2])
    column = text_column(names, codes)

    stacked = pd.Series(stacked_text(column, 3))
    expected = pd.Series(text_column(names, np.tile(codes, 3)))
    pd.testing.assert_series_equal(stacked, expected)
    assert stacked.dtype == expected.dtype

    sizes = [3, 0, 2]
    repeated = pd.Series(repeated_text(names, sizes))
    expected = pd.Series(text_column(names, np.repeat(np.arange(3), sizes)))
    pd.testing.assert_series_equal(repeated, expected)
    assert repeated.dtype == expected.dtype
    assert len(repeated_text([], [])) == 0


def test_stacked_text_of_a_frame_column_writes_the_same_parquet(tmp_path):
    names = [f"model-{i}" for i in range(30)]
    first, second = np.triu_indices(30, k=1)
    shared = pd.DataFrame(
        {
            "method": repeated_text(["glmm", "gee"], [len(first)] * 2),
            "model_a": stacked_text(text_column(names, first), 2),
            "model_b": stacked_text(text_column(names, second), 2),
        }
    )
    made = pd.DataFrame(
        {
            "method": text_column(["glmm", "gee"], np.repeat([0, 1], len(first))),
            "model_a": text_column(names, np.tile(first, 2)),
            "model_b": text_column(names, np.tile(second, 2)),
        }
    )
    write_parquet(shared, tmp_path / "shared.parquet")
    write_parquet(made, tmp_path / "made.parquet")
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "shared.parquet"), pd.read_parquet(tmp_path / "made.parquet")
    )
    assert (tmp_path / "shared.parquet").read_bytes() == (tmp_path / "made.parquet").read_bytes()
