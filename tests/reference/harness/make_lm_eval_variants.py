"""Derive the lm-eval variant fixtures (``tests/data/harness/lm_eval_variants/``) from the real
lm-eval 0.4.13 output in ``tests/data/harness/lm_eval/``.

Each variant renames and rewrites copies of real files into a layout another writer of the
lm-eval format uses; no score, response or document changes. See the README written beside
the fixtures for the formats' sources. Run from the repository root::

    python3 tests/reference/harness/make_lm_eval_variants.py

Only the standard library is used; the output is deterministic (no timestamps are taken).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "tests" / "data" / "harness" / "lm_eval"
TARGET = ROOT / "tests" / "data" / "harness" / "lm_eval_variants"
PREFIX = "leaderboard_"


def _samples(folder: Path, stamp: str) -> dict:
    """``{task: [sample, ...]}`` of one run."""
    runs = {}
    for path in sorted(folder.glob(f"samples_*_{stamp}.jsonl")):
        task = path.name.removeprefix("samples_").removesuffix(f"_{stamp}.jsonl")
        runs[task] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return runs


def _rename_tasks(results: dict, rename) -> dict:
    """The results document with every task name (keys and ``configs[].task``) renamed."""
    out = dict(results)
    for key in ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        if isinstance(results.get(key), dict):
            out[key] = {rename(k): v for k, v in results[key].items()}
    out["group_subtasks"] = {
        rename(k): [rename(t) for t in v] for k, v in results.get("group_subtasks", {}).items()
    }
    out["task_hashes"] = {rename(k): v for k, v in results.get("task_hashes", {}).items()}
    for name, entry in out["results"].items():
        out["results"][name] = {**entry, "name": name, "alias": name}
    for name, config in out["configs"].items():
        out["configs"][name] = {**config, "task": name}
    return out


def _write_lines(path: Path, samples) -> None:
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples))


def open_llm_leaderboard_v2(model: str = "evalbars__fake-strong") -> None:
    """The Open LLM Leaderboard v2 details repository of one model, as of June 2024:
    ``<org>__<model>-details/<org>__<model>/results_<ts>.json`` beside
    ``samples_leaderboard_<task>_<ts>.json`` holding JSON lines; tasks named
    ``leaderboard_<task>``; ``config.model_args`` a string, as lm-eval 0.4.2/0.4.3 wrote it."""
    (results_path,) = sorted((SOURCE / model).glob("results_*.json"))
    stamp = results_path.stem.removeprefix("results_")
    results = json.loads(results_path.read_text())
    out = TARGET / "oll_v2" / f"{model}-details" / model
    out.mkdir(parents=True)
    renamed = _rename_tasks(results, lambda t: PREFIX + t)
    args = renamed["config"]["model_args"]
    renamed["config"] = {
        **renamed["config"],
        "model_args": ",".join(f"{k}={v}" for k, v in args.items()),
    }
    (out / results_path.name).write_text(json.dumps(renamed, indent=2, ensure_ascii=False))
    for task, samples in _samples(SOURCE / model, stamp).items():
        _write_lines(out / f"samples_{PREFIX}{task}_{stamp}.json", samples)


def before_jsonl(model: str = "evalbars__fake-weak") -> None:
    """An lm-eval 0.4 development release before PR #1930 (first tag v0.4.3): each
    ``samples_<task>_<ts>.json`` one JSON list, ``json.dumps(samples, indent=2)``; the
    samples' ``metrics`` list is left out so that the metrics are found by their keys."""
    (results_path,) = sorted((SOURCE / model).glob("results_*.json"))
    stamp = results_path.stem.removeprefix("results_")
    out = TARGET / "json_list" / model
    out.mkdir(parents=True)
    shutil.copyfile(results_path, out / results_path.name)
    for task, samples in _samples(SOURCE / model, stamp).items():
        listed = [{k: v for k, v in s.items() if k != "metrics"} for s in samples]
        text = json.dumps(listed, indent=2, ensure_ascii=False)
        (out / f"samples_{task}_{stamp}.json").write_text(text)


def lmms_eval(model: str = "evalbars__fake-mid", lmms_stamp: str = "20261130_105347") -> None:
    """lmms-eval's output (``lmms_eval/loggers/evaluation_tracker.py``): the newer run of the
    model as ``<date>_results.json`` beside ``<date>_samples_<task>.jsonl``, each sample
    rewritten as ``save_results_samples`` does: ``input`` the first request's arguments,
    ``doc`` and ``arguments`` dropped, ``resps`` dropped when equal to ``filtered_resps``."""
    results_path = max(
        (SOURCE / model).glob("results_*.json"), key=lambda p: json.loads(p.read_text())["date"]
    )
    stamp = results_path.stem.removeprefix("results_")
    out = TARGET / "lmms_eval" / model
    out.mkdir(parents=True)
    shutil.copyfile(results_path, out / f"{lmms_stamp}_results.json")
    for task, samples in _samples(SOURCE / model, stamp).items():
        rewritten = []
        for sample in samples:
            sample = dict(sample)
            first = sample.pop("arguments")["gen_args_0"]
            sample["input"] = [first[k] for k in sorted(first)]
            resps = sample.get("resps")
            if sample["filtered_resps"] in (resps, resps[0] if resps else None):
                sample.pop("resps")
            sample.pop("doc")
            rewritten.append(sample)
        _write_lines(out / f"{lmms_stamp}_samples_{task}.jsonl", rewritten)


def main() -> None:
    readme = TARGET / "README.md"
    kept = readme.read_text() if readme.exists() else None
    if TARGET.exists():
        shutil.rmtree(TARGET)
    TARGET.mkdir(parents=True)
    open_llm_leaderboard_v2()
    before_jsonl()
    lmms_eval()
    if kept is not None:
        readme.write_text(kept)


if __name__ == "__main__":
    main()
