"""Write tests/data/corpora/helm: crfm-helm 0.5.16 runs on local MMLU-style CSVs.

Run with the Python of a throwaway virtualenv holding crfm-helm==0.5.16 (see ../README.md):

    /work/venvs/helm/bin/python tests/reference/corpora/helm/make_helm_runs.py

It works in a scratch folder outside the checkout, writes the CSVs HELM's MMLUScenario reads
(so HELM's download step finds its folder present and does nothing), registers three seeded
models (synth/model-a, -b, -c; SeededMCQClient in seeded_helm_client.py) in prod_env, runs
HELM's stock run spec ``mmlu:subject=<s>,method=multiple_choice_joint`` with the expanders
``num_train_trials=3`` for 3 models x 2 subjects (and ``data_augmentation=lower`` for model-a), HELM's own
``simple1`` (no correctness metric), and a run that fails mid-way (``simple_classification``
with ``num_outputs=3``: HELM's classification metric raises, leaving an empty run folder).
It keeps run_spec.json, scenario.json, per_instance_stats.json and stats.json of each run
(scenario_state.json is left out: 0.4 MB per run, prompts only; nothing read here needs it),
re-serialised without HELM's indentation (the parsed JSON is unchanged).
"""

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
OUT = ROOT / "tests" / "data" / "corpora" / "helm"
WORK = Path("/tmp/evalbars-helm-work")
SUITE = "evalbars"
PLAIN_SUITE = "evalbars-plain"
MODELS = {"synth/model-a": 0.75, "synth/model-b": 0.55, "synth/model-c": 0.35}
SUBJECTS = {"addition": "plus", "multiplication": "times"}
SPLITS = {"dev": 5, "val": 2, "test": 8}
KEEP = ("run_spec.json", "scenario.json", "per_instance_stats.json", "stats.json")


def unit(*parts) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def write_csvs(data: Path) -> None:
    for subject, word in SUBJECTS.items():
        for split, n in SPLITS.items():
            (data / split).mkdir(parents=True, exist_ok=True)
            with open(data / split / f"{subject}_{split}.csv", "w", newline="") as fh:
                out = csv.writer(fh)
                for i in range(n):
                    a = 2 + int(unit(subject, split, i, "a") * 40)
                    b = 2 + int(unit(subject, split, i, "b") * 40)
                    right = a + b if word == "plus" else a * b
                    wrong = [right + d for d in (1, -2, 10)]
                    gold = int(unit(subject, split, i, "gold") * 4)
                    options = wrong[:gold] + [right] + wrong[gold:]
                    out.writerow([f"What is {a} {word} {b}?", *map(str, options), "ABCD"[gold]])


def write_prod_env(prod_env: Path, data: Path) -> None:
    prod_env.mkdir(parents=True, exist_ok=True)
    metadata = ["models:"]
    deployments = ["model_deployments:"]
    for name, theta in MODELS.items():
        metadata += [
            f"  - name: {name}",
            f"    display_name: {name}",
            "    description: A seeded fake multiple-choice model (evalbars test data).",
            "    creator_organization_name: evalbars",
            "    access: open",
            "    release_date: 2026-01-01",
            "    tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG]",
        ]
        deployments += [
            f"  - name: {name}",
            f"    model_name: {name}",
            "    tokenizer_name: simple/tokenizer1",
            "    max_sequence_length: 4096",
            "    client_spec:",
            "      class_name: seeded_helm_client.SeededMCQClient",
            f"      args: {{theta: {theta}, data_dir: {data}}}",
        ]
    (prod_env / "model_metadata.yaml").write_text("\n".join(metadata) + "\n")
    (prod_env / "model_deployments.yaml").write_text("\n".join(deployments) + "\n")


def helm_run(entries, check=True, suite=SUITE) -> int:
    env = dict(os.environ, PYTHONPATH=str(HERE), HF_HUB_OFFLINE="1")
    command = [
        str(Path(sys.executable).parent / "helm-run"),
        "--run-entries",
        *entries,
        "--suite",
        suite,
        "--max-eval-instances",
        "100",
    ]
    print("+", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=WORK, env=env)
    if check and done.returncode:
        sys.exit(f"helm-run failed ({done.returncode})")
    return done.returncode


def main() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    data = WORK / "benchmark_output" / "scenarios" / "mmlu" / "data"
    write_csvs(data)
    write_prod_env(WORK / "prod_env", data)
    # Perturbed copies for model-a only: they double a run's size and one model shows the trap.
    entries = [
        f"mmlu:subject={s},method=multiple_choice_joint,model={m},num_train_trials=3"
        + (",data_augmentation=lower" if m == "synth/model-a" else "")
        for m in MODELS
        for s in SUBJECTS
    ]
    helm_run(entries)
    helm_run(["simple1:model=simple/model1"])
    # A plain suite (one trial, no perturbation), left in WORK for every-eval-ever's HELM
    # converter (make_eee.py): it drops train_trial_index and perturbations.
    plain = [
        f"mmlu:subject={s},method=multiple_choice_joint,model={m}" for m in MODELS for s in SUBJECTS
    ]
    helm_run(plain, suite=PLAIN_SUITE)
    failed = helm_run(["simple_classification:model=simple/model1,num_outputs=3"], check=False)
    print("simple_classification exit code (expected 1):", failed)
    runs = WORK / "benchmark_output" / "runs" / SUITE
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for run in sorted(p for p in runs.iterdir() if p.is_dir() and p.name != "eval_cache"):
        target = OUT / run.name
        target.mkdir()
        for name in KEEP:
            if (run / name).exists():
                # Same JSON, without HELM's indentation (a third of the size).
                document = json.loads((run / name).read_text())
                (target / name).write_text(json.dumps(document, separators=(",", ":")) + "\n")
        if not any(target.iterdir()):  # git keeps no empty folder: mark the failed run's
            (target / ".gitkeep").touch()
        print(run.name, sorted(p.name for p in target.iterdir()))


if __name__ == "__main__":
    main()
