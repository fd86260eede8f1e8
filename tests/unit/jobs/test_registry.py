"""The job registry: every rule runs the one adapter (workflow/scripts/job.py), which finds the
rule's job by the rule's name (evalbars.jobs.registry), reads the inputs the job declares, passes
the rule's params by name and writes what it returns; a stage's jobs run one after another in one
process (jobs: per_stage); and a rule's code inputs follow its job's module.

The rules are read from workflow/rules/*.smk as text (the default tier parses no workflow); the
workflow tier runs them (tests/workflow/test_default_run.py, test_report_command.py).
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from evalbars.jobs.registry import JOBS
from evalbars.jobs.run import job_function, run_stage
from evalbars.pipeline.smk import job_code, package_files

from ...conftest import REPO
from ...helpers import restored_root_logger

PACKAGE = REPO / "src" / "evalbars"
ADAPTER = REPO / "workflow" / "scripts" / "job.py"
RULE = re.compile(r"^( *)rule (\w+):\n((?:\1 {4}.*\n|\n)*)", re.M)
#: The named inputs a rule gets from an input function (`unpack(...)`), by function.
UNPACKED = {
    "item_inputs": {"archives", "predictions", "labels"},
    "judge_corrected_inputs": {"judge_corrected"},
    "repeats_landing_inputs": {"passk_png", "run_variance"},
    "frontier_inputs": {"frontier"},
}


def rules() -> dict:
    """``{rule: {directive: text}}`` of every rule of workflow/rules/*.smk."""
    found = {}
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for match in RULE.finditer(path.read_text()):
            indent, name, body = match.groups()
            step = f"{indent}    "
            parts = re.split(rf"^{step}(\w+):[ \n]", body, flags=re.M)[1:]
            found[name] = dict(zip(parts[::2], parts[1::2], strict=True))
    return found


def names(text: str) -> set:
    """The keyword names a directive lists (its first level of ``name=...`` lines)."""
    indent = min(len(line) - len(line.lstrip()) for line in text.splitlines() if line.strip())
    listed = set(re.findall(rf"^ {{{indent}}}(\w+)=", text, re.M))
    for function, unpacked in UNPACKED.items():
        if f"unpack({function})" in text:
            listed |= unpacked
    return listed


RULES = rules()
JOB_RULES = {
    name: rule for name, rule in RULES.items() if "script" in rule and not name.startswith("stage_")
}


def test_every_rule_runs_the_adapter_and_is_in_the_registry():
    texts = [path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk")]
    assert len(RULES) == sum(len(re.findall(r"^ *rule \w+:", text, re.M)) for text in texts)
    assert {rule["script"].strip() for rule in RULES.values() if "script" in rule} == {
        '"../scripts/job.py"'
    }
    assert [p.name for p in (REPO / "workflow" / "scripts").iterdir()] == ["job.py"]
    assert set(JOB_RULES) == set(JOBS)
    for name, rule in JOB_RULES.items():
        # each rule's code inputs are its own job's
        assert f'code=package_code("{name}")' in rule["input"], name


@pytest.mark.parametrize("rule", sorted(JOBS))
def test_each_job_is_named_after_its_rule_and_takes_the_rules_params_by_name(rule):
    job = job_function(rule)
    assert (job.__name__, job.__module__) == (rule, JOBS[rule])
    # the jobs of a stage are in its module; those that draw, in the figures' module of it
    stage = JOBS[rule].removeprefix("evalbars.jobs.").removeprefix("figures.")
    assert stage in {"download", "data", "analysis", "replication", "ranks", "simulate"} | {
        "claims",
        "repeats",
        "leaderboard",
        "report",
        "battles",
    }
    signature = inspect.signature(job)
    accepts = {
        name
        for name, p in signature.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    takes_more = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    needed = {
        name
        for name, p in signature.parameters.items()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    params = names(JOB_RULES[rule]["params"]) if "params" in JOB_RULES[rule] else set()
    inputs = names(JOB_RULES[rule]["input"])
    declared = set(getattr(job, "reads", {}))
    # the inputs the job reads are the rule's, and are not its params
    assert declared <= inputs and not declared & params
    # every param reaches the job by its name; nothing the job needs is missing
    assert params <= accepts or takes_more, params - accepts
    assert needed <= params | declared, needed - params - declared
    assert declared <= accepts


def test_a_job_imports_no_figure_unless_it_draws():
    for module in set(JOBS.values()):
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        figures = [f for f in package_files(path, PACKAGE) if "/render/figures/" in f]
        assert bool(figures) == (".figures." in module), module


def test_a_rules_code_is_its_jobs_module_and_what_it_imports():
    def code(rule):
        return {str(Path(f).relative_to(PACKAGE)) for f in job_code(rule, ADAPTER, PACKAGE)}

    claims_table = code("claims_table")
    assert {"jobs/claims.py", "jobs/run.py", "readings/claims/verdicts.py"} <= claims_table
    assert not {f for f in claims_table if f.startswith("render/figures/")}
    # the registry is no job's code: a new rule in it reruns nothing
    assert "jobs/registry.py" not in claims_table
    figure = code("claims_figure")
    assert {"jobs/figures/claims.py", "render/figures/claims.py"} <= figure
    assert "render/figures/ranks.py" not in figure and "jobs/claims.py" not in figure
    # an edit of the readers never fetches an archive again
    assert code("download") == {
        "__init__.py",
        "errors.py",
        "data/__init__.py",
        "data/fetch.py",
        "jobs/__init__.py",
        "jobs/download.py",
        "jobs/run.py",
    }
    assert code("sim_fwer") == code("sim_fwer_table")  # one module: one set of code


@pytest.fixture
def item_table(tmp_path):
    path = tmp_path / "items.parquet"
    pd.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "question_id": ["q1", "q2", "q3", "q4"] * 2,
            "category": ["math", "math", "law", "law"] * 2,
            "correct": [1, 1, 1, 0, 1, 0, 0, 0],
        }
    ).to_parquet(path)
    return path


def member(rule, tmp_path, input, output, params) -> dict:
    (tmp_path / "logs").mkdir(exist_ok=True)  # Snakemake makes a job's log folder
    return {
        "rule": rule,
        "input": {n: p if isinstance(p, list) else str(p) for n, p in input.items()},
        "output": {name: str(tmp_path / file) for name, file in output.items()},
        "params": params,
        "log": [str(tmp_path / "logs" / f"{rule}.log")],
    }


def test_a_stage_runs_its_jobs_in_one_process_each_with_its_own_log(tmp_path, item_table):
    precision = {
        "questions": [100, 400],
        "gaps": [0.02],
        "rate": 0.5,
        "sds": 2.0,
        "disagreements": [0.3],
    }
    members = [
        member(
            "claims_check",
            tmp_path,
            {"item_table": item_table, "code": item_table},
            {"checked": "claims/claims.json"},
            {"claims": ["a > b"], "notes": ["a note"]},
        ),
        member(
            "sim_precision",
            tmp_path,
            {"item_table": []},  # an optional input the run does not list
            {
                "precision_parquet": "sim/precision.parquet",
                "precision_csv": "sim/precision.csv",
                "questions_needed_parquet": "sim/questions_needed.parquet",
                "questions_needed_csv": "sim/questions_needed.csv",
            },
            {"precision": precision, "level": 0.95},
        ),
    ]
    with restored_root_logger():
        run_stage(members, tmp_path / "logs" / "stage.log")
        # each job's log handler is gone again: what logs now goes to the stage's log
        files = [h.baseFilename for h in logging.getLogger().handlers if hasattr(h, "baseFilename")]
        assert files == [str(tmp_path / "logs" / "stage.log")]
    checked = json.loads((tmp_path / "claims" / "claims.json").read_text())
    assert checked == {"claims": ["a > b"], "notes": ["a note"], "example": "a > b"}
    questions = pd.read_csv(tmp_path / "sim" / "precision.csv")["questions"]
    assert sorted(questions.unique()) == [100, 400]
    stage = (tmp_path / "logs" / "stage.log").read_text()
    assert "claims_check took" in stage and "sim_precision took" in stage
    # each job's lines go to its own log, not to the stage's or the other's
    assert "simulated" not in (tmp_path / "logs" / "claims_check.log").read_text()


def test_a_failing_job_ends_its_stage_with_one_line_in_its_own_log(tmp_path, item_table, capsys):
    members = [
        member(
            "claims_check",
            tmp_path,
            {"item_table": item_table},
            {"checked": "claims.json"},
            {"claims": ["a > c"], "notes": []},
        )
    ]
    with restored_root_logger(), pytest.raises(SystemExit) as stop:
        run_stage(members, tmp_path / "logs" / "stage.log")
    assert stop.value.code == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("evalbars: ") and "'c'" in line
    assert line.removeprefix("evalbars: ") in (tmp_path / "logs" / "claims_check.log").read_text()
    assert not (tmp_path / "claims.json").exists()
