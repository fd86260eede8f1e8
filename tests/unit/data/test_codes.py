"""Label codes: the same answers as pandas' sorted factorisation, from the distinct labels."""

import numpy as np
import pandas as pd
import pytest

from evalbars.data.codes import (
    as_category,
    code_counts,
    dense_integer_codes,
    factorize_sorted,
    first_values,
    index_codes,
    mark_cells,
)


@pytest.mark.parametrize(
    "values",
    [
        pd.Series([3, 1, 2, 3, 1], dtype="int64"),
        pd.Series(["b", "a", None, "c", "a"], dtype="str"),
        pd.Series(["b", "a", None, "c", "a"], dtype=object),
        pd.Series(pd.Categorical(["b", "a", "b"], categories=["a", "b", "z"])),
        pd.Series(pd.Categorical(["b", None, "a"], categories=["b", "a"])),
    ],
)
def test_factorize_sorted_matches_pandas(values):
    codes, labels = factorize_sorted(values)
    expected_codes, expected_labels = pd.factorize(values, sort=True)
    np.testing.assert_array_equal(codes, expected_codes)
    assert list(labels) == list(expected_labels)


def test_factorize_sorted_codes_nulls_last():
    codes, labels = factorize_sorted(pd.Series(["b", None, "a"]), nulls="code")
    assert codes.tolist() == [1, 2, 0]
    assert list(labels) == ["a", "b"]


def test_as_category_sorts_string_categories_and_keeps_nulls():
    values = pd.Series(["m10", "m2", None, "m10", 7])
    category = as_category(values)
    assert list(category.categories) == ["7", "m10", "m2"]
    assert category.categories.dtype == "str"
    assert pd.Series(category).astype(object).where(pd.notna(category), None).tolist() == [
        "m10",
        "m2",
        None,
        "m10",
        "7",
    ]
    # Unsorted categories are recoded, the values unchanged.
    unsorted = pd.Series(pd.Categorical(["b", "a", "b"], categories=["b", "a"]))
    recoded = as_category(unsorted)
    assert list(recoded.categories) == ["a", "b"]
    assert list(recoded) == ["b", "a", "b"]


@pytest.mark.parametrize(
    "ids",
    [
        [5, 3, 5, -2, 9, 3],  # narrow range: direct addressing
        [10**12, 7, 7, -3],  # wide range: hashing
        np.arange(20, dtype=np.int16)[::-1],  # compact dtype keeps its dtype
    ],
)
def test_integer_codes_are_pandas_sorted_factorisation(ids):
    expected_codes, expected_labels = pd.factorize(pd.Series(ids), sort=True)
    codes, labels = factorize_sorted(pd.Series(ids))
    assert codes.tolist() == expected_codes.tolist()
    assert labels.tolist() == expected_labels.tolist()
    assert labels.dtype == expected_labels.dtype


def test_direct_addressing_only_where_the_range_is_narrow():
    assert dense_integer_codes(np.array([10**12, 1])) is None
    assert dense_integer_codes(np.array(["a"])) is None
    codes, labels = dense_integer_codes(np.array([4, 2, 4]))
    assert codes.tolist() == [1, 0, 1] and labels.tolist() == [2, 4]


@pytest.mark.parametrize(
    "values, direct",
    [
        (pd.Series([4, 0, 1, 4, 3, 0]), True),  # fills most of 0..4: own codes, slot 2 empty
        (pd.Series(np.arange(169, 69, -1), dtype=np.int32), True),  # 70..169 (as MMLU-Pro's)
        (pd.Series([70, 72, 71, 72]), False),  # a few numbers far from 0: coded
        (pd.Series([10**6, 3, 3]), False),  # sparse: coded
        (pd.Series(["b", None, "a", "b"], dtype="str"), False),  # text, a null: coded, null last
    ],
)
def test_index_codes_give_each_row_a_slot_labelled_with_its_value(values, direct):
    codes, labels = index_codes(values)
    assert len(codes) == len(values) and int(codes.max()) < len(labels)
    # Each row's slot is labelled with its value; slots order like the values.
    assert pd.Series(labels.take(codes)).equals(pd.Series(values.to_numpy(), dtype=labels.dtype))
    held = np.unique(codes)
    assert pd.Index(labels[held]).dropna().is_monotonic_increasing
    assert np.shares_memory(codes, values.to_numpy()) == direct  # no code made per row


@pytest.mark.parametrize("categorical", [True, False])
def test_first_values_are_each_codes_first_rows_value_and_null_where_none(categorical):
    values = pd.Series(["x", "y", "z", "w", "y"])
    if categorical:
        values = values.astype("category")
    codes = np.array([2, 0, 2, 0, 3])
    first = first_values(values, codes, 4)
    assert pd.isna(first[1])
    assert [first[0], first[2], first[3]] == ["y", "x", "y"]


@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 6)])
def test_mark_cells_marks_what_numpy_assignment_marks(shape, monkeypatch):
    monkeypatch.setattr("evalbars.data.codes.MARK_BLOCK", 8)  # several blocks
    rng = np.random.default_rng(1)
    codes = [rng.integers(0, size, 50).astype(np.int16) for size in shape]
    expected = np.zeros(shape, dtype=bool)
    expected[tuple(codes)] = True
    table = np.zeros(shape, dtype=bool)
    mark_cells(table, codes)
    np.testing.assert_array_equal(table, expected)
    with pytest.raises(ValueError, match="copy"):  # a table that is not one block of memory
        mark_cells(np.zeros((7, 10), dtype=bool)[:, :5], codes[:2])


def test_code_counts_count_across_blocks(monkeypatch):
    monkeypatch.setattr("evalbars.data.codes.COUNT_BLOCK", 4)
    codes = np.random.default_rng(2).integers(0, 5, 37).astype(np.int16)
    assert code_counts(codes, 6).tolist() == np.bincount(codes, minlength=6).tolist()
