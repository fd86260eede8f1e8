"""Question coverage (evalbars.data.question_coverage): the shared set, what left it and why, and the stop rule."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbars.data.items import join_sources, missing_prediction_counts, score_sources
from evalbars.data.question_coverage import (
    check_source_coverage,
    coverage_table,
    data_changes,
    presence,
    question_layout,
)
from evalbars.data.readers import read_long_table
from evalbars.errors import ConfigError


def table(path, rows) -> pd.DataFrame:
    path.write_text("model,question_id,category,correct\n" + "\n".join(rows) + "\n")
    return read_long_table(path)


@pytest.fixture
def sources(tmp_path):
    # A answers 1..10; B answers 1..9 and misses its prediction on 2; both in two categories.
    a = table(tmp_path / "a.csv", [f"A,{q},{'xy'[q % 2]},1" for q in range(1, 11)])
    b = table(
        tmp_path / "b.csv", [f"B,{q},{'xy'[q % 2]},{'' if q == 2 else 0}" for q in range(1, 10)]
    )
    return [a, b]


def test_coverage_table_counts_what_left_the_shared_set(sources):
    combined = join_sources(sources)
    items = score_sources(combined, "exclude")
    coverage = coverage_table(combined, items).set_index("model")
    assert coverage.loc["B", ["in_source", "lacks_in_source", "excluded", "analysed"]].tolist() == [
        9,
        1,
        1,
        8,
    ]
    assert coverage.loc["A", ["lacks_in_source", "excluded", "outside_shared"]].tolist() == [
        0,
        0,
        2,
    ]
    assert (coverage["shared"] == 8).all() and (coverage["questions"] == 10).all()
    lines = data_changes(missing_prediction_counts(sources, "exclude"), coverage.reset_index())
    assert lines == [
        "B: 1 missing predictions (correct empty or NaN (no score)) scored as dropped "
        "(missing_prediction: exclude)",
        "B: its source b.csv lacks 1 of the 10 questions the sources hold",
        "the paired analyses use the 8 questions every model answered; 2 of 10 leave that set "
        "(per model: question_coverage.csv)",
    ]


def test_sources_that_disagree_beyond_the_share_stop_the_run(sources):
    combined = join_sources(sources)
    check_source_coverage(combined, 0.10)  # 1 of 10 questions: at the limit, allowed
    with pytest.raises(ConfigError) as caught:
        check_source_coverage(combined, 0.05)
    assert str(caught.value) == (
        "1 of 10 questions (10.0%) are in some prediction sources but not all (B (b.csv) lacks 1), "
        "so the paired analyses would leave them out; check that question ids are written alike "
        "in every file, or raise `max_unshared_share` (now 0.05) to accept the loss"
    )


@pytest.mark.parametrize("ids", [[0, 2, 5, 4], ["q0", "q2", "q5", "q4"]])
def test_question_layout_is_the_presence_and_first_categories_of_the_rows(ids):
    # Integer ids 0..5 with 1 and 3 missing index the table themselves; their empty slots are
    # left out, as text ids (coded) never have them.
    items = pd.DataFrame(
        {
            "model": pd.Categorical(["b", "a", "b", "a", "b", "a"]),
            "question_id": [ids[0], ids[0], ids[1], ids[2], ids[3], ids[1]],
            "category": pd.Categorical(["x", "x", "y", "y", "x", "y"]),
        }
    )
    layout = question_layout(items)
    expected = (
        items.assign(seen=True)
        .pivot_table(index="question_id", columns="model", values="seen", aggfunc="any")
        .fillna(False)
        .astype(bool)
    )
    assert layout.present.index.tolist() == sorted(ids)
    assert layout.present.to_numpy().tolist() == expected.to_numpy().tolist()
    assert layout.present.equals(presence(items))
    first = items.drop_duplicates("question_id").set_index("question_id")["category"]
    assert list(layout.categories) == first.loc[sorted(ids)].tolist()
