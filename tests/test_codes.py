"""Label codes: the same answers as pandas' sorted factorisation, from the distinct labels."""

import numpy as np
import pandas as pd
import pytest

from evalbars.codes import as_category, factorize_sorted


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
