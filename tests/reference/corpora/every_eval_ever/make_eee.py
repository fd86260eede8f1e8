"""Write tests/data/corpora/every_eval_ever: every-eval-ever 0.3.0 converts our harness fixtures.

Run with the Python of a throwaway virtualenv (Python 3.12) holding every-eval-ever 0.3.0,
inspect-ai 0.3.285 and crfm-helm 0.5.16 (see ../README.md), after make_helm_runs.py (whose
scratch folder holds the full HELM output the converter needs):

    /work/venvs/eee/bin/python tests/reference/corpora/every_eval_ever/make_eee.py

- ``lm_eval/``: ``every_eval_ever convert lm_eval --include_samples`` of each model folder of
  tests/data/harness/lm_eval (fake-mid's folder holds two runs);
- ``inspect/``: ``convert inspect`` of tests/data/harness/inspect/eval_zstd. The converter
  refuses Inspect's ``mockllm/...`` model names ("Cannot determine model developer"), so the
  logs are first rewritten by inspect-ai itself (read_eval_log / write_eval_log) with the
  model renamed ``hf/evalbars/inspect-fake-<x>``; nothing else changes;
- ``inspect_epochs/``: the same for tests/data/harness/inspect/epochs (fake-mid, 3 epochs of
  10 samples; the converter writes the epoch as ``metadata.epoch``, a string);
- ``helm/``: ``convert helm`` of the plain HELM suite (one train trial, no perturbation; the
  converter keeps neither HELM's train_trial_index nor the perturbation of a sample).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai.log import read_eval_log, write_eval_log

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
OUT = ROOT / "tests" / "data" / "corpora" / "every_eval_ever"
HARNESS = ROOT / "tests" / "data" / "harness"
HELM_PLAIN = Path("/tmp/evalbars-helm-work/benchmark_output/runs/evalbars-plain")
CLI = str(Path(sys.executable).parent / "every_eval_ever")
PARTS = ("lm_eval", "inspect", "inspect_epochs", "helm")


def convert(source: str, log_path: Path, out: Path, *extra) -> None:
    command = [
        CLI,
        "convert",
        source,
        "--log_path",
        str(log_path),
        "--output_dir",
        str(out),
        *extra,
    ]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=out.parent)


def renamed_inspect_logs(folder: Path) -> Path:
    target = Path(tempfile.mkdtemp(prefix="evalbars-eee-inspect-"))
    for path in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(path))
        log.eval.model = "hf/evalbars/inspect-" + log.eval.model.split("/", 1)[1]
        write_eval_log(log, str(target / path.name))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=PARTS, action="append", help="default: every part")
    parts = parser.parse_args().part or list(PARTS)
    if "helm" in parts and not HELM_PLAIN.is_dir():
        sys.exit(f"{HELM_PLAIN} is missing: run make_helm_runs.py first")
    for part in parts:
        shutil.rmtree(OUT / part, ignore_errors=True)
        (OUT / part).mkdir(parents=True)
    if "lm_eval" in parts:
        for model in sorted((HARNESS / "lm_eval").iterdir()):
            convert(
                "lm_eval",
                model,
                OUT / "lm_eval",
                "--include_samples",
                "--eval_library_version",
                "0.4.13",
            )
    for part, source in (("inspect", "eval_zstd"), ("inspect_epochs", "epochs")):
        if part in parts:
            logs = renamed_inspect_logs(HARNESS / "inspect" / source)
            convert("inspect", logs, OUT / part)
            shutil.rmtree(logs)
    if "helm" in parts:
        convert("helm", HELM_PLAIN, OUT / "helm", "--eval_library_version", "0.5.16")
    for path in sorted(OUT.rglob("*")):
        if path.is_file():
            print(path.relative_to(OUT), path.stat().st_size)


if __name__ == "__main__":
    main()
