"""The Snakemake workflow: lint, formatting, config schema, dry run, and real end-to-end runs.

Expensive runs are shared: one default run (the README's configuration) serves every test
that only reads its outputs, and byte-identity is checked on a reduced configuration.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

import evalbars
from evalbars import smk
from evalbars.simulate.clustered import simulate_clustered
from evalbars.simulate.fwer import simulate_fwer
from evalbars.simulate.leaderboard import simulate_leaderboard

from .conftest import DEFAULT_SUBSAMPLE, REPO, mirror_location
from .test_fetch import ArchiveServer
from .test_pairwise import MODEL_COLUMNS, PAIR_COLUMNS

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

pytestmark = pytest.mark.workflow


def snakemake_env(mirror=None) -> dict:
    env = dict(os.environ)
    mirror = mirror or mirror_location()
    if mirror:
        env["EVALBARS_MIRROR"] = mirror
    return env


def run_snakemake(workdir: Path, *args, check=True, mirror=None):
    result = subprocess.run(
        [*SNAKEMAKE, "-d", str(workdir), *args],
        capture_output=True,
        text=True,
        env=snakemake_env(mirror),
        cwd=REPO,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def make_workdir(tmp_path: Path, **overrides) -> Path:
    workdir = tmp_path / "work"
    (workdir / "config").mkdir(parents=True)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(overrides)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    for extra in (REPO / "config").iterdir():
        if extra.is_dir():
            shutil.copytree(extra, workdir / "config" / extra.name)
    return workdir


def test_lint_is_clean_apart_from_software_deployment():
    # We ship one pip/uv environment instead of per-rule conda envs (conda channels are not
    # reachable where this is built), so only that lint is tolerated.
    result = subprocess.run([*SNAKEMAKE, "--lint"], capture_output=True, text=True, cwd=REPO)
    output = result.stdout + result.stderr
    lints = [line.strip() for line in output.splitlines() if line.startswith("    * ")]
    others = [
        lint for lint in lints if not lint.startswith("* Specify a conda environment or container")
    ]
    assert "Lints for" in output or result.returncode == 0, output[-2000:]
    assert others == [], output[-4000:]


def test_ruff_lint_and_format_are_clean():
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "."], capture_output=True, text=True, cwd=REPO
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_snakefmt_check():
    result = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_default_config_is_valid_and_fills_defaults():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(SCHEMA))
    minimal = {"models": ["Yi-6B"]}
    validate(minimal, str(SCHEMA))
    assert minimal["subsample"] == {"n": 1497, "seed": 2024}
    assert minimal["missing_prediction"] == "wrong"


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


def test_replication_runs_only_on_the_papers_data():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert smk.replication_applies(config)
    assert not smk.replication_applies(config | {"predictions": ["mine.csv"]})
    assert not smk.replication_applies(config | {"models": config["models"][:5]})
    assert not smk.replication_applies(config | {"missing_prediction": "exclude"})
    assert smk.replication_applies(config | {"models": list(reversed(config["models"]))})


def test_dry_run_plans_every_stage(tmp_path):
    workdir = make_workdir(tmp_path)
    result = run_snakemake(workdir, "-n", "--cores", "1")
    stats = dict(
        line.split()
        for line in result.stdout.splitlines()
        if re.fullmatch(r"\w+\s+\d+", line.strip())
    )
    assert stats["download"] == "6" and stats["items"] == "1" and stats["subsample"] == "1"


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default workflow, run once end to end, plus its HTML report."""
    workdir = make_workdir(tmp_path_factory.mktemp("default"))
    run_snakemake(workdir, "--cores", "2")
    run_snakemake(workdir, "--cores", "1", "--report", "results/report.html")
    return workdir


def test_default_run_builds_the_item_table_and_subsample(default_run):
    items = pd.read_parquet(default_run / "data" / "items.parquet")
    assert len(items) == 72_192
    questions = pd.read_csv(default_run / "data" / "subsample" / "questions.csv")
    assert len(questions) == DEFAULT_SUBSAMPLE["n"] and questions["category"].nunique() == 14
    assert questions["question_id"].is_monotonic_increasing
    allocation = pd.read_csv(default_run / "results" / "tables" / "subsample_allocation.csv")
    assert allocation["allocated"].sum() == 1497 and allocation["allocated"].min() >= 1
    manifest = json.loads((default_run / "data" / "subsample" / "manifest.json").read_text())
    assert manifest["questions"] == 1497 and manifest["seed"] == DEFAULT_SUBSAMPLE["seed"]
    missing = pd.read_csv(default_run / "results" / "tables" / "missing_predictions.csv")
    assert missing.set_index("model")["missing_predictions"]["Qwen1.5-7B-Chat"] == 2809


#: Column contracts of the analysis tables (issue: users script against them).
TABLE_COLUMNS = {
    "models": MODEL_COLUMNS,
    "pairwise": PAIR_COLUMNS,
    "omnibus": ["test", "statistic", "df1", "df2", "p"],
    "variance_components": ["model_spec", "component", "variance", "boundary"],
    "mixed_contrasts": [
        "model_spec",
        "model_a",
        "model_b",
        "estimate",
        "se",
        "z",
        "p",
        "p_bonferroni",
        "p_holm",
        "p_tukey",
    ],
    "claims": ["claim", "reading", "estimate_points", "p_adjusted", "verdict", "questions_needed"],
    "category_pairwise": ["category", "model_a", "model_b", "diff", "p_mcnemar", "p_holm", "p_bh"],
    "category_summary": ["model_a", "model_b", "wins_a", "significant_holm", "test", "p"],
    "plan": ["gap_points", "procedure", "questions_closed_form", "questions_simulated"],
}
FIGURES = [
    "replication",
    "ranks_forest",
    "ranks_range",
    "sim_leaderboard_one_run",
    "sim_leaderboard_leader_grid",
    "sim_leaderboard_difference_histogram",
    "sim_leaderboard_decision_rules",
    "sim_leaderboard_played_out",
    "sim_precision_halfwidth",
    "sim_questions_needed",
    "sim_fwer_methods",
    "sim_fwer_models",
    "sim_fwer_power",
    "sim_clustered",
    "claims",
    "category_pairwise",
]


def test_default_run_writes_every_stage(default_run):
    tables = default_run / "results" / "tables"
    for name, columns in TABLE_COLUMNS.items():
        frame = pd.read_csv(tables / f"{name}.csv")
        assert set(columns) <= set(frame.columns), (name, frame.columns.tolist())
        assert (tables / f"{name}.md").stat().st_size > 0 and (
            tables / f"{name}.tex"
        ).stat().st_size > 0
    assert len(pd.read_csv(tables / "pairwise.csv")) == 15
    assert len(pd.read_csv(tables / "mixed_contrasts.csv")) == 30
    naive = pd.read_csv(tables / "naive_vs_blocked.csv")
    assert len(naive) >= 11
    replication = pd.read_csv(tables / "replication.csv")
    assert (
        set(replication["policy"]) == {"wrong", "random_guess"}
        and (replication["n_seeds"] >= 200).all()
    )
    ranks = pd.read_csv(tables / "ranks.csv")
    assert set(ranks["reading"]) == {"unpaired", "paired"} and len(ranks) == 12
    simulations = default_run / "results" / "simulations"
    for name in ("leaderboard", "fwer", "clustered", "precision", "questions_needed"):
        assert len(pd.read_csv(simulations / f"{name}.csv")) > 0
    for name in FIGURES:
        for suffix in (".png", ".svg"):
            assert (default_run / "results" / "figures" / f"{name}{suffix}").stat().st_size > 1000


def test_report_is_self_contained_html(default_run):
    report = (default_run / "results" / "report.html").read_text()
    assert report.lstrip().lower().startswith("<!doctype html")
    for name in (
        "subsample_allocation.csv",
        "missing_predictions.csv",
        "naive_vs_blocked.csv",
        "replication.png",
        "ranks.csv",
        "leaderboard.csv",
        "sim_fwer_models.png",
        "claims.csv",
        "category_pairwise.png",
        "plan.csv",
    ):
        assert name in report, name


def test_rerun_is_a_no_op(default_run):
    result = run_snakemake(default_run, "-n", "--cores", "1")
    assert "Nothing to be done" in result.stdout + result.stderr


RULE_SCRIPT = re.compile(
    r'^rule (\w+):.*?^    script:\n        "\.\./scripts/(\w+)\.py"', re.M | re.S
)


def rule_scripts() -> dict:
    """``{rule: script}`` for every rule that runs a script."""
    return {
        rule: script
        for path in (REPO / "workflow" / "rules").glob("*.smk")
        for rule, script in RULE_SCRIPT.findall(path.read_text())
    }


def rule_descendants(workdir: Path) -> dict:
    """``{rule: rules downstream of it}`` from Snakemake's own rule graph."""
    dot = run_snakemake(workdir, "--rulegraph", "--cores", "1").stdout
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    children: dict = {}
    for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M):
        children.setdefault(names[a], set()).add(names[b])

    def below(rule):
        found = set(children.get(rule, ()))
        for child in list(found):
            found |= below(child)
        return found

    return {rule: below(rule) for rule in names.values()}


def planned_jobs(dry_run_output: str) -> dict:
    """``{rule: jobs}`` from the job-stats table of a dry run."""
    return {
        rule: int(count)
        for rule, count in re.findall(r"^(\w+)\s+(\d+)$", dry_run_output, re.M)
        if rule != "total"
    }


@pytest.mark.parametrize("module", ["omnibus.py", "intervals.py", "figures/ranks.py"])
def test_editing_a_module_reruns_exactly_the_jobs_that_import_it(default_run, module):
    path = Path(evalbars.__file__).parent / module
    users = {
        rule
        for rule, script in rule_scripts().items()
        if str(path) in smk.package_files(REPO / "workflow" / "scripts" / f"{script}.py")
    }
    assert users, f"no rule imports {module}"
    downstream = rule_descendants(default_run)
    original, stat = path.read_bytes(), path.stat()
    try:
        # Snakemake 9 reruns a job for a newer input only if its content changed (it compares
        # checksums), so edit the module rather than touch it.
        path.write_bytes(original + b"\n# an edit\n")
        result = run_snakemake(default_run, "-n", "--cores", "1")
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    planned = planned_jobs(result.stdout)
    expected = users | set().union(*(downstream[rule] for rule in users))
    assert set(planned) == expected, result.stdout[-3000:]
    # The edit itself is the reason given for the jobs whose code imports the module (those
    # downstream of another such job give the upstream job's output as their reason).
    first = users - set().union(*(downstream[rule] for rule in users))
    edited = result.stdout.count(f"Reason: Updated input files: {path}")
    assert edited == sum(planned[rule] for rule in first)
    assert "Nothing to be done" in run_snakemake(default_run, "-n", "--cores", "1").stdout


def reduced_workdir(tmp_path: Path) -> Path:
    """The default configuration made small: fewer seeds, draws, runs and grid rows."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    simulation = config["simulation"]
    simulation["leaderboard"]["runs"] = 300
    simulation["fwer"]["replications"] = 100
    simulation["clustered"]["replications"] = 100
    workdir = make_workdir(
        tmp_path,
        subsample={"n": 400, "seed": 2024},
        replication={"n_seeds": 40, "seed": 1, "policies": ["wrong", "random_guess"]},
        ranks={"draws": 500, "replicates": 500, "seed": 2024, "stratify": True},
        simulation=simulation,
    )
    grids = workdir / "config" / "simulation"
    for name, keep in (("leaderboard", [0, 1]), ("fwer", [0, 2, 15]), ("clustered", [0])):
        grid = pd.read_csv(grids / f"{name}.tsv", sep="\t")
        grid.iloc[keep].to_csv(grids / f"{name}.tsv", sep="\t", index=False)
    return workdir


def output_digests(workdir: Path) -> dict:
    folders = ["data/subsample", "results/tables", "results/simulations", "results/figures"]
    return {
        str(path.relative_to(workdir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders
        for path in sorted((workdir / folder).rglob("*"))
        if path.is_file()
    }


def test_interrupted_run_then_the_same_command_gives_byte_identical_outputs(tmp_path):
    # An uninterrupted run of the reduced configuration ...
    whole = reduced_workdir(tmp_path / "whole")
    run_snakemake(whole, "--cores", "2")
    # ... and the same configuration interrupted with Ctrl-C (SIGINT) while jobs run, then
    # started again with the same command: the default profile makes it redo the jobs the
    # interruption left incomplete, without extra flags.
    again = reduced_workdir(tmp_path / "again")
    process = subprocess.Popen(
        [*SNAKEMAKE, "-d", str(again), "--cores", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=snakemake_env(),
        cwd=REPO,
    )
    logs = again / "results" / "logs"
    deadline = time.monotonic() + 120
    while not (logs / "subsample").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # a few jobs under way
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=120)[0]
    assert process.returncode != 0, output[-2000:]
    assert "Nothing to be done" not in run_snakemake(again, "-n", "--cores", "1").stdout
    run_snakemake(again, "--cores", "2")
    digests = output_digests(again)
    assert len(digests) > 40
    assert digests == output_digests(whole)


FIXTURE_MODELS = ("Fixture-1B", "Fixture-2B")


@pytest.fixture
def fixture_archive_server(tmp_path):
    """A loopback HTTP server serving two MMLU-Pro-style archives, as a mirror base URL."""
    root = tmp_path / "served"
    root.mkdir()
    checksums = {}
    for shift, model in enumerate(FIXTURE_MODELS):
        records = [
            {
                "question_id": q,
                "category": "ab"[q % 2],
                "answer": "A",
                "pred": "AB"[(q + shift) % 3 == 0],
                "options": ["x", "y"],
            }
            for q in range(30)
        ]
        name = f"model_outputs_{model}_5shots.zip"
        with zipfile.ZipFile(root / name, "w") as zf:
            zf.writestr(name.replace(".zip", ".json"), json.dumps(records))
        checksums[name] = hashlib.sha256((root / name).read_bytes()).hexdigest()
    server = ArchiveServer(root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/eval_results", checksums
    server.shutdown()
    server.server_close()


def test_download_rule_verifies_checksums_from_a_loopback_server(tmp_path, fixture_archive_server):
    base, checksums = fixture_archive_server
    common = {"models": list(FIXTURE_MODELS), "subsample": {"n": "all", "seed": 1}}
    good = make_workdir(tmp_path / "good", checksums=checksums, **common)
    run_snakemake(good, "--cores", "1", "data_all", mirror=base)
    items = pd.read_parquet(good / "data" / "items.parquet")
    assert len(items) == 60 and items.groupby("model")["correct"].sum().tolist() == [20, 20]
    for name, digest in checksums.items():
        assert hashlib.sha256((good / "data" / "raw" / name).read_bytes()).hexdigest() == digest

    wrong = dict(checksums, **{"model_outputs_Fixture-1B_5shots.zip": "f" * 64})
    bad = make_workdir(tmp_path / "bad", checksums=wrong, **common)
    result = run_snakemake(bad, "--cores", "1", "data_all", check=False, mirror=base)
    assert result.returncode != 0
    digest = checksums["model_outputs_Fixture-1B_5shots.zip"]
    assert f"has sha256 {digest}, but the pinned checksum is {'f' * 64}" in result.stderr
    assert not (bad / "data" / "raw" / "model_outputs_Fixture-1B_5shots.zip").exists()


def test_bad_user_predictions_fail_cleanly(tmp_path):
    bad = tmp_path / "mine.csv"
    bad.write_text("model,question_id,correct,category\nM,1,1,x\nM,2,maybe,x\n")
    before = hashlib.sha256(bad.read_bytes()).hexdigest()
    workdir = make_workdir(tmp_path, models=[], predictions=[str(bad)], subsample={"n": "all"})
    result = run_snakemake(workdir, "--cores", "1", "data_all", check=False)
    assert result.returncode != 0
    assert "mine.csv, record 2: correct must be 0/1 or true/false, got 'maybe'" in result.stderr
    assert not (workdir / "data" / "items.parquet").exists()
    assert not (workdir / "results" / "tables" / "missing_predictions.csv").exists()
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == before


def test_user_predictions_run_through_every_analysis_stage(tmp_path):
    mine = tmp_path / "mine.csv"
    rows = [
        f"{m},q{q},{(q * 7 + len(m) + q // 9) % 3 == 0:d},{'ab'[q % 2]}"
        for m in ("M1", "M22", "M333")
        for q in range(60)
    ]
    mine.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    workdir = make_workdir(
        tmp_path, models=[], predictions=[str(mine)], subsample={"n": 40, "seed": 3}
    )
    run_snakemake(
        workdir, "--cores", "2", "data_all", "analysis_all", "ranks_all", "replication_all"
    )
    drawn = pd.read_parquet(workdir / "data" / "subsample" / "items.parquet")
    assert len(drawn) == 120
    assert drawn.groupby("category")["question_id"].nunique().to_dict() == {"a": 20, "b": 20}
    assert len(pd.read_csv(workdir / "results" / "tables" / "pairwise.csv")) == 3
    assert (workdir / "results" / "tables" / "naive_vs_blocked.md").exists()
    assert len(pd.read_csv(workdir / "results" / "tables" / "ranks.csv")) == 6
    # The replication check compares with the paper's six models, so it is skipped here.
    assert not (workdir / "results" / "tables" / "replication.csv").exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"subsample": {"n": 99999}},
            "subsample.n = 99999 does not fit: cannot draw 99999 questions from 60",
        ),
        ({"one_model": True}, "evalbars compares models, but the data hold 1: ['M1']"),
    ],
)
def test_impossible_designs_fail_with_one_line(tmp_path, override, message):
    mine = tmp_path / "mine.csv"
    models = ("M1",) if override.pop("one_model", False) else ("M1", "M2")
    rows = [f"{m},{q},{q % 2},{'ab'[q % 2]}" for m in models for q in range(60)]
    mine.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    workdir = make_workdir(tmp_path, models=[], predictions=[str(mine)], **override)
    result = run_snakemake(workdir, "--cores", "1", "data_all", check=False)
    assert result.returncode != 0
    assert f"evalbars: {message}" in result.stderr
    assert not (workdir / "data" / "subsample" / "items.parquet").exists()
