"""A real judge-scored Inspect log (model_graded_qa, inspect-ai 0.3.285) with a labels CSV.

tests/data/harness/inspect/model_graded/ was made once by tests/reference/harness/make_judged_logs.py
(its README gives the provenance and the expected numbers): three mockllm models answer the
20 toyqa questions, a mockllm judge grades them (lenient: 8 wrong answers passed and 3 right
ones failed), and labels.csv holds people's labels of the same 8 random questions for every model.
"""

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalbars as eb
from evalbars.data.readers import read_source
from evalbars.data.readers.archives import open_archive, read_member
from evalbars.data.readers.inspect_logs import UNGRADED
from evalbars.errors import InputError
from evalbars.readings.gate import compare_markdown

FOLDER = Path(__file__).resolve().parents[2] / "data" / "harness" / "inspect" / "model_graded"
LABELS = FOLDER / "labels.csv"
MODELS = ["mockllm/fake-mid", "mockllm/fake-strong", "mockllm/fake-weak"]


@pytest.fixture(scope="module")
def items():
    return eb.read_items(FOLDER, labels=LABELS)


def test_the_judges_grades_are_the_scores_and_the_labels_join(items):
    accuracy = items.groupby("model")["correct"].mean()
    # The README's judge accuracies over all 20 questions.
    assert accuracy.to_dict() == {MODELS[0]: 0.80, MODELS[1]: 0.85, MODELS[2]: 0.55}
    labelled = items[items["human"].notna()]
    assert labelled.groupby("model")["question_id"].nunique().tolist() == [8, 8, 8]
    # People's accuracy on the labelled questions (README): 0.75 for every model.
    assert labelled.groupby("model")["human"].mean().tolist() == [0.75, 0.75, 0.75]


def test_a_labels_file_beside_the_logs_is_passed_over_by_the_folder_walk(caplog):
    items = eb.read_items(FOLDER)  # without --labels: the logs alone, the labels file skipped
    assert "human" not in items.columns and sorted(items["model"].unique()) == MODELS
    assert "'labels.csv'" in caplog.text


def test_a_labels_file_given_as_predictions_says_what_it_is():
    with pytest.raises(InputError) as caught:
        eb.read_items(LABELS)
    assert str(caught.value) == (
        f"{LABELS}: holds human labels (question_id, human) but no scores: it is a labels file; "
        "pass it with --labels (config key labels:) beside the predictions it labels"
    )


def test_the_corrected_readings_and_a_pair_whose_labels_agree_everywhere(items):
    table = eb.judge_corrected_table(items)
    rows = table.set_index(["scope", "reading", "model_a", "model_b"])
    weak = rows.loc[("model", "judge-corrected", MODELS[2], "")]
    # fake-weak: lambda-hat 0.432 (the helper's hand check of ppi-python's conventions).
    assert weak["lambda_hat"] == pytest.approx(0.432, abs=5e-4)
    # fake-strong and fake-weak have the same label on all 8 questions: the difference is 0
    # with SE 0 by ppi-python's formula; the two pseudo-labels give it an interval that does
    # not pretend 8 questions rule out any difference (never a zero-width "certainty").
    pair = rows.loc[("pair", "judge-corrected", MODELS[1], MODELS[2])]
    assert (pair["estimate"], pair["se"]) == (0.0, 0.0)
    # centre 0 (the pseudo-labels are symmetric), lambda-hat 0 (no spread in the labels'
    # differences): the variance of 2 pseudo-labels' differences, (1/4, 1/2, 1/4) on (-1, 0, 1)
    spread = np.sqrt(1.0 / (10 * 9))
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx(
        (-1.959964 * spread, 1.959964 * spread)
    )
    assert pair["p_value"] == 1.0 and pd.isna(pair["significant"])
    assert pair["note"] == "too few labels to decide (n < 10): 8 labelled questions"
    judge = rows.loc[("pair", "judge-only", MODELS[1], MODELS[2])]
    assert judge["estimate"] == pytest.approx(0.30) and judge["significant"]
    assert judge["note"] == ""


def test_compare_on_8_labels_keeps_the_judges_verdict_and_says_why(items):
    result = eb.compare_models(items, MODELS[2], MODELS[1])
    s = result.summary
    assert s["labels"] == 8 and s["judge_corrected_se"] == 0.0
    # 8 labels (fewer than 10): the corrected reading decides nothing, the judge's verdict
    # stands (inconclusive on 20 questions in 3 categories), and the comment says so.
    assert s["judge_corrected_verdict"] is None and s["verdict"] == s["judge_verdict"]
    assert s["judge_corrected_note"] == "too few labels to decide (n < 10): 8 labelled questions"
    spread = np.sqrt(1.0 / (10 * 9))
    assert s["judge_corrected_high"] == pytest.approx(1.959964 * spread)
    comment = compare_markdown(result)
    assert (
        "The scores are an LLM judge's, and the judge-corrected reading has too few labels to "
        "decide (n < 10): 8 labelled questions: the verdict is the judge's own scores'"
    ) in comment
    assert s["labels_to_decide"] >= 10


def test_a_sample_the_grader_could_not_grade_is_a_missing_prediction_of_its_own_cause(tmp_path):
    source = sorted(FOLDER.glob("*.eval"))[0]
    target = tmp_path / source.name
    with open_archive(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = read_member(zin, info.filename, source)
            if info.filename.startswith("samples/q-003"):
                sample = json.loads(data)
                for score in sample["scores"].values():
                    score["value"] = float("nan")  # Inspect writes a bare NaN: grader_failed
                data = json.dumps(sample).encode()
            zout.writestr(info.filename, data)
    frame = read_source(target)[0]
    assert frame.attrs["missing_means"] == UNGRADED
    assert frame.loc[frame["correct"].isna(), "question_id"].tolist() == ["q-003"]
