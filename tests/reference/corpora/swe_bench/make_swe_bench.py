"""Write tests/data/corpora/swe_bench: SWE-bench submissions built from the format's source.

SWE-bench's harness needs Docker, which this machine cannot run, so no submission is
evaluated here. The files follow the layout the tools that read them document:

- ``evaluation/<split>/<submission>/{metadata.yaml, results/results.json}``, with
  ``results.json`` = ``{"no_generation": [...], "no_logs": [...], "resolved": [...]}``
  (every-eval-ever 0.3.0 ``adapters/swe_bench_verified/adapter.py`` docstring and reader,
  evaleval/every_eval_ever commit 9bce4136e789ec006c62582f5f9d107d20f8b398);
- the older report of SWE-bench's ``get_model_report`` (``no_generation``, ``generated``,
  ``with_logs``, ``install_fail``, ``reset_failed``, ``no_apply``, ``applied``,
  ``test_errored``, ``test_timeout``, ``resolved``; SWE-bench harness docs), for one submission.

The 20 instance ids are synthetic, in SWE-bench's ``<owner>__<repo>-<number>`` naming, over
four repositories; ``lite_instances.txt`` lists them (the split). Outcomes are drawn with
SHA-256 from a per-submission skill, so the files are the same at every run:

    python3 tests/reference/corpora/swe_bench/make_swe_bench.py
"""

import hashlib
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
OUT = ROOT / "tests" / "data" / "corpora" / "swe_bench"
REPOS = {"django__django": 7, "sympy__sympy": 5, "astropy__astropy": 4, "pytest-dev__pytest": 4}
SUBMISSIONS = {
    "20240402_agent-old": (0.30, "old"),
    "20240620_agent-a": (0.45, "new"),
    "20241029_agent-b": (0.60, "new"),
}
OLD_KEYS = (
    "no_generation",
    "generated",
    "with_logs",
    "install_fail",
    "reset_failed",
    "no_apply",
    "applied",
    "test_errored",
    "test_timeout",
    "resolved",
)


def unit(*parts) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def main() -> None:
    instances = [
        f"{repo}-{10000 + int(unit(repo, i) * 9000) // 10 * 10 + i}"
        for repo, n in REPOS.items()
        for i in range(n)
    ]
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "evaluation" / "lite").mkdir(parents=True)
    (OUT / "lite_instances.txt").write_text("\n".join(sorted(instances)) + "\n")
    for name, (skill, style) in SUBMISSIONS.items():
        draw = {i: unit(name, i) for i in instances}
        no_generation = sorted(i for i in instances if draw[i] > 0.93)
        no_logs = sorted(i for i in instances if 0.90 < draw[i] <= 0.93)
        resolved = sorted(i for i in instances if draw[i] < skill)
        if style == "old":
            generated = sorted(set(instances) - set(no_generation))
            lists = dict.fromkeys(OLD_KEYS, [])
            lists.update(
                no_generation=no_generation,
                generated=generated,
                with_logs=sorted(set(generated) - set(no_logs)),
                applied=sorted(set(generated) - set(no_logs)),
                resolved=resolved,
            )
        else:
            lists = {"no_generation": no_generation, "no_logs": no_logs, "resolved": resolved}
        folder = OUT / "evaluation" / "lite" / name
        (folder / "results").mkdir(parents=True)
        (folder / "results" / "results.json").write_text(json.dumps(lists, indent=2) + "\n")
        (folder / "metadata.yaml").write_text(
            f"info:\n  name: {name.split('_', 1)[1]}\ntags:\n  model: [synth-{name[-1]}]\n"
            "  checked: false\n"
        )
        print(name, {k: len(v) for k, v in lists.items()}, f"{len(resolved) / len(instances):.2f}")


if __name__ == "__main__":
    main()
