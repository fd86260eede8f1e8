"""Allocation arithmetic and the seeded stratified subsample (evalbars.data.sampling)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.data import sampling
from evalbars.errors import ConfigError

from ...helpers import exact_hamilton


def test_largest_remainder_hand_example():
    # Quotas 4.5, 2.7, 1.8 (n = 9 of 20): floors 4, 2, 1 leave 2 seats for remainders .8 and .7.
    table = sampling.allocate_proportional(pd.Series({"a": 10, "b": 6, "c": 4}), 9)
    assert table["quota"].tolist() == pytest.approx([4.5, 2.7, 1.8])
    assert table["allocated"].tolist() == [4, 3, 2]


def test_every_stratum_gets_at_least_one():
    table = sampling.allocate_proportional(pd.Series({"big": 1000, "tiny": 1, "small": 2}), 3)
    assert table.loc["tiny", "allocated"] == 1 and table.loc["small", "allocated"] == 1
    assert table["allocated"].sum() == 3


def test_ties_in_remainders_go_to_the_first_name():
    table = sampling.allocate_proportional(pd.Series({"b": 2, "a": 2, "c": 2}), 4)
    assert table.index.tolist() == ["a", "b", "c"]
    assert table["allocated"].tolist() == [2, 1, 1]


@pytest.mark.parametrize("n", [0, 2, 101])
def test_impossible_sizes(n):
    with pytest.raises(ConfigError, match="subsample.n = .* cannot draw"):
        sampling.allocate_proportional(pd.Series({"a": 50, "b": 30, "c": 20}), n)


def test_matches_exact_arithmetic_on_random_sizes():
    rng = np.random.default_rng(1)
    for _ in range(50):
        sizes = {
            f"c{i:02d}": int(s) for i, s in enumerate(rng.integers(20, 2000, rng.integers(2, 20)))
        }
        n = int(rng.integers(len(sizes) * 5, sum(sizes.values())))
        table = sampling.allocate_proportional(pd.Series(sizes), n)
        assert table["allocated"].to_dict() == exact_hamilton(sizes, n)


def toy_items(n_questions=300, models=("A", "B", "C"), seed=0):
    rng = np.random.default_rng(seed)
    categories = np.array(["x", "y", "z"])[rng.integers(0, 3, n_questions)]
    rows = [
        {
            "model": m,
            "question_id": q,
            "category": categories[q],
            "correct": int(rng.random() < 0.5),
        }
        for m in models
        for q in range(n_questions)
    ]
    return pd.DataFrame(rows)


def test_subsample_is_deterministic_and_order_free():
    items = toy_items()
    first = sampling.stratified_subsample(items, 60, seed=5)
    shuffled = sampling.stratified_subsample(items.sample(frac=1, random_state=9), 60, seed=5)
    pd.testing.assert_frame_equal(first.questions, shuffled.questions)
    other = sampling.stratified_subsample(items, 60, seed=6)
    assert not first.questions["question_id"].equals(other.questions["question_id"])


def test_subsample_counts_and_shapes():
    items = toy_items()
    drawn = sampling.stratified_subsample(items, 60, seed=5)
    counts = drawn.questions.groupby("category").size()
    assert counts.to_dict() == drawn.allocation.set_index("category")["allocated"].to_dict()
    assert drawn.questions["question_id"].is_monotonic_increasing
    assert len(drawn.items) == 60 * 3
    assert drawn.n_dropped == 0


def test_only_questions_every_model_answered_are_eligible():
    items = toy_items()
    items = items[~((items["model"] == "B") & (items["question_id"] < 10))]
    eligible, dropped = sampling.eligible_questions(items)
    assert dropped == 10 and len(eligible) == 290
    drawn = sampling.stratified_subsample(items, "all", seed=1)
    assert len(drawn.questions) == 290 and drawn.n_dropped == 10
    assert set(drawn.questions["question_id"]).isdisjoint(range(10))


@pytest.mark.parametrize("text_ids", [False, True])
def test_every_question_is_eligible_with_question_set_all(text_ids):
    items = toy_items()
    items = items[~((items["model"] == "B") & (items["question_id"] < 10))]
    if text_ids:
        items = items.assign(question_id="q" + items["question_id"].astype(str))
    eligible, dropped = sampling.eligible_questions(items, "all")
    expected = (
        items[["question_id", "category"]]
        .drop_duplicates("question_id")
        .sort_values(["category", "question_id"], kind="stable")
        .reset_index(drop=True)
    )
    assert dropped == 0
    pd.testing.assert_frame_equal(eligible, expected)


def test_each_question_is_equally_likely_within_its_category():
    # Over many seeds every question of a category is drawn about n_c / N_c of the time.
    items = toy_items(n_questions=60, models=("A",))
    hits = (
        pd.concat([sampling.stratified_subsample(items, 12, seed=s).questions for s in range(400)])[
            "question_id"
        ]
        .value_counts()
        .reindex(range(60), fill_value=0)
    )
    sizes = items.groupby("category").size()
    alloc = sampling.allocate_proportional(sizes, 12)["allocated"]
    expected = items.set_index("question_id")["category"].map(alloc / sizes) * 400
    z = (hits - expected) / np.sqrt(expected * (1 - expected / 400))
    assert np.abs(z).max() < 4.5


def test_every_shape_of_data_passes_the_design_check_and_is_named():
    items = toy_items(n_questions=30)
    sampling.check_design(items, "all")
    assert sampling.design_notes(items) == []
    # One model: its accuracy is reported, and one line says there is nothing to compare.
    one = items[items["model"] == "A"]
    sampling.check_design(one, "all")
    assert sampling.design_notes(one) == [
        "one model (A): its accuracy and intervals are reported; there is nothing to compare "
        "it with"
    ]
    # One category, and none at all: the category level is dropped, in one line.
    sampling.check_design(items.assign(category="x"), "all")
    assert sampling.design_notes(items.assign(category="x")) == [
        "the questions have one category (x): the category level is dropped (the mixed models "
        "are question-only, clustered SEs do not apply, and there are no per-category tables)"
    ]
    assert sampling.design_notes(items.assign(category="uncategorised"))[0].startswith(
        "the questions have no categories: the category level is dropped"
    )


def test_the_design_is_judged_on_the_shared_questions():
    items = toy_items(n_questions=30)
    # Model A keeps only the questions of the first category: the shared set has one category.
    first = items["category"].iloc[0]
    narrowed = items[(items["model"] != "A") | (items["category"] == first)]
    sampling.check_design(narrowed, "all")
    assert sampling.design_notes(narrowed)[0].startswith(
        f"the questions have one category ({first})"
    )
    assert sampling.design_notes(narrowed, "all") == []


# --- No question answered by every model (question_set: all) --------------------------------------


def unshared_items() -> pd.DataFrame:
    """A answers questions 0-39, B 20-59, C 0-19 and 40-59: every pair shares 20 questions and
    no question is answered by all three."""
    answered = {"A": range(0, 40), "B": range(20, 60), "C": [*range(0, 20), *range(40, 60)]}
    return pd.DataFrame(
        [
            {"model": m, "question_id": q, "category": "xy"[q % 2], "correct": q % 3 == 0}
            for m, questions in answered.items()
            for q in questions
        ]
    )


NO_SHARED = (
    "no question is answered by every model (3 models, 60 questions): each pair is compared on "
    "the questions both answered (20 per pair), and the readings of every model at once (the "
    "omnibus tests, the paired ranks) are left out"
)


def test_no_question_shared_by_every_model_is_one_note_not_an_index_error():
    items = unshared_items()
    # Before: design_notes (the report's first screen calls it with the default question set)
    # stopped with IndexError: list index out of range.
    assert sampling.design_notes(items) == [NO_SHARED]
    assert sampling.design_notes(items, "all") == [NO_SHARED]
    sampling.check_design(items, "all", "all")
    with pytest.raises(ConfigError, match="no question was answered by every model"):
        sampling.check_design(items, "all", "shared")
    # The subsample of question_set: all draws from every question.
    drawn = sampling.stratified_subsample(items, 10, seed=3, question_set="all")
    assert len(drawn.questions) == 10 and drawn.n_dropped == 0


def test_pairs_that_share_no_question_are_named_and_the_category_note_still_applies():
    items = unshared_items()
    apart = items[~((items["model"] == "C") & (items["question_id"] < 40))]  # C: 40-59 only
    notes = sampling.design_notes(apart.assign(category="x"), "all")
    assert notes == [
        "no question is answered by every model (3 models, 60 questions): each pair is compared "
        "on the questions both answered (0 to 20 per pair), and the readings of every model at "
        "once (the omnibus tests, the paired ranks) are left out; 1 of the 3 pairs shares no "
        "question ('A' and 'C'), so it has only unpaired readings",
        "the questions have one category (x): the category level is dropped (the mixed models "
        "are question-only, clustered SEs do not apply, and there are no per-category tables)",
    ]
    # No two models share a question: no pair has a paired reading.
    disjoint = pd.DataFrame({"model": ["A", "A", "B", "B"], "question_id": [1, 2, 3, 4]})
    assert sampling.no_shared_question(disjoint) == [
        "no two models share a question (2 models, 4 questions): each model is read on its own "
        "questions, and the readings that pair models (the paired comparisons, the omnibus "
        "tests, the paired ranks) are left out"
    ]
    # One model, or a question every model answered: no such note.
    assert sampling.no_shared_question(items[items["model"] == "A"]) == []
    assert sampling.no_shared_question(toy_items(n_questions=20)) == []
