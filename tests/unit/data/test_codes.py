"""Label codes: the same answers as pandas' sorted factorisation, from the distinct labels."""

import numpy as np
import pandas as pd
import pytest

from evalbars.data.codes import as_category, dense_integer_codes, factorize_sorted


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
