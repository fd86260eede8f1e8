"""Write tests/data/corpora/helm_usage: crfm-helm 0.5.16 runs whose per-instance stats count tokens.

Run with the Python of a throwaway virtualenv holding crfm-helm==0.5.16 (see ../README.md):

    /tmp/helm-venv/bin/python tests/reference/corpora/helm_usage/make_helm_usage.py

Like ``../helm/make_helm_runs.py`` (whose MMLU-style CSVs and hash it reuses), it works in a
scratch folder outside the checkout and runs HELM's stock run spec
``mmlu:subject=<s>,method=multiple_choice_joint`` on two invented subjects, with
``num_train_trials=2``, for two stand-in models registered in ``prod_env``:

* ``synth/terse`` (skill 0.70): writes the answer letter only, 1 output token;
* ``synth/verbose`` (skill 0.80): "thinks" 20 to 99 hidden tokens, drawn per prompt, before the
  letter (``usage_helm_client.UsageMCQClient``: the completion's ``tokens`` list, which is what
  HELM counts, holds the reasoning and the letter; its text is the letter alone).

Both use HELM's ``simple/tokenizer1``, one token per character, with which HELM itself counts
each prompt's tokens. The truth, per (instance, train trial): input tokens = the characters of
the prompt HELM sent (``scenario_state.json``), output tokens = 1 + ``reasoning_tokens(model,
prompt)``; the script checks that HELM's ``num_prompt_tokens``, ``num_completion_tokens`` and
``num_output_tokens`` equal them, and writes ``expected_usage.csv`` from the truth. Kept per
run, under ``runs/``: ``run_spec.json`` and ``per_instance_stats.json``, what a reader needs,
re-serialised without HELM's indentation (``stats.json``, 35 kB of aggregates a run, is left out).
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELM_FIXTURE_SCRIPTS = HERE.parent / "helm"
ROOT = HERE.parents[3]
OUT = ROOT / "tests" / "data" / "corpora" / "helm_usage"
WORK = Path("/tmp/evalbars-helm-usage-work")
SUITE = "evalbars-usage"
MODELS = {"synth/terse": 0.70, "synth/verbose": 0.80}
TRIALS = 2
KEEP = ("run_spec.json", "per_instance_stats.json")
#: HELM's token statistics, as ``EfficiencyMetric`` names them.
TOKEN_STATS = ("num_prompt_tokens", "num_completion_tokens", "num_output_tokens")

sys.path[:0] = [str(HERE), str(HELM_FIXTURE_SCRIPTS)]
from make_helm_runs import SUBJECTS, write_csvs  # noqa: E402  (the helm fixture's script)
from usage_helm_client import reasoning_tokens  # noqa: E402


def write_prod_env(prod_env: Path, data: Path) -> None:
    prod_env.mkdir(parents=True, exist_ok=True)
    metadata = ["models:"]
    deployments = ["model_deployments:"]
    for name, theta in MODELS.items():
        metadata += [
            f"  - name: {name}",
            f"    display_name: {name}",
            "    description: A seeded stand-in that reports its output tokens (evalbars test data).",
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
            "      class_name: usage_helm_client.UsageMCQClient",
            f"      args: {{theta: {theta}, data_dir: {data}}}",
        ]
    (prod_env / "model_metadata.yaml").write_text("\n".join(metadata) + "\n")
    (prod_env / "model_deployments.yaml").write_text("\n".join(deployments) + "\n")


def helm_run(entries) -> None:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(HERE), str(HELM_FIXTURE_SCRIPTS)]),
        HF_HUB_OFFLINE="1",
    )
    command = [
        str(Path(sys.executable).parent / "helm-run"),
        "--run-entries",
        *entries,
        "--suite",
        SUITE,
        "--max-eval-instances",
        "100",
    ]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=WORK, env=env, check=True)


def stat_sums(entry: dict) -> dict:
    """``{(name, split): sum}`` of one per-instance entry's stats."""
    return {(s["name"]["name"], s["name"].get("split")): s["sum"] for s in entry["stats"]}


def truth_of_run(run: Path) -> list[dict]:
    """Per (instance, trial) of one run: the truth, checked against HELM's own statistics."""
    spec = json.loads((run / "run_spec.json").read_text())
    model = spec["adapter_spec"]["model"]
    subject = spec["scenario_spec"]["args"]["subject"]
    state = json.loads((run / "scenario_state.json").read_text())
    stats = {
        (e["instance_id"], e["train_trial_index"]): e
        for e in json.loads((run / "per_instance_stats.json").read_text())
    }
    rows = []
    for request_state in state["request_states"]:
        instance = request_state["instance"]
        trial = request_state["train_trial_index"]
        prompt = request_state["request"]["prompt"]
        n_in, n_out = len(prompt), 1 + reasoning_tokens(model, prompt)
        split = instance["split"]
        sums = stat_sums(stats[(instance["id"], trial)])
        helm_split = split  # HELM names its splits valid and test in the stats too
        recorded = [sums[(name, helm_split)] for name in TOKEN_STATS]
        assert recorded == [n_in, n_out, n_out], (run.name, instance["id"], trial, recorded)
        rows.append(
            {
                "model": model,
                "question_id": f"mmlu/subject={subject}/{instance['id']}",
                "epoch": trial + 1,
                "split": helm_split,
                "input_tokens": n_in,
                "output_tokens": n_out,
                "reasoning_tokens": n_out - 1,
                "exact_match": sums[("exact_match", helm_split)],
                "run": run.name,
            }
        )
    assert len(rows) == len(stats), run.name  # one request per instance and trial (joint)
    return rows


def main() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    data = WORK / "benchmark_output" / "scenarios" / "mmlu" / "data"
    write_csvs(data)
    write_prod_env(WORK / "prod_env", data)
    helm_run(
        [
            f"mmlu:subject={s},method=multiple_choice_joint,model={m},num_train_trials={TRIALS}"
            for m in MODELS
            for s in SUBJECTS
        ]
    )
    runs = WORK / "benchmark_output" / "runs" / SUITE
    folders = sorted(p for p in runs.iterdir() if p.is_dir() and p.name != "eval_cache")
    rows = [row for run in folders for row in truth_of_run(run)]
    shutil.rmtree(OUT, ignore_errors=True)
    for run in folders:
        target = OUT / "runs" / run.name
        target.mkdir(parents=True)
        for name in KEEP:
            # Same JSON, without HELM's indentation.
            document = json.loads((run / name).read_text())
            (target / name).write_text(json.dumps(document, separators=(",", ":")) + "\n")
    rows.sort(key=lambda r: (r["model"], r["split"], r["question_id"], r["epoch"]))
    with open(OUT / "expected_usage.csv", "w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    for model in MODELS:
        test = [r for r in rows if r["model"] == model and r["split"] == "test"]
        print(
            f"{model}: {len(test)} test rows, input {sum(r['input_tokens'] for r in test)}, "
            f"output {sum(r['output_tokens'] for r in test)} tokens, "
            f"exact_match {sum(r['exact_match'] for r in test) / len(test):.3f}"
        )
    print("wrote", OUT)


if __name__ == "__main__":
    main()
