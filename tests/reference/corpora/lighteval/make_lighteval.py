"""Write tests/data/corpora/lighteval: lighteval 0.13.0 runs of a custom task and model.

Run with the Python of a throwaway virtualenv holding lighteval 0.13.0 (see ../README.md):

    /work/venvs/lighteval/bin/python tests/reference/corpora/lighteval/make_lighteval.py

In a scratch folder outside the checkout it writes a local dataset (three configs:
arithmetic and geometry multiple choice with an ``id`` column, gen with 6 questions), then
runs ``lighteval custom <model> synth_model.py <tasks> --custom-tasks synth_tasks.py
--save-details`` for synth/model-a, -b, -c, and a second time for synth/model-a with another
seed (two runs of one model name). It keeps the results JSON and details parquet files.
Offline fixes (from the shared research notes): an empty tinyBenchmarks.pkl beside lighteval's
tiny_benchmarks.py (it downloads the pickle at import otherwise), and packages resolved with
``--exclude-newer 2025-12-01``.
"""

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
OUT = ROOT / "tests" / "data" / "corpora" / "lighteval"
WORK = Path("/tmp/evalbars-lighteval-work")
RUNS = [
    ("synth/model-a", "1"),
    ("synth/model-b", "1"),
    ("synth/model-c", "1"),
    ("synth/model-a", "2"),
]
TASKS = "synthmcq:arithmetic|0,synthmcq:geometry|0,synthgen|0"


def unit(*parts) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def write_dataset(data: Path) -> None:
    readme = ["---", "configs:"]
    sizes = {"arithmetic": 10, "geometry": 8, "gen": 6}
    for subset, n in sizes.items():
        (data / subset).mkdir(parents=True, exist_ok=True)
        with open(data / subset / "test.jsonl", "w") as fh:
            for i in range(n):
                a, b = 2 + int(unit(subset, i, "a") * 50), 2 + int(unit(subset, i, "b") * 50)
                if subset == "gen":
                    row = {"question": f"What is {a} plus {b}?", "target": str(a + b)}
                else:
                    value = a + b if subset == "arithmetic" else 2 * (a + b)
                    text = (
                        f"What is {a} plus {b}?"
                        if subset == "arithmetic"
                        else (f"What is the perimeter of a {a} by {b} rectangle?")
                    )
                    gold = int(unit(subset, i, "gold") * 4)
                    wrong = [value + d for d in (1, -3, 7)]
                    choices = [str(v) for v in wrong[:gold] + [value] + wrong[gold:]]
                    row = {
                        "id": f"{subset}-{i:03d}",
                        "question": text,
                        "choices": choices,
                        "answer": gold,
                    }
                fh.write(json.dumps(row) + "\n")
        readme += [
            f"- config_name: {subset}",
            "  data_files:",
            "  - split: test",
            f"    path: {subset}/test.jsonl",
        ]
    (data / "README.md").write_text("\n".join(readme + ["---", ""]))


def main() -> None:
    # Found without importing it: importing tiny_benchmarks is what downloads the pickle.
    package = Path(importlib.util.find_spec("lighteval").origin).parent
    pickle = package / "tasks" / "tasks" / "tinyBenchmarks.pkl"
    if not pickle.exists():
        pickle.touch()  # only its existence is checked at import; only tinyBenchmarks reads it
    shutil.rmtree(WORK, ignore_errors=True)
    write_dataset(WORK / "synth_data")
    # Run from copies in the scratch folder: lighteval records the model file's path.
    for name in ("synth_model.py", "synth_tasks.py"):
        shutil.copy2(HERE / name, WORK / name)
    for model, seed in RUNS:
        cache = WORK / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        env = dict(
            os.environ,
            SYNTH_DATA=str(WORK / "synth_data"),
            SYNTH_SEED=seed,
            SYNTH_LIGHTEVAL_CACHE=str(cache),
            HF_HUB_OFFLINE="1",
            HF_DATASETS_OFFLINE="1",
            HF_HOME=str(WORK / "hf"),
        )
        command = [
            str(Path(sys.executable).parent / "lighteval"),
            "custom",
            model,
            str(WORK / "synth_model.py"),
            TASKS,
            "--custom-tasks",
            str(WORK / "synth_tasks.py"),
            "--output-dir",
            str(WORK / "out"),
            "--save-details",
        ]
        print("+", " ".join(command), flush=True)
        subprocess.run(command, cwd=WORK, env=env, check=True)
        time.sleep(1.5)  # distinct timestamps for the two runs of model-a
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.copytree(WORK / "out", OUT)
    for path in sorted(OUT.rglob("*")):
        print(path.relative_to(OUT))


if __name__ == "__main__":
    main()
