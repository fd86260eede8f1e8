"""A dry run of the workflow with a bad config ends in the one line the config checks give
(tests/unit/pipeline/test_config.py), and writes nothing."""

from __future__ import annotations

import pytest
import yaml

from ..unit.pipeline.test_config import _change
from ..workflow_runs import make_workdir, run_snakemake

pytestmark = pytest.mark.workflow


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


@pytest.mark.workflow
def test_a_dry_run_with_a_key_given_twice_in_a_configfile_ends_in_that_line(tmp_path):
    workdir = make_workdir(tmp_path)
    extra = tmp_path / "mine.yaml"
    extra.write_text("claims: []\nsubsample:\n  n: 50\n  n: 40\n")
    before = extra.read_bytes()
    result = run_snakemake(workdir, "-n", "--configfile", str(extra), check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"evalbars: {extra}, line 4: key `subsample.n` is given twice (first on line 3); YAML "
        "would keep only the last value: remove one"
    )
    # the Snakefile's own config file too
    shipped = workdir / "config" / "config.yaml"
    shipped.write_text(shipped.read_text() + "alpha: 0.01\n")
    first = 1 + next(
        i for i, text in enumerate(shipped.read_text().splitlines()) if text.startswith("alpha:")
    )
    count = len(shipped.read_text().splitlines())
    result = run_snakemake(workdir, "-n", check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"evalbars: config/config.yaml, line {count}: key `alpha` is given twice (first on line "
        f"{first}); YAML would keep only the last value: remove one"
    )
    assert extra.read_bytes() == before
    assert not (workdir / "results").exists() and not (workdir / "data").exists()


@pytest.mark.workflow
def test_a_dry_run_with_planning_gaps_given_as_proportions_ends_in_that_line(tmp_path):
    workdir = make_workdir(tmp_path, claims_options={"plan_gaps": [0.01, 0.02]})
    result = run_snakemake(workdir, "-n", check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "evalbars: config key `claims_options.plan_gaps`: 0.01 is 0.01 points; did you mean 1 "
        "point? (gaps are accuracy points; set `claims_options.small_gaps: true` to plan for a "
        "gap under 1 point)"
    )
    assert not (workdir / "results").exists() and not (workdir / "data").exists()
    small = make_workdir(
        tmp_path / "small", claims_options={"plan_gaps": [0.5], "small_gaps": True}
    )
    assert run_snakemake(small, "-n", "plan_table", check=False).returncode == 0
