"""lm-eval output as the Open LLM Leaderboard, early lm-eval 0.4 and lmms-eval lay it out.

The variants under tests/data/harness/lm_eval_variants/ are renamed and rewritten copies of the
real lm-eval 0.4.13 output (see the README there). Each must read to the rows of its source, and
each task's mean score must equal the results file's own summary numbers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.items import build_item_table
from evalbars.data.readers import SourceOptions, read_source
from evalbars.errors import InputError

HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness"
VARIANTS = HARNESS / "lm_eval_variants"
#: (variant folder, source folder, runs policy, model)
CASES = {
    "oll_v2": (
        VARIANTS / "oll_v2" / "evalbars__fake-strong-details",
        HARNESS / "lm_eval" / "evalbars__fake-strong",
        "only",
        "evalbars/fake-strong",
    ),
    "json_list": (
        VARIANTS / "json_list",
        HARNESS / "lm_eval" / "evalbars__fake-weak",
        "only",
        "evalbars/fake-weak",
    ),
    "lmms_eval": (
        VARIANTS / "lmms_eval",
        HARNESS / "lm_eval" / "evalbars__fake-mid",
        "newest",
        "evalbars/fake-mid",
    ),
}
SUMMARY_KEYS = {"multiple_choice": "acc,none", "generate_until": "exact_match,strict-match"}


def _rows(frame: pd.DataFrame) -> pd.DataFrame:
    table = frame.assign(task=frame["question_id"].str.rsplit("/", n=1).str[0])
    table["task"] = table["task"].str.removeprefix("leaderboard_")
    table["doc"] = frame["question_id"].str.rsplit("/", n=1).str[1]
    columns = ["model", "task", "doc", "correct", "n_options"]
    return (
        table[columns]
        .astype({"model": str, "correct": float})
        .sort_values(["task", "doc"])
        .reset_index(drop=True)
    )


@pytest.mark.parametrize("name", list(CASES))
def test_variant_reads_to_the_rows_of_its_source(name):
    variant, source, runs, model = CASES[name]
    (ours,) = read_source(variant, SourceOptions(runs=runs))
    (original,) = read_source(source, SourceOptions(runs=runs))
    assert ours["model"].unique().tolist() == [model]
    pd.testing.assert_frame_equal(_rows(ours), _rows(original))
    accuracy = build_item_table([ours])["correct"].mean()
    assert accuracy == build_item_table([original])["correct"].mean()


@pytest.mark.parametrize("name", list(CASES))
def test_each_task_scores_what_the_results_file_says(name):
    variant, _, runs, _ = CASES[name]
    (frame,) = read_source(variant, SourceOptions(runs=runs))
    (results_path,) = [p for p in variant.rglob("*results*.json")]
    results = json.loads(results_path.read_text())
    items = build_item_table([frame], "wrong").assign(
        task=lambda t: t["question_id"].str.rsplit("/", n=1).str[0]
    )
    means = items.groupby("task")["correct"].mean()
    assert sorted(means.index) == sorted(results["configs"])
    for task, mean in means.items():
        key = SUMMARY_KEYS[results["configs"][task]["output_type"]]
        assert mean == pytest.approx(results["results"][task][key], abs=1e-12)
    # 39 documents, as the results file's sample counts say.
    assert len(items) == sum(results["n-samples"][t]["effective"] for t in results["configs"])


def test_leaderboard_tasks_are_categorised_by_the_subtask_after_the_prefix():
    (frame,) = read_source(CASES["oll_v2"][0])
    assert set(frame["category"]) == {"toybench_math", "toybench_history", "toyarith"}
    assert frame["question_id"].str.startswith("leaderboard_").all()


def test_multiple_choice_documents_have_their_own_number_of_options():
    for name, (variant, _, runs, _) in CASES.items():
        (frame,) = read_source(variant, SourceOptions(runs=runs))
        task = frame["question_id"].str.rsplit("/", n=1).str[0].str.removeprefix("leaderboard_")
        # Four loglikelihood requests per document (lmms-eval: four filtered responses).
        assert (frame.loc[task != "toyarith", "n_options"] == 4).all(), name
        # Generation without choices: MMLU-Pro's default.
        assert (frame.loc[task == "toyarith", "n_options"] == 10).all(), name


def test_random_guess_guesses_among_the_four_choices():
    """Multiple-choice answers missing, re-scored as seeded guesses among the 4 choices."""
    (frame,) = read_source(HARNESS / "lm_eval" / "evalbars__fake-strong")
    mc = frame[~frame["question_id"].str.startswith("toyarith/")].reset_index(drop=True)
    # Every answer but the first unparsed (a model with no score at all is refused).
    mc["correct"] = pd.array([1.0] + [None] * (len(mc) - 1), dtype="Float64")
    items = build_item_table([mc], "random_guess", seed=11)
    assert (items["n_options"] == 4).all() and items["missing_prediction"].sum() == len(mc) - 1
    # apply_missing_policy's draw: one uniform per missing row in (model, question) order,
    # right when it falls below 1/n_options.
    expected = np.random.default_rng(11).random(len(mc) - 1) * 4 < 1
    guessed = items[items["missing_prediction"]].sort_values("question_id")["correct"]
    np.testing.assert_array_equal(guessed.to_numpy(), expected.astype(np.int8))


def test_model_name_falls_back_to_model_args_then_the_details_folder(tmp_path):
    source = CASES["oll_v2"][0] / "evalbars__fake-strong"
    folder = tmp_path / "evalbars__fake-strong"
    shutil.copytree(source, folder)
    (results_path,) = folder.glob("results_*.json")
    results = json.loads(results_path.read_text())
    del results["model_name"]
    results_path.write_text(json.dumps(results))
    (frame,) = read_source(folder)
    assert frame["model"].unique().tolist() == ["evalbars/fake-strong"]  # pretrained=
    del results["config"]["model_args"]
    results_path.write_text(json.dumps(results))
    (frame,) = read_source(folder)
    assert frame["model"].unique().tolist() == ["evalbars/fake-strong"]  # <org>__<model>
    other = tmp_path / "plain"
    shutil.copytree(folder, other)
    with pytest.raises(InputError) as caught:
        read_source(other)
    assert str(caught.value) == (
        f"{next(other.glob('results_*.json'))}: the results file names no model_name "
        "(nor pretrained= in config.model_args)"
    )
