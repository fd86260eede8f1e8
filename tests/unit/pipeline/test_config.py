"""The workflow's configuration: the shipped config and its schema, the defaults the schema
fills in, one-line errors for keys that do not exist, values the schema does not allow and keys
given twice, planning gaps given as proportions, and the simulation grids.

Each check runs here in this process, as the Snakefile runs it before a run; the same lines at a
dry run of the workflow: tests/workflow/test_config_dry_runs.py.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from evalbars import defaults
from evalbars.errors import ConfigError, InputError
from evalbars.pipeline import smk
from evalbars.readings import planner
from evalbars.studies.clustered import simulate_clustered
from evalbars.studies.fwer import simulate_fwer
from evalbars.studies.leaderboard import simulate_leaderboard

from ...conftest import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# --- The shipped configuration and its schema ----------------------------------------------------


def test_default_config_is_valid_and_fills_defaults():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(SCHEMA))
    minimal = {"models": ["Yi-6B"]}
    validate(minimal, str(SCHEMA))
    assert minimal["subsample"] == {"n": "auto", "seed": 2024}
    assert minimal["missing_prediction"] == "wrong"


def test_the_papers_settings_apply_to_the_papers_data_only():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    paper = smk.run_choices(config)
    assert paper.subsample_size == 1497 and len(paper.claims) == 3 and paper.notes == []
    # Only `predictions` and `models` changed, as the README says: every question, no claims.
    own = smk.run_choices(config | {"models": [], "predictions": ["logs/"]})
    assert own.subsample_size == "all" and own.claims == []
    assert [note.split(":")[0] for note in own.notes] == [
        "Every question is used",
        "No claims tested",
    ]
    # Anything the user wrote is used as given.
    mine = config | {"models": [], "predictions": ["logs/"], "subsample": {"n": 50}}
    mine["claims"] = ["a > b"]
    assert smk.run_choices(mine) == smk.RunChoices(subsample_size=50, claims=["a > b"], notes=[])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"missing_prediction": "drop"}, "'drop' is not one of"),
        ({"subsample": {"n": 0}}, "subsample"),
        ({"alpha": 1.5}, "alpha"),
        ({"modles": ["Yi-6B"]}, "Additional properties are not allowed"),
    ],
)
def test_schema_rejects_bad_config(bad, message):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text()) | bad
    with pytest.raises(Exception, match=message):
        validate(config, str(SCHEMA))


@pytest.mark.parametrize(
    ("study", "function"),
    [
        ("leaderboard", simulate_leaderboard),
        ("fwer", simulate_fwer),
        ("clustered", simulate_clustered),
    ],
)
def test_shipped_grids_match_their_schema_and_simulation(study, function):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    grid = pd.read_csv(REPO / config["simulation"][study]["grid"], sep="\t")
    validate(grid, str(SCHEMA.with_name(f"grid_{study}.schema.yaml")))
    for row in grid.to_dict("records"):
        inspect.signature(function).bind_partial(**row)  # every column is a parameter
    with pytest.raises(Exception, match="spred"):
        validate(
            grid.rename(columns={grid.columns[-1]: "spred"}),
            str(SCHEMA.with_name(f"grid_{study}.schema.yaml")),
        )


def test_unknown_model_is_a_clear_config_error():
    with pytest.raises(
        smk.ConfigError,
        match=r"no pinned checksum for Nonexistent-7B \(model_outputs_Nonexistent-7B_5shots\.zip\)",
    ):
        smk.archives({"models": ["Nonexistent-7B"]})
    with pytest.raises(smk.ConfigError, match="nothing to analyse"):
        smk.prediction_sources({"models": [], "predictions": []})


def test_a_sources_options_in_any_order_are_the_same_params():
    # the item table's params: Snakemake compares them in order (a rerun of every job if not)
    given = [
        {"runs": "newest", "path": Path("logs"), "id_field": "id"},
        {"id_field": "id", "path": "logs", "runs": "newest"},
    ]
    listed = [list(smk.prediction_sources({"predictions": [e]})[0].items()) for e in given]
    assert listed[0] == listed[1] == [("path", "logs"), ("id_field", "id"), ("runs", "newest")]
    assert smk.prediction_sources({"predictions": ["a.csv"]}) == [{"path": "a.csv"}]


def test_replication_runs_only_on_the_papers_data():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert smk.replication_applies(config)
    assert not smk.replication_applies(config | {"predictions": ["mine.csv"]})
    assert not smk.replication_applies(config | {"models": config["models"][:5]})
    assert not smk.replication_applies(config | {"missing_prediction": "exclude"})
    assert smk.replication_applies(config | {"models": list(reversed(config["models"]))})


def test_the_committed_test_config_is_the_default_with_only_its_sizes_reduced():
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    reduced = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
    sizes = {
        ("subsample", "n"): 400,
        ("replication", "n_seeds"): 40,
        ("ranks", "draws"): 500,
        ("ranks", "replicates"): 500,
        ("simulation", "leaderboard", "runs"): 300,
        ("simulation", "fwer", "replications"): 100,
        ("simulation", "clustered", "replications"): 100,
    }
    for path, value in sizes.items():
        *parents, key = path
        node = reduced
        for parent in parents:
            node = node[parent]
        assert node.pop(key) == value, path
        node = default
        for parent in parents:
            node = node[parent]
        node.pop(key)
    assert reduced == default  # every other key as shipped: a renamed key cannot drift
    for study in ("leaderboard", "fwer", "clustered"):
        shipped = pd.read_csv(REPO / "config" / "simulation" / f"{study}.tsv", sep="\t")
        kept = pd.read_csv(REPO / ".test" / "config" / "simulation" / f"{study}.tsv", sep="\t")
        assert list(kept.columns) == list(shipped.columns)
        assert kept.merge(shipped, how="left", indicator=True)["_merge"].eq("both").all()


# --- Config keys that do not exist, values the schema does not allow -----------------------------


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
    validate(theirs, schema=str(SCHEMA))
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
            "'newest', 'all'",
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


def test_a_model_listed_twice_in_the_config_says_so():
    config = {"models": ["Yi-6B", "Yi-6B"]}
    with pytest.raises(ConfigError) as raised:
        smk.validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    assert str(raised.value) == 'config key `models`: "Yi-6B" is listed twice'


def test_the_schema_states_the_defaults_and_bounds_of_evalbars_defaults():
    # evalbars.defaults is where the command line and the API take them from; the schema repeats
    # them so that a run's configuration states them.
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]

    def key(path: str) -> dict:
        node = {"properties": schema}
        for part in path.split("."):
            node = node["properties"][part]
        return node

    stated = {
        "alpha": defaults.ALPHA,
        "level": defaults.LEVEL,
        "claims_options.power": defaults.POWER,
        "leaderboard.power": defaults.POWER,
        "ranks.seed": defaults.SEED,
        "leaderboard.seed": defaults.SEED,
        "ranks.draws": defaults.DRAWS,
        "ranks.replicates": defaults.DRAWS,
        "leaderboard.splits": defaults.SPLITS,
        "leaderboard.top_k": defaults.TOP_K,
        "missing_prediction_seed": defaults.MISSING_SEED,
    }
    assert {path: key(path)["default"] for path in stated} == stated
    for path in ("ranks.draws", "ranks.replicates"):
        assert (key(path)["minimum"], key(path)["maximum"]) == (
            defaults.MIN_DRAWS,
            defaults.MAX_DRAWS,
        )
    assert key("leaderboard.splits")["maximum"] == defaults.MAX_SPLITS
    assert set(defaults.__all__) == {name for name in vars(defaults) if name.isupper()}


# --- A key given twice in a YAML config (the loader keeps the last without a word) ---------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "alpha: 0.05\nmodels: []\nalpha: 0.01\n",
            "line 3: key `alpha` is given twice (first on line 1)",
        ),
        (
            "subsample:\n  n: 400\n  seed: 1\n  n: all\n",
            "line 4: key `subsample.n` is given twice (first on line 2)",
        ),
        (
            "predictions:\n  - path: a.csv\n    format: table\n    path: b.csv\n",
            "line 4: key `predictions[0].path` is given twice (first on line 2)",
        ),
        # the first repeat in the file, wherever the walk meets it
        ("a:\n  b: 1\n  b: 2\nc: 1\nc: 2\n", "line 3: key `a.b` is given twice (first on line 2)"),
        ('{"alpha": 0.05, "models": [], "alpha": 0.01}', "line 1: key `alpha` is given twice"),
    ],
)
def test_a_key_given_twice_in_a_config_file_is_refused_naming_file_line_and_key(
    tmp_path, text, line
):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        smk.check_unique_keys(path)
    assert str(raised.value).startswith(f"{path}, {line}")
    assert str(raised.value).endswith("; YAML would keep only the last value: remove one")
    assert yaml.safe_load(text) is not None  # the loader itself accepts every one of them


def test_keys_that_repeat_only_across_mappings_or_through_a_merge_are_kept(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        "a:\n  n: 1\nb:\n  n: 2\nbase: &base\n  seed: 1\nc:\n  <<: *base\n  seed: 2\n"
        "d:\n  - n: 1\n  - n: 2\n"
    )
    assert smk.check_unique_keys(path) is None


def test_validate_config_checks_its_files_before_the_schema(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("alpha: 0.05\nalpha: 7\n")  # as loaded, alpha 7 would fail the schema
    with pytest.raises(ConfigError, match=r"line 2: key `alpha` is given twice"):
        smk.validate_config(yaml.safe_load(path.read_text()), SCHEMA, config_files=[path])


# --- Planning gaps given as proportions ----------------------------------------------------------


def _config(**claims_options) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["claims_options"].update(claims_options)
    return config


def test_plan_gaps_given_as_proportions_are_refused_with_the_points_meant():
    with pytest.raises(ConfigError) as raised:
        smk.validate_config(_config(plan_gaps=[0.01, 0.02, 0.05]), SCHEMA)
    assert str(raised.value) == (
        "config key `claims_options.plan_gaps`: 0.01 is 0.01 points; did you mean 1 point? "
        "(gaps are accuracy points; set `claims_options.small_gaps: true` to plan for a gap "
        "under 1 point)"
    )
    # the same check as `evalbars plan --gap` (one home)
    with pytest.raises(InputError, match=r"is 0.02 points; did you mean 2 points\? \(the gap"):
        planner.check_plan_request(6, 0.02, None, 0.25)


def test_plan_gaps_under_one_point_are_planned_when_asked_for():
    config = smk.validate_config(_config(plan_gaps=[0.5, 1], small_gaps=True), SCHEMA)
    assert config["claims_options"]["plan_gaps"] == [0.5, 1]
    shipped = smk.validate_config(_config(), SCHEMA)["claims_options"]
    assert shipped["plan_gaps"] == [1, 2, 5] and shipped["small_gaps"] is False
    assert "small_gaps" in smk.validate_config({}, SCHEMA)["claims_options"]


# --- Simulation grids that are missing or misspelled ---------------------------------------------


def test_a_simulation_grid_that_is_missing_or_misspelled_is_one_line(tmp_path):
    schema = REPO / "workflow" / "schemas" / "grid_leaderboard.schema.yaml"
    with pytest.raises(ConfigError) as raised:
        smk.check_grid(
            tmp_path / "fwr.tsv", schema, "simulation.fwer.grid", configured="config/fwr.tsv"
        )
    assert str(raised.value) == (
        "config key `simulation.fwer.grid`: grid file 'config/fwr.tsv' does not exist (looked in "
        "the run directory and beside the Snakefile)"
    )
    grid = tmp_path / "leaderboard.tsv"
    shipped = (REPO / "config" / "simulation" / "leaderboard.tsv").read_text()
    grid.write_text(shipped.replace("spread", "spred", 1))
    with pytest.raises(ConfigError) as raised:
        smk.check_grid(grid, schema, "simulation.leaderboard.grid")
    assert str(raised.value) == (
        f"{grid}, row 1: config key `spred` does not exist; did you mean `spread`?"
    )
    # the shipped grid passes, every row
    rows = smk.check_grid(REPO / "config" / "simulation" / "leaderboard.tsv", schema, "grid")
    assert len(rows) == len(shipped.splitlines()) - 1
