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
from evalbars import binary, smk
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
    if overrides.get("models") == [] and "claims" not in overrides:
        # Other data than the paper's: the shipped claims name the paper's models.
        overrides["claims"] = []
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
    "binary_models": binary.ROBUSTNESS_COLUMNS,
    "binary_fits": ["method", "variance_question", "variance_category", "loglik", "alpha"],
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
    "ranks_overview",
    "binary_models",
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
    assert len(naive) == 15
    # the logistic readings: the linear model's pairs in its order, and their counts in
    # naive_vs_blocked equal to the robustness table's verdicts
    robustness = pd.read_csv(tables / "binary_models.csv")
    nested = pd.read_csv(tables / "mixed_contrasts.csv").query("model_spec == 'category_question'")
    assert robustness[["model_a", "model_b"]].values.tolist() == (
        nested[["model_a", "model_b"]].values.tolist()
    )
    counts = naive[naive["quantity"] == "significant_pairs"].set_index("procedure")["value"]
    for reading in ("glmm", "gee"):
        separated = (robustness[f"{reading}_verdict"] != "not separated").sum()
        assert counts[f"{reading}_holm"] == separated
    assert (
        counts["lmm_category_question_holm"] == (robustness["lmm_verdict"] != "not separated").sum()
    )
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
        "question_coverage.csv",
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
    # A second run started meanwhile in the same directory is told about the lock (not about
    # incomplete files) and changes nothing.
    second = run_snakemake(again, "--cores", "1", check=False)
    assert second.returncode != 0
    assert "Directory cannot be locked" in second.stdout + second.stderr
    assert "incomplete" not in (second.stdout + second.stderr).lower()
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
    common = {"models": list(FIXTURE_MODELS), "subsample": {"n": "all", "seed": 1}, "claims": []}
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


def mmlu_style_zip(path: Path, model: str, questions: int = 40) -> Path:
    records = [
        {"question_id": q, "category": "ab"[q % 2], "answer": "A", "pred": "AB"[q % 3 == 0]}
        for q in range(questions)
    ]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{model}.json", json.dumps(records))
    return path


def long_table(path: Path, models, ids=range(40), categories="ab") -> Path:
    rows = [
        f"{m},{q},{(k * 7 + i) % 3 == 0:d},{categories[k % len(categories)]}"
        for i, m in enumerate(models)
        for k, q in enumerate(ids)
    ]
    path.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    return path


def _bad_correct(tmp_path):
    bad = tmp_path / "mine.csv"
    bad.write_text("model,question_id,correct,category\nM,1,1,x\nM,2,maybe,x\n")
    message = f"{bad}, record 2: correct must be a score in [0, 1] (0/1, true/false or a fraction)"
    return [str(bad)], {}, f"{message}, got 'maybe'"


def _truncated_zip(tmp_path):
    whole = mmlu_style_zip(tmp_path / "whole.zip", "M1").read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(whole[: len(whole) // 2])
    (tmp_path / "whole.zip").unlink()
    other = long_table(tmp_path / "other.csv", ["M2"])
    return (
        [{"path": str(cut), "model": "M1"}, str(other)],
        {},
        f"{cut}: the zip archive is damaged (truncated or corrupt; download it again): "
        "File is not a zip file",
    )


def _ids_with_leading_zeros(tmp_path):
    padded = long_table(tmp_path / "padded.csv", ["M1"], ids=[f"{q:03d}" for q in range(40)])
    plain = long_table(tmp_path / "plain.csv", ["M2"])
    return (
        [str(padded), str(plain)],
        {},
        "80 of 80 questions (100.0%) are in some prediction sources but not all (M1 (padded.csv) "
        "lacks 40, M2 (plain.csv) lacks 40), so the paired analyses would leave them out (the ids "
        "'000' in padded.csv and '0' in plain.csv differ only by leading zeros); check that "
        "question ids are written alike in every file, or raise `max_unshared_share` (now 0.01) "
        "to accept the loss",
    )


def _one_category_model(tmp_path):
    both = long_table(tmp_path / "both.csv", ["M1", "M2"])
    narrow = long_table(tmp_path / "narrow.csv", ["M3"], ids=range(0, 40, 2), categories="a")
    return (
        [str(both), str(narrow)],
        {"max_unshared_share": 1.0},
        "the 20 questions every model answered are all in category 'a' (M3 answered no question "
        "outside it); the analysis needs shared questions in at least two categories: give every "
        "model questions in two or more of the same categories, or a `category` column",
    )


def _category_conflict(tmp_path):
    first = long_table(tmp_path / "first.csv", ["M1"])
    second = long_table(tmp_path / "second.csv", ["M2"], categories="ba")
    return (
        [str(first), str(second)],
        {},
        f"{second}, record 1: question 0 has category 'b' for model 'M2' but 'a' for model 'M1' "
        f"({first}); 40 question(s) conflict in all",
    )


def _one_model(tmp_path):
    mine = long_table(tmp_path / "mine.csv", ["M1"])
    return (
        [str(mine)],
        {},
        "evalbars compares models, but the data hold 1: ['M1']; list at least two in `models:` "
        "or `predictions:`",
    )


def _subsample_too_large(tmp_path):
    mine = long_table(tmp_path / "mine.csv", ["M1", "M2"])
    return (
        [str(mine)],
        {"subsample": {"n": 99999}},
        "subsample.n = 99999 does not fit: cannot draw 99999 questions from 40 eligible questions "
        "in 2 categories (need 2 <= n <= 40); set `subsample: {n: all}` to keep every question",
    )


def _subsample_one_per_category(tmp_path):
    mine = long_table(tmp_path / "mine.csv", ["M1", "M2"])
    return (
        [str(mine)],
        {"subsample": {"n": 2}},
        "subsample.n = 2 draws one question from each of the 2 categories, so the nested mixed "
        "model cannot tell question from category variance; set `subsample: {n: ...}` above 2",
    )


BAD_INPUTS = {
    case.__name__.lstrip("_"): case
    for case in (
        _bad_correct,
        _truncated_zip,
        _ids_with_leading_zeros,
        _one_category_model,
        _category_conflict,
        _one_model,
        _subsample_too_large,
        _subsample_one_per_category,
    )
}


def files_of(folder: Path) -> list:
    """Files under ``folder`` (none when it does not exist)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_stops_before_anything_is_written(tmp_path, case):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    predictions, overrides, message = BAD_INPUTS[case](inputs)
    before = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in inputs.iterdir()}
    config = {"models": [], "predictions": predictions, "subsample": {"n": "all"}} | overrides
    workdir = make_workdir(tmp_path, **config)
    # The analysis target: a design problem must stop the first job, not a late one.
    result = run_snakemake(workdir, "--cores", "1", "analysis_all", check=False)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("evalbars: ")]
    assert errors == [f"evalbars: {message}"], result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert files_of(workdir / "data") == []
    assert files_of(workdir / "results" / "tables") == []
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in inputs.iterdir()} == before


def test_user_predictions_run_through_every_analysis_stage(tmp_path):
    mine = tmp_path / "mine.csv"
    rows = [
        f"{m},q{q},{(q * 7 + len(m) + q // 9) % 3 == 0:d},{'ab'[q % 2]}"
        for m in ("M1", "M22", "M333")
        for q in range(60)
    ]
    # Two scores missing (an empty cell, a NaN), and one question M333 does not have: all three
    # must be reported on the console and in the tables, and kept out of nothing silently.
    rows[3] = rows[3].replace(",1,", ",,").replace(",0,", ",,")
    rows[4] = rows[4].replace(",1,", ",NaN,").replace(",0,", ",NaN,")
    del rows[-1]
    mine.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    workdir = make_workdir(
        tmp_path,
        models=[],
        predictions=[str(mine)],
        subsample={"n": 40, "seed": 3},
        max_unshared_share=0.02,
    )
    result = run_snakemake(
        workdir, "--cores", "2", "data_all", "analysis_all", "ranks_all", "replication_all"
    )
    console = [line for line in result.stderr.splitlines() if line.startswith("evalbars: ")]
    assert console == [
        "evalbars: M1: 2 missing predictions (correct empty or NaN (no score)) scored as 0 "
        "(missing_prediction: wrong)",
        "evalbars: M333: its source mine.csv lacks 1 of the 60 questions the sources hold",
        "evalbars: the paired analyses use the 59 questions every model answered; 1 of 60 leave "
        "that set (per model: question_coverage.csv)",
        "evalbars: subsample: 1 question(s) not answered by every model are not eligible",
    ], result.stderr[-2000:]
    missing = pd.read_csv(workdir / "results" / "tables" / "missing_predictions.csv")
    assert missing.set_index("model").loc["M1", ["missing_predictions", "scored_as"]].tolist() == [
        2,
        "0 (missing_prediction: wrong)",
    ]
    coverage = pd.read_csv(workdir / "results" / "tables" / "question_coverage.csv")
    assert coverage.set_index("model")["lacks_in_source"].to_dict() == {
        "M1": 0,
        "M22": 0,
        "M333": 1,
    }
    assert (coverage["shared"] == 59).all() and (coverage["questions"] == 60).all()
    drawn = pd.read_parquet(workdir / "data" / "subsample" / "items.parquet")
    assert len(drawn) == 120
    assert drawn.groupby("category")["question_id"].nunique().to_dict() == {"a": 20, "b": 20}
    assert len(pd.read_csv(workdir / "results" / "tables" / "pairwise.csv")) == 3
    assert (workdir / "results" / "tables" / "naive_vs_blocked.md").exists()
    assert len(pd.read_csv(workdir / "results" / "tables" / "ranks.csv")) == 6
    # The replication check compares with the paper's six models, so it is skipped here.
    assert not (workdir / "results" / "tables" / "replication.csv").exists()


def test_inspect_example_with_epochs_and_unequal_coverage(tmp_path):
    # The README's Inspect example: fake-mid answered 10 of the 20 questions, 3 epochs each;
    # question_set: all keeps every question, and each table says which it used.
    workdir = tmp_path / "results" / "examples" / "inspect"
    workdir.mkdir(parents=True)
    shutil.copytree(REPO / "tests", tmp_path / "tests")  # the example's relative paths
    config = REPO / "config" / "examples" / "inspect.yaml"
    subprocess.run(
        [
            *SNAKEMAKE,
            "analysis_all",
            "ranks_all",
            "-d",
            str(workdir),
            "--cores",
            "2",
            "--configfile",
            str(config),
        ],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    tables = workdir / "results" / "tables"
    models = pd.read_csv(tables / "models.csv").set_index("model")
    assert models.loc["mockllm/fake-mid", ["n", "samples", "correct"]].tolist() == [10, 30, 15]
    assert models.loc["mockllm/fake-strong", ["n", "samples"]].tolist() == [20, 20]
    pairs = pd.read_csv(tables / "pairwise.csv").set_index(["model_a", "model_b"])
    assert pairs.loc[("mockllm/fake-strong", "mockllm/fake-weak"), "n"] == 20
    assert pairs.loc[("mockllm/fake-strong", "mockllm/fake-mid"), "n"] == 10
    assert (pd.read_csv(tables / "omnibus.csv")["n_questions"] == 10).all()
    variance = pd.read_csv(tables / "sampling_variance.csv").set_index("model")
    assert variance.loc["mockllm/fake-mid", "mean_epochs"] == 3.0
    assert variance.loc["mockllm/fake-mid", "var_within"] > 0
    ranks = pd.read_csv(tables / "ranks.csv")
    assert set(ranks["reading"]) == {"unpaired", "paired"}
