"""Write tests/data/corpora/helm_unshared: a HELM suite folder whose models share no question.

Run with the Python of a throwaway virtualenv holding crfm-helm==0.5.16 (see ../README.md):

    /work/venvs/helm/bin/python tests/reference/corpora/helm/make_helm_unshared.py

The same local MMLU-style CSVs and seeded models as make_helm_runs.py (imported from it), run
with HELM's stock run spec ``mmlu:subject=<s>,method=multiple_choice_joint`` as a suite in
which no question is answered by every model: synth/model-a on ``addition`` only,
synth/model-b on ``multiplication`` only, synth/model-c on both (so a and b share no question,
and each shares 8 with c). ``helm-summarize --suite`` then writes its tables into the same suite
folder, as a user's ``benchmark_output/runs/<suite>`` holds them. Kept: every run's
run_spec.json, scenario.json, per_instance_stats.json and stats.json (re-serialised without
HELM's indentation), and of helm-summarize's output ``summary.json`` and one group table
(``groups/mmlu.json``); its larger files (runs.json, run_specs.json, schema.json, ...) are left
out. The test split's ``exact_match`` means of stats.json are the check.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_helm_runs as runs  # noqa: E402

OUT = runs.ROOT / "tests" / "data" / "corpora" / "helm_unshared"
SUITE = "evalbars-unshared"
ENTRIES = [
    "mmlu:subject=addition,method=multiple_choice_joint,model=synth/model-a",
    "mmlu:subject=multiplication,method=multiple_choice_joint,model=synth/model-b",
    "mmlu:subject=addition,method=multiple_choice_joint,model=synth/model-c",
    "mmlu:subject=multiplication,method=multiple_choice_joint,model=synth/model-c",
]
#: What is kept of helm-summarize's output (the rest is large and read by nothing here).
SUMMARY_KEEP = ("summary.json", "groups/mmlu.json")


def main() -> None:
    runs.WORK = Path("/tmp/evalbars-helm-unshared-work")
    shutil.rmtree(runs.WORK, ignore_errors=True)
    data = runs.WORK / "benchmark_output" / "scenarios" / "mmlu" / "data"
    runs.write_csvs(data)
    runs.write_prod_env(runs.WORK / "prod_env", data)
    runs.helm_run(ENTRIES, suite=SUITE)
    summarize = [str(Path(sys.executable).parent / "helm-summarize"), "--suite", SUITE]
    print("+", " ".join(summarize), flush=True)
    subprocess.run(summarize, cwd=runs.WORK, check=True)
    suite = runs.WORK / "benchmark_output" / "runs" / SUITE
    print("suite folder:", sorted(p.name for p in suite.iterdir()))
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for run in sorted(p for p in suite.iterdir() if p.is_dir() and ":" in p.name):
        target = OUT / run.name
        target.mkdir()
        for name in runs.KEEP:
            document = json.loads((run / name).read_text())
            (target / name).write_text(json.dumps(document, separators=(",", ":")) + "\n")
        print(run.name, sorted(p.name for p in target.iterdir()))
    for name in SUMMARY_KEEP:
        document = json.loads((suite / name).read_text())
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(json.dumps(document, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
