"""Bad input and faults, round 3 (issue 19): the non-reader cases, each with its exact line."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars import category_pairwise, logistic, mixed, planning
from evalbars.errors import script_context
from evalbars.pairwise import disagreement_rates
from evalbars.scores import WideScores

from .workflow_runs import make_workdir, run_snakemake


def _items(scores: dict) -> pd.DataFrame:
    """An item table from ``{model: [score per question, or a list of epoch scores]}``."""
    rows = []
    for model, column in scores.items():
        for q, value in enumerate(column):
            for epoch, v in enumerate(np.atleast_1d(value)):
                rows.append(
                    {
                        "model": model,
                        "question_id": f"q{q}",
                        "epoch": epoch,
                        "category": "c",
                        "correct": float(v),
                    }
                )
    return pd.DataFrame(rows)


# --- 1. The plan table on the harness examples' data ---------------------------------------------


def test_disagreement_is_the_mean_square_difference_for_epochs_and_partial_credit():
    # Per-question means of 2 epochs: x = (1, .5, 0, 1), y = (1, 1, .5, 0): squares 0, .25, .25, 1.
    items = _items({"x": [[1, 1], [1, 0], [0, 0], [1, 1]], "y": [[1, 1], [1, 1], [1, 0], [0, 0]]})
    (rate,) = disagreement_rates(items)["disagreement"]
    assert rate == 1.5 / 4  # the share of questions where the scores differ would be 3/4
    partial = _items({"x": [0.2, 0.9, 0.5], "y": [0.2, 0.4, 1.0]})
    (rate,) = disagreement_rates(partial)["disagreement"]
    assert rate == pytest.approx((0.25 + 0.25) / 3, abs=1e-15)
    # 0/1 scores: exactly the discordant share (the same float as n_discordant / n).
    binary = _items({"x": [1, 1, 1, 0, 0, 1, 0], "y": [1, 0, 1, 1, 0, 0, 0]})
    (rate,) = disagreement_rates(binary)["disagreement"]
    assert rate == 3 / 7


def test_data_setting_takes_the_datas_mean_accuracy():
    items = _items({"x": [1, 1, 1, 0], "y": [1, 0, 0, 0], "z": [[1, 0], [1, 1], [0, 0], [0, 0]]})
    setting = planning.data_setting(items)
    assert setting == {
        "models": 3,
        "questions": 4,
        "disagreement": 0.3125,  # median of x-y 2/4, x-z (.25 + 1)/4, y-z (.25 + 1)/4
        "mean_accuracy": (0.75 + 0.25 + 0.375) / 3,
    }


def test_plan_table_falls_back_to_the_closed_forms_where_the_simulation_cannot_reach_the_rate():
    # The lm-eval example: 3 models disagreeing more often than independent models would
    # (0.564 > 0.493 at mean accuracy 5/9) stopped the plan table with a ValueError.
    table = planning.plan_table(3, [0.01, 0.05], 22 / 39, mean_accuracy=5 / 9, replications=500)
    holm = table[(table["procedure"] == "holm")].set_index("gap_points")
    assert holm["questions_simulated"].isna().all() and holm["power_simulated"].isna().all()
    assert holm.loc[1.0, "note"] == (
        "not simulated (a disagreement rate of 0.5641 is not reachable at mean accuracy 0.5556 "
        "and gap 0.01: it must lie strictly between 0.01 and 0.4927 (that of independent "
        "models)); Holm lies between the closed forms"
    )
    # The closed forms stand: Bonferroni's bound is the exact formula at alpha / 3.
    z = planning.special.ndtri(1 - 0.05 / 6) + planning.special.ndtri(0.8)
    expected = np.ceil(z**2 * (22 / 39 - 0.01**2) / 0.01**2)
    assert holm.loc[1.0, "questions_closed_form"] == expected
    assert (table.loc[table["procedure"] != "holm", "note"] == "").all()
    assert table["power_simulated"].notna().sum() == 4  # none and Bonferroni, both gaps
    caption = planning.plan_caption(
        table,
        {"models": 3, "questions": 39, "disagreement": 22 / 39, "mean_accuracy": 5 / 9},
        0.05,
        0.8,
    )
    assert caption.endswith(
        "Holm over all pairs is simulated with models at the data's mean accuracy (55.6%). Not "
        "simulated for 1, 5 points (see the note): the closed forms bracket Holm there."
    )


def test_plan_table_simulates_at_the_datas_mean_accuracy():
    # At mean accuracy 0.9 a gap of 12 points would put the leader above 100%.
    table = planning.plan_table(3, [0.12], 0.3, mean_accuracy=0.9, replications=500)
    holm = table.set_index("procedure").loc["holm"]
    assert holm["note"].startswith(
        "not simulated (a gap of 12 points above a mean accuracy of 90.0%"
    )
    reachable = planning.plan_table(3, [0.05], 0.3, mean_accuracy=0.5, replications=500)
    holm = reachable.set_index("procedure").loc["holm"]
    assert holm["note"] == "" and holm["mean_accuracy"] == 0.5
    assert holm["questions_lower_bound"] <= holm["questions_simulated"]
    assert holm["questions_simulated"] <= holm["questions_closed_form"] + 1


# --- 2. Models that answer every question alike ---------------------------------------------------

ALIKE_WHY = (
    "M1, M2 and M3 score alike on every question (no within-question variation to separate the "
    "question variance from the residual)"
)


def _alike_wide():
    column = np.array([(q * 7 + q // 9) % 3 == 0 for q in range(60)], dtype=float)
    categories = np.array(["ab"[q % 2] for q in range(60)])
    return WideScores(np.tile(column[:, None], 3), ["M1", "M2", "M3"], np.arange(60), categories)


def test_mixed_models_that_cannot_be_fitted_are_named_and_their_contrasts_left_empty():
    wide = _alike_wide()
    assert mixed.fit_obstacle(wide, "category") is None
    assert mixed.fit_obstacle(wide, "category_question") == ALIKE_WHY
    # one model differing on one question is enough
    varied = WideScores(wide.scores.copy(), wide.models, wide.question_ids, wide.categories)
    varied.scores[5, 2] = 1 - varied.scores[5, 2]
    assert mixed.fit_obstacle(varied, "category_question") is None
    # repeated samples that differ within a cell are variation too
    epochs = WideScores(
        wide.scores,
        wide.models,
        wide.question_ids,
        wide.categories,
        samples=np.full(wide.scores.shape, 2),
        within_ss=np.eye(60, 3) / 2,
    )
    assert mixed.fit_obstacle(epochs, "category_question") is None
    empty = mixed.unfitted_contrasts(wide, "category_question")
    fitted = mixed.lmm_contrasts(mixed.fit_lmm(wide, "category"))
    assert list(empty.columns) == list(fitted.columns)
    assert empty[["model_a", "model_b"]].equals(fitted[["model_a", "model_b"]])
    assert empty.drop(columns=["model_spec", "model_a", "model_b"]).isna().all().all()


def test_the_interaction_test_without_within_question_variation_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = category_pairwise.interaction_test(_alike_wide())
    assert np.isnan(result["f"]) and np.isnan(result["f_p"]) and np.isnan(result["lrt"])
    assert (result["f_df1"], result["f_df2"]) == (2, 116)


def test_logistic_contrasts_with_zero_se_are_no_test():
    # GEE on identical models: SE 0 and a difference of rounding noise gave z = inf, "a > b".
    result = logistic._differences(
        np.array([0.5 + 1e-16, 0.5]),
        np.eye(2),
        np.zeros((2, 2)),
        np.array([0]),
        np.array([1]),
        "gee",
        0.05,
    )
    assert np.isnan(result["gee_z"]).all() and np.isnan(result["gee_p_holm"]).all()


@pytest.mark.workflow
def test_models_alike_on_every_question_run_every_analysis_with_a_note(tmp_path):
    mine = tmp_path / "alike.csv"
    wide = _alike_wide()
    rows = [
        f"{m},q{q},{int(wide.scores[q, k])},{wide.categories[q]}"
        for k, m in enumerate(wide.models)
        for q in range(60)
    ]
    mine.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    before = mine.read_bytes()
    workdir = make_workdir(tmp_path, models=[], predictions=[str(mine)], subsample={"n": "all"})
    result = run_snakemake(workdir, "--cores", "2", "analysis_all", "claims_all")
    console = [line for line in result.stderr.splitlines() if line.startswith("evalbars: ")]
    assert console == [
        "evalbars: mixed model correct ~ 0 + model + (1|category) + (1|category:question) not "
        f"fitted: {ALIKE_WHY}"
    ]
    assert "unexpected error" not in result.stderr and "Warning" not in result.stderr
    tables = workdir / "results" / "tables"
    contrasts = pd.read_csv(tables / "mixed_contrasts.csv")
    assert contrasts.groupby("model_spec")["se"].count().to_dict() == {
        "category": 3,
        "category_question": 0,
    }
    components = pd.read_csv(tables / "variance_components.csv")
    assert set(components["model_spec"]) == {"category"}
    verdicts = pd.read_csv(tables / "logistic_verdicts.csv")
    assert set(verdicts[["lmm_verdict", "glmm_verdict", "gee_verdict"]].stack()) == {
        "not separated"
    }
    summary = pd.read_csv(tables / "category_summary.csv")
    assert summary.loc[summary["test"] == "split-plot F", "p"].isna().all()
    assert mine.read_bytes() == before


# --- 3. Faults of the machine; the lock a killed run leaves ---------------------------------------

FULL_DISK_JOB = """
import pandas as pd
from evalbars.errors import script_context

class Job:
    output = [{table!r}, {table!r}.replace(".csv", ".md")]

snakemake = Job()
with script_context({log!r}):
    pd.DataFrame({{"x": range(100_000)}}).to_csv("/dev/full")
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_inside_a_job_is_one_line_naming_the_folder(tmp_path):
    table = tmp_path / "results" / "tables" / "plan.csv"
    log = tmp_path / "job.log"
    script = tmp_path / "job.py"
    script.write_text(FULL_DISK_JOB.format(table=str(table), log=str(log)))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == (
        f"evalbars: {table.parent} (writing this job's outputs): No space left on device (ENOSPC)\n"
    )
    assert "Traceback" in log.read_text() and "a bug" not in log.read_text()


def test_a_path_that_cannot_be_written_is_one_line_naming_it(tmp_path, capsys):
    blocker = tmp_path / "results"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(SystemExit) as stop, script_context(tmp_path / "job.log"):
        (blocker / "plan.csv").write_text("x")
    assert stop.value.code == 1
    assert (
        capsys.readouterr().err == f"evalbars: {blocker / 'plan.csv'}: Not a directory (ENOTDIR)\n"
    )
    assert blocker.read_text() == "a file where a folder should be"


@pytest.mark.workflow
def test_a_lock_left_by_a_killed_run_names_the_remedy(tmp_path):
    workdir = make_workdir(tmp_path)
    locks = workdir / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("data/items.parquet\n")
    config = (workdir / "config" / "config.yaml").read_bytes()
    result = run_snakemake(workdir, "--cores", "1", "data_all", check=False)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("evalbars: ")]
    assert lines == [
        f"evalbars: {workdir.resolve()} holds a Snakemake lock (.snakemake/locks) of another run "
        "or of one that was killed: if this run stops with LockException and no other is "
        "running, add --unlock to the same command once, then run it again"
    ]
    assert "LockException" in result.stderr and not (workdir / "data").exists()
    # nothing run, nothing written, the config untouched
    assert not (workdir / "results").exists()
    assert (workdir / "config" / "config.yaml").read_bytes() == config
    unlocked = run_snakemake(workdir, "--cores", "1", "data_all", "--unlock")
    assert "evalbars: " not in unlocked.stderr and not locks.exists()
