"""The Python API held to the workflow: each table of :mod:`evalbars.api` equals the Parquet file
the workflow writes for the same data and settings (``assert_frame_equal``: values, dtypes,
columns and index), as the API's docstring and docs/guides/notebook.md promise.

Four runs for :data:`API_TABLES`: the default run (the paper's workflow on the MMLU-Pro
subsample, the module run of test_default_run.py), the two shipped examples
(config/examples/lm_eval.yaml and inspect.yaml, the module runs of test_workflow_inputs.py) and,
here, ``evalbars report`` on the judged table with its human labels. Each of those files calls
:func:`assert_api_equals_workflow` on its own run, so that no run is made twice. The tables of
the other stages are held on the runs that make them, with the helpers here:
:data:`BATTLE_TABLES` on a table of battles (test_battles_report.py), :data:`REPEAT_TABLES` on
both repeat fixtures (test_repeats_report.py) and :data:`BEST_TABLES` on Inspect logs with
prices (test_cost_report.py).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import evalbars.api as api
from evalbars.pipeline import smk
from evalbars.readings.leaderboard.best import BEST_SET_COLUMNS

from ..conftest import DATA, REPO
from ..workflow_runs import snakemake_env

pytestmark = pytest.mark.workflow

#: Each table function of :mod:`evalbars.api` and the workflow's table it equals,
#: ``results/tables/<name>.parquet``.
API_TABLES = {
    "accuracy_table": "models",
    "pairwise_table": "pairwise",
    "omnibus_table": "omnibus",
    "mixed_contrasts": "mixed_contrasts",
    "variance_components": "variance_components",
    "rank_table": "ranks",
    "check_claims": "claims",
    "leaderboard_table": "leaderboard",
    "judge_corrected_table": "judge_corrected",
    "stderr_audit": "harness_stderr",
}
#: The names of :mod:`evalbars.api` that compute no table of the workflow's: the readers and the
#: score matrices the tables are computed from (``score_matrix`` is the subsample's
#: ``data/subsample/scores.npz``, a matrix rather than a table: held equal to it in
#: test_repeats_report.py; ``read_items`` is the ``items`` job's table, which
#: the runs' tables are computed from here; ``data/items.parquet`` reads back the categories of
#: a column no row has a value in, such as ``src`` of a CSV, as object rather than str: pyarrow's
#: conversion, apache/arrow#45192), the release gate of ``evalbars compare``, and the report run.
NOT_WORKFLOW_TABLES = {
    "read_battles",
    "battles_report_config",
    "read_items",
    "read_preview",
    "read_sources",
    "attach_labels",
    "scores",
    "score_matrix",
    "compare_models",
    "ReportRun",
    "report_config",
    "write_report",
}
#: The tables of a battles run, held to its files in tests/workflow/test_battles_report.py.
BATTLE_TABLES = {"battles_table": "battles_leaderboard", "battle_claims": "battles_claims"}
#: The tables of repeated samples and runs and the files of the repeats stage each equals (paths
#: in the run directory), held on both repeat fixtures' runs in
#: tests/workflow/test_repeats_report.py.
REPEAT_TABLES = {
    "pass_at_k_table": ("results/tables/pass_at_k.parquet",),
    "passk_curve_table": ("results/tables/passk_curve.parquet",),
    "run_variance_table": (
        "results/tables/run_variance.parquet",
        "results/tables/run_aware.parquet",
        "results/tables/run_signs.parquet",
    ),
    "sampling_plan": ("results/tables/sampling_plan.parquet",),
}
#: The best model and its cost, and the files each equals, held on a run with prices in
#: tests/workflow/test_cost_report.py: ``best_set_table`` is the columns of the leaderboard it
#: computes (:data:`evalbars.readings.leaderboard.best.BEST_SET_COLUMNS`), ``question_costs``
#: the ``costs`` job's file the cost claims read.
BEST_TABLES = {
    "winner_table": ("results/tables/winner.parquet",),
    "best_set_table": ("results/tables/leaderboard.parquet",),
    "cost_table": ("results/tables/cost.parquet",),
    "frontier_table": ("results/tables/frontier.parquet",),
    "cost_readings": ("results/tables/cost.parquet", "results/tables/frontier.parquet"),
    "question_costs": ("data/costs.parquet",),
}
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
JUDGED = DATA / "judged"
JUDGED_CLAIMS = ["model-a > model-b", "best: model-a"]


def run_config(path: Path) -> dict:
    """The configuration a run used: its config file with the schema's defaults filled in, as
    the Snakefile fills them (the runs here have no ``config/config.yaml`` of their own beside
    the one given, or only that one)."""
    return smk.validate_config(yaml.safe_load(path.read_text()), SCHEMA)


def run_items(run: Path, config: dict) -> pd.DataFrame:
    """The item table the run's tables are computed from, as the API gets it: the run's
    prediction files read by :func:`evalbars.api.read_items` with the config's reader options
    and policies (their paths are relative to the run directory) where the run keeps every
    question; else (the MMLU-Pro archives, a drawn subsample) the subsample the workflow drew."""
    sources = smk.prediction_sources(config)
    if not sources or smk.run_choices(config).subsample_size != "all":
        return pd.read_parquet(run / "data" / "subsample" / "items.parquet")
    options = source_options(sources)
    with contextlib.chdir(run):
        return api.read_items(
            [source["path"] for source in sources],
            missing_prediction=config["missing_prediction"],
            seed=config["missing_prediction_seed"],
            question_set=config["question_set"],
            max_unshared_share=config["max_unshared_share"],
            labels=config.get("labels"),
            **options,
        )


def source_options(sources: list[dict]) -> dict:
    """The reader options the run's predictions entries share (the API takes one set)."""
    options = [{k: v for k, v in source.items() if k != "path"} for source in sources]
    assert all(o == options[0] for o in options), options
    return options[0]


def api_tables(run: Path, config: dict) -> dict[str, pd.DataFrame]:
    """Every table of :data:`API_TABLES` computed by :mod:`evalbars.api` on the run's items with
    the settings of its rules' ``params:`` (workflow/rules/*.smk), by the workflow's name."""
    wide = api.scores(run_items(run, config))
    alpha, level, method = config["alpha"], config["level"], config["analysis"]["mixed_method"]
    ranks, board, claims = config["ranks"], config["leaderboard"], config["claims_options"]
    tables = {
        "models": api.accuracy_table(wide, level=level),
        "pairwise": api.pairwise_table(wide, alpha=alpha),
        "omnibus": api.omnibus_table(wide),
        "mixed_contrasts": api.mixed_contrasts(wide, alpha=alpha, method=method),
        "variance_components": api.variance_components(wide, method=method),
        "ranks": api.rank_table(
            wide,
            level=level,
            draws=ranks["draws"],
            replicates=ranks["replicates"],
            seed=ranks["seed"],
            stratify=ranks["stratify"],
        ),
        "claims": api.check_claims(
            wide,
            smk.run_choices(config).claims,
            alpha=alpha,
            family=claims["family"],
            adjust=claims["adjust"],
            power=claims["power"],
            replicates=ranks["replicates"],
            seed=ranks["seed"],
        ),
        "leaderboard": api.leaderboard_table(
            wide,
            alpha=alpha,
            level=level,
            power=board["power"],
            splits=board["splits"],
            seed=board["seed"],
        ),
        "judge_corrected": api.judge_corrected_table(wide, level=level, alpha=alpha),
    }
    sources = smk.prediction_sources(config)
    if sources:  # the audit of the standard errors the harnesses published
        with contextlib.chdir(run):
            paths = [source["path"] for source in sources]
            tables["harness_stderr"] = api.stderr_audit(paths, **source_options(sources))
    return tables


def assert_api_equals_workflow(run: Path, config_file: Path) -> set[str]:
    """Assert that every table :mod:`evalbars.api` computes on the run's data with its settings
    equals the run's ``results/tables/<name>.parquet``; returns the names compared.

    The tables the run did not write are those of data it has not: ``judge_corrected`` without
    labels (the API's is then empty) and ``harness_stderr`` without prediction files (the API's
    audit takes the files).
    """
    tables = run / "results" / "tables"
    compared = set()
    for name, table in api_tables(run, run_config(config_file)).items():
        path = tables / f"{name}.parquet"
        if name == "judge_corrected" and not path.exists():
            assert table.empty, "the API corrected a judge the run found no labels for"
            continue
        pd.testing.assert_frame_equal(table, pd.read_parquet(path), obj=name, check_exact=True)
        compared.add(name)
    return compared


def table_file(name: str) -> str:
    """The Parquet file of the workflow's table ``name``, in the run directory."""
    return f"results/tables/{name}.parquet"


def repeat_tables(run: Path, config: dict) -> dict[str, dict[str, pd.DataFrame]]:
    """Every function of :data:`REPEAT_TABLES` computed by :mod:`evalbars.api` on the run's
    items with the settings of the repeats stage's ``params:`` (workflow/rules/repeats.smk): by
    the function's name, its tables by the file (in the run directory) each equals."""
    items = run_items(run, config)
    claims, settings, level = smk.run_choices(config).claims, config["repeats"], config["level"]
    run_noise = api.run_variance_table(
        items,
        claims,
        baseline=settings["baseline"],
        alpha=config["alpha"],
        power=config["claims_options"]["power"],
        level=level,
    )
    curve = api.passk_curve_table(
        items,
        claims,
        baseline=settings["baseline"],
        level=level,
        draws=settings["draws"],
        seed=settings["seed"],
    )
    return {
        "pass_at_k_table": {table_file("pass_at_k"): api.pass_at_k_table(items, level=level)},
        "passk_curve_table": {table_file("passk_curve"): curve},
        "run_variance_table": {table_file(name): table for name, table in run_noise.items()},
        "sampling_plan": {
            table_file("sampling_plan"): api.sampling_plan(items, settings["target_se"])
        },
    }


def best_tables(run: Path, config: dict) -> dict[str, dict[str, pd.DataFrame]]:
    """Every function of :data:`BEST_TABLES` computed by :mod:`evalbars.api` on the run's
    items and predictions with the settings of the leaderboard stage's ``params:``
    (workflow/rules/leaderboard.smk: the ``leaderboard_table``, ``costs`` and ``cost_table``
    rules), by the function's name: its tables by the file (in the run directory) each equals."""
    items = run_items(run, config)
    wide = api.score_matrix(items, config["score"])
    alpha, level, board = config["alpha"], config["level"], config["leaderboard"]
    sources = smk.prediction_sources(config)
    paths = [source["path"] for source in sources]
    read = {"missing_prediction": config["missing_prediction"], **source_options(sources)}
    settings = {"alpha": alpha, "level": level, "seed": board["seed"]}
    prices = config["prices"]
    with contextlib.chdir(run):
        readings = api.cost_readings(paths, prices, items=items, **settings, **read)
        cost = api.cost_table(paths, prices, **settings, **read)
        frontier = api.frontier_table(paths, prices, **settings, **read)
        costs = api.question_costs(paths, prices, **read)
    return {
        "winner_table": {
            table_file("winner"): api.winner_table(wide, level=level, seed=board["seed"])
        },
        "best_set_table": {
            table_file("leaderboard"): api.best_set_table(
                wide, alpha, top_k=board["top_k"], seed=board["seed"]
            )
        },
        "cost_table": {table_file("cost"): cost},
        "frontier_table": {table_file("frontier"): frontier},
        "cost_readings": {table_file(name): table for name, table in readings.items()},
        "question_costs": {"data/costs.parquet": costs},
    }


def assert_tables_equal_files(
    run: Path, computed: dict[str, dict[str, pd.DataFrame]]
) -> dict[str, tuple[str, ...]]:
    """Assert that every table :func:`repeat_tables` or :func:`best_tables` computed equals its
    file in the run directory (values, dtypes, columns and index, exactly); returns for each
    function the files compared, as :data:`REPEAT_TABLES` and :data:`BEST_TABLES` list them.

    ``best_set_table`` is compared with the columns of the leaderboard it computes, in its own
    order of the models (the leaderboard's is best first)."""
    for name, tables in computed.items():
        for path, table in tables.items():
            stored = pd.read_parquet(run / path)
            if name == "best_set_table":
                assert sorted(stored["model"]) == sorted(table["model"])
                stored = stored.set_index("model").loc[table["model"], list(BEST_SET_COLUMNS)]
                stored = stored.reset_index()
            pd.testing.assert_frame_equal(table, stored, obj=f"{name}: {path}", check_exact=True)
    return {name: tuple(tables) for name, tables in computed.items()}


def test_every_table_of_the_api_is_compared():
    # a table function added to evalbars.api is held to the workflow's file, or said not to be one
    compared = set(API_TABLES) | set(BATTLE_TABLES) | set(REPEAT_TABLES) | set(BEST_TABLES)
    assert set(api.__all__) - {"REPORT_STAGES"} == compared | NOT_WORKFLOW_TABLES
    assert not compared & NOT_WORKFLOW_TABLES


@pytest.fixture(scope="module")
def judged_report(tmp_path_factory) -> Path:
    """``evalbars report`` on the judge's scores with the human labels of 30% of the questions,
    and two claims (a pair, and the best model by the bootstrap): its run directory."""
    output = tmp_path_factory.mktemp("judged") / "judged-report"
    claims = [word for claim in JUDGED_CLAIMS for word in ("--claim", claim)]
    labels = ["--labels", str(JUDGED / "labels.csv")]
    command = [sys.executable, "-m", "evalbars.cli", "report", str(JUDGED / "judged_scores.csv")]
    subprocess.run(
        [*command, *labels, *claims, "--output", str(output)],
        check=True,
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    return output


def test_the_api_tables_equal_the_judged_reports_files(judged_report):
    compared = assert_api_equals_workflow(judged_report, judged_report / "config.yaml")
    assert compared == set(API_TABLES.values())
    # the labels reach every table that reads them
    tables = judged_report / "results" / "tables"
    assert len(pd.read_parquet(tables / "judge_corrected.parquet")) == 18  # 3 models, 3 pairs
    assert "letters_corrected" in pd.read_parquet(tables / "leaderboard.parquet")
    claims = pd.read_parquet(tables / "claims.parquet")
    assert set(claims["claim"]) == set(JUDGED_CLAIMS) and "judge_corrected" in set(
        claims["reading"]
    )
