"""Bad input and faults, round 3 (issue 19): the non-reader cases, each with its exact line."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate as snakemake_validate

from evalbars import cli
from evalbars.data.scores import WideScores
from evalbars.errors import ConfigError, InputError, script_context
from evalbars.readings import category_pairwise, planner, ranks
from evalbars.readings.claims.parsing import ClaimError, parse_claim
from evalbars.stats import mixed, planning
from evalbars.stats.logistic import contrasts as logistic
from evalbars.stats.pairwise import disagreement_rates
from evalbars.workflow import smk

from .conftest import REPO
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
    setting = planner.data_setting(items)
    assert setting == {
        "models": 3,
        "questions": 4,
        "disagreement": 0.3125,  # median of x-y 2/4, x-z (.25 + 1)/4, y-z (.25 + 1)/4
        "mean_accuracy": (0.75 + 0.25 + 0.375) / 3,
    }


def test_plan_table_falls_back_to_the_closed_forms_where_the_simulation_cannot_reach_the_rate():
    # The lm-eval example: 3 models disagreeing more often than independent models would
    # (0.564 > 0.493 at mean accuracy 5/9) stopped the plan table with a ValueError.
    table = planner.plan_table(3, [0.01, 0.05], 22 / 39, mean_accuracy=5 / 9, replications=500)
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
    caption = planner.plan_caption(
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
    table = planner.plan_table(3, [0.12], 0.3, mean_accuracy=0.9, replications=500)
    holm = table.set_index("procedure").loc["holm"]
    assert holm["note"].startswith(
        "not simulated (a gap of 12 points above a mean accuracy of 90.0%"
    )
    reachable = planner.plan_table(3, [0.05], 0.3, mean_accuracy=0.5, replications=500)
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
from evalbars.readings.claims.parsing import ClaimError, parse_claim
from evalbars.errors import ConfigError, InputError, script_context

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


# --- 4. Claims whose margin was misread ----------------------------------------------------------

CLAIM_MODELS = ["Alpha-7B", "Beta-7B", "Gamma-2B"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("|Alpha-7B - Beta-7B| < -2", "the margin must be positive points, got -2"),
        ("Alpha-7B >= Beta-7B - -2", "the margin must be positive points, got -2"),
        ("|Alpha-7B - Beta-7B| < 0", "the margin must be positive points, got 0"),
        ("Alpha-7B >= Beta-7B - 150", "the margin must be below 100 points, got 150"),
        (
            "|Alpha-7B - Beta-7B| < 0.02",
            "a margin of 0.02 points is below 1 point: did you mean 2 points? (margins are "
            "accuracy points; write '0.02 points' if you mean it)",
        ),
        (
            "Alpha-7B > Beta-7B - 2",
            "'A > B' takes no margin; for non-inferiority by d points write 'A >= B - 2'",
        ),
        (
            "Alpha-7B < Beta-7B + 3 points",
            "'A > B' takes no margin; for non-inferiority by d points write 'A >= B - 3'",
        ),
        ("Alpha-7B >= Beta-7B + 2", "the margin is subtracted: write 'A >= B - 2'"),
        ("top -1: Alpha-7B", "'top k' needs a whole number k >= 1, got '-1'"),
        ("top 0: Alpha-7B", "'top k' needs a whole number k >= 1, got '0'"),
        ("top 1.5: Alpha-7B", "'top k' needs a whole number k >= 1, got '1.5'"),
    ],
)
def test_claims_with_a_misread_margin_say_what_is_wrong_with_the_margin(text, problem):
    with pytest.raises(ClaimError) as info:
        parse_claim(text, CLAIM_MODELS, ["math"])
    assert str(info.value) == f"claim {text!r}: {problem}"


def test_a_margin_under_one_point_with_its_unit_is_kept_and_spelled_back_with_it():
    claim = parse_claim("|Alpha-7B - Beta-7B| < 0.5 points", CLAIM_MODELS, ["math"])
    assert (claim.kind, claim.margin, claim.label) == (
        "equivalence",
        0.5,
        "|Alpha-7B - Beta-7B| < 0.5 points",
    )
    assert parse_claim(claim.label, CLAIM_MODELS, ["math"]) == claim
    assert parse_claim("top-2: Gamma-2B", CLAIM_MODELS, ["math"]).k == 2


# --- 5. Config keys that do not exist, values the schema does not allow -------------------------

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _shipped(example=None) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if example:
        config |= yaml.safe_load((REPO / "config" / "examples" / f"{example}.yaml").read_text())
    return config


@pytest.mark.parametrize("example", [None, "lm_eval", "inspect"])
def test_defaults_are_filled_in_exactly_as_snakemake_does(example):
    ours, theirs = _shipped(example), _shipped(example)
    # drop a few sections so that the defaults have something to fill in
    for config in (ours, theirs):
        del config["ranks"], config["simulation"]["fwer"], config["alpha"]
    smk.validate_config(ours, SCHEMA)
    snakemake_validate(theirs, schema=str(SCHEMA))
    assert json.dumps(ours) == json.dumps(theirs)  # same keys, values and order


def _change(path: str, value):
    config = _shipped()
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[last] = value
    return config


@pytest.mark.parametrize(
    ("path", "value", "line"),
    [
        (
            "subsampel",
            {"n": 10},
            "config key `subsampel` does not exist; did you mean `subsample`?",
        ),
        (
            "subsample.nn",
            3,
            "config key `subsample.nn` does not exist; did you mean `subsample.n`?",
        ),
        ("alpha", 1.5, "config key `alpha`: 1.5 is not allowed; allowed: a number > 0 and < 1"),
        (
            "ranks.draws",
            10,
            "config key `ranks.draws`: 10 is not allowed; allowed: an integer >= 100 and <= 1,000,000",
        ),
        ("claims", "A > B", 'config key `claims`: "A > B" is not allowed; allowed: a list'),
        (
            "predictions",
            [{"paht": "x.csv"}],
            "config key `predictions[0].paht` does not exist; did you mean `predictions[0].path`?",
        ),
        (
            "predictions",
            [{"path": "x.csv", "runs": "latest"}],
            "config key `predictions[0].runs`: \"latest\" is not allowed; allowed: one of 'only', "
            "'newest'",
        ),
        (
            "predictions",
            [3],
            "config key `predictions[0]`: 3 is not allowed; allowed: a string of at least 1 "
            "character(s) or a mapping",
        ),
    ],
)
def test_a_bad_config_key_is_one_line_naming_it(path, value, line):
    with pytest.raises(ConfigError) as info:
        smk.validate_config(_change(path, value), SCHEMA)
    assert str(info.value) == line


@pytest.mark.parametrize(("value", "shown"), [(0, "0"), ("abc", '"abc"'), (2.5, "2.5")])
def test_a_bad_subsample_size_names_the_key_and_the_value(value, shown):
    # the alternatives after the integer ('all', and 'auto' where the schema has it) are
    # checked word for word on a schema of the test's own below
    with pytest.raises(ConfigError) as info:
        smk.validate_config(_change("subsample.n", value), SCHEMA)
    assert str(info.value).startswith(
        f"config key `subsample.n`: {shown} is not allowed; allowed: an integer >= 1"
    )


def test_a_oneof_is_named_by_all_its_alternatives(tmp_path):
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        yaml.safe_dump(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "n": {
                        "oneOf": [
                            {"type": "integer", "minimum": 1},
                            {"type": "string", "enum": ["all", "auto"]},
                        ],
                        "default": "auto",
                    },
                    "mode": {"type": "string", "enum": ["fast", "exact"], "default": "fast"},
                },
                "additionalProperties": False,
            }
        )
    )
    with pytest.raises(ConfigError) as info:
        smk.validate_config({"n": 0}, schema)
    assert str(info.value) == (
        "config key `n`: 0 is not allowed; allowed: an integer >= 1, 'all' or 'auto'"
    )
    with pytest.raises(ConfigError) as info:
        smk.validate_config({"mode": "quick"}, schema)
    assert (
        str(info.value)
        == "config key `mode`: \"quick\" is not allowed; allowed: one of 'fast', 'exact'"
    )
    assert smk.validate_config({}, schema) == {"n": "auto", "mode": "fast"}


def test_an_unknown_key_without_a_close_match_lists_the_valid_keys():
    with pytest.raises(ConfigError) as info:
        smk.validate_config(_change("zzz", 1), SCHEMA)
    assert str(info.value).startswith(
        "config key `zzz` does not exist (valid keys: mirror, checksums, models, predictions,"
    )


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("path", "value", "line"),
    [
        (
            "subsampel",
            {"n": 10},
            "config key `subsampel` does not exist; did you mean `subsample`?",
        ),
        (
            "ranks.draws",
            10,
            "config key `ranks.draws`: 10 is not allowed; allowed: an integer >= 100 and <= 1,000,000",
        ),
    ],
)
def test_a_dry_run_with_a_bad_config_key_ends_in_that_line(tmp_path, path, value, line):
    workdir = make_workdir(tmp_path)
    config = _change(path, value)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    written = (workdir / "config" / "config.yaml").read_bytes()
    result = run_snakemake(workdir, "-n", check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == f"evalbars: {line}"
    assert len(result.stderr.strip().splitlines()) <= 3, result.stderr
    assert (workdir / "config" / "config.yaml").read_bytes() == written
    assert not (workdir / "results").exists() and not (workdir / "data").exists()


# --- 6. Leaderboards whose standard errors are on another scale than their scores ----------------


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (
            "a,0.84,3.1\nb,0.80,2.5\n",
            "row 1 (a): se 3.1 is in points but score 0.84 is a proportion; give both on one "
            "scale (se 0.031, or score 84)",
        ),
        (
            "a,0.84,0.02\nb,0.80,0.7\n",
            "row 2 (b): se 0.7 is in points but score 0.8 is a proportion; give both on one "
            "scale (se 0.007, or score 80)",
        ),
        (
            "a,84,60\nb,80,2.5\n",
            "row 1 (a): se 60 exceeds 50 points, the largest standard error of an accuracy",
        ),
        (
            "a,0.84,51\nb,0.80,0.02\n",
            "row 1 (a): se 51 exceeds 0.5, the largest standard error of an accuracy",
        ),
    ],
)
def test_ranks_refuses_an_se_on_another_scale_than_the_score(tmp_path, capsys, rows, problem):
    board = tmp_path / "board.csv"
    board.write_text("name,score,se\n" + rows)
    before = board.read_bytes()
    assert cli.main(["ranks", str(board)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"evalbars ranks: error: {board}: {problem}\n"
    assert captured.out == "" and board.read_bytes() == before


def test_ranks_accepts_ses_on_the_scores_scale():
    board = ranks.parse_leaderboard(
        pd.DataFrame({"name": ["a", "b"], "score": ["84%", "80%"], "se": ["0.7", "1.2"]})
    )
    assert board["se"].tolist() == [0.7 / 100, 1.2 / 100]
    table = ranks.rank_table(board, draws=100, seed=1).table
    assert (table["ci_low"] > 0.75).all() and (table["ci_high"] < 0.9).all()


def test_rank_table_refuses_fewer_draws_than_the_workflow_allows():
    board = ranks.parse_leaderboard(
        pd.DataFrame({"name": ["a", "b"], "correct": [80, 70], "total": [100, 100]})
    )
    with pytest.raises(ValueError) as info:
        ranks.rank_table(board, draws=99)
    assert str(info.value) == (
        "the number of draws must be a whole number of at least 100 (the rank range and p_first "
        "are shares of the draws), got 99"
    )


# --- 7. Planning: gaps beyond the disagreement rate, gaps given as proportions --------------------


def test_too_few_questions_find_no_gap_rather_than_one_above_the_disagreement_rate(capsys):
    # 10 questions at a 25% disagreement rate "found" a gap of 33-36 points, above the rate.
    gaps = planning.detectable_gap([10, 24, 1497], 0.25, 0.05, 0.8)
    assert np.isnan(gaps[0]) and gaps[1] == pytest.approx(0.2483, abs=1e-4) and gaps[2] < 0.04
    assert cli.main(["plan", "--models", "6", "--questions", "10", "--disagreement", "0.25"]) == 0
    assert capsys.readouterr().out == (
        "6 models, Holm over 15 tests, alpha 0.05, power 0.8, disagreement rate 0.25 (wald test): "
        "10 shared questions find no gap with power 0.8: no gap can exceed the disagreement rate "
        "(25 points), and even that largest gap needs 24 (unadjusted level) to 43 (Bonferroni "
        "level) shared questions.\n"
    )
    args = ["plan", "--models", "6", "--questions", "10", "--disagreement", "0.25"]
    assert cli.main([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["gap_low"] is None and document["gap_high"] is None
    # the largest gap itself: the closed form at gap = rate, z^2 (1 - rate) / rate
    z = planning.special.ndtri(1 - 0.05 / 2) + planning.special.ndtri(0.8)
    assert np.ceil(z**2 * 0.75 / 0.25) == 24
    table = planner.plan_table(6, [0.05], 0.25, questions=10, simulate=False)
    assert table["detectable_gap_points"].isna().all()


@pytest.mark.parametrize(
    ("arguments", "where", "problem"),
    [
        (
            (6, 0.02, None, 0.25),
            "--gap 0.02",
            "is 0.02 points; did you mean 2 points? (the gap is in accuracy points; add "
            "--small-gap to plan for a gap under 1 point)",
        ),
        (
            (6, 40, None, 0.25),
            "--gap 40",
            "must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            (6, 0, None, 0.25),
            "--gap 0",
            "must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            (6, 2, 100, 0.25),
            "--gap, --questions",
            "give exactly one of --gap (points) or --questions",
        ),
        ((1, 2, None, 0.25), "--models 1", "a comparison needs at least 2 models"),
    ],
)
def test_plan_requests_that_cannot_be_meant_are_refused_in_one_line(arguments, where, problem):
    with pytest.raises(InputError) as info:
        planner.check_plan_request(*arguments)
    assert str(info.value) == f"{where}: {problem}"


def test_a_gap_under_one_point_is_planned_when_asked_for():
    assert planner.check_plan_request(6, 0.5, None, 0.25, small_gap=True) is None
    assert planner.check_plan_request(6, 2, None, 0.25) is None
    assert planner.check_plan_request(6, None, 1497, 0.25) is None


# The plan table of both shipped examples: tests/test_workflow_inputs.py, on their full runs.
