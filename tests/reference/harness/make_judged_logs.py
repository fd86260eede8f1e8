"""Regenerate the judge-scored Inspect fixture under ``tests/data/harness/inspect/model_graded/``.

Test data only, like ``make_harness_logs.py`` beside it (whose fake answering models, hash and
dataset this script reuses): evalbars never imports inspect-ai, and no harness is a runtime,
test or CI dependency. A developer runs this once, by hand, in a throwaway virtualenv holding
inspect-ai 0.3.285, and commits what it writes:

* three ``.eval`` logs (zstd members, one epoch) of the toyqa task answered by
  ``mockllm/fake-strong``, ``mockllm/fake-mid`` and ``mockllm/fake-weak`` (the same answers as
  ``inspect/eval_zstd/``) and scored by Inspect's own ``model_graded_qa()`` scorer, whose
  grader role is bound to the fake judge ``mockllm/fake-judge``;
* ``labels.csv``: ``model, question_id, human`` for a seeded, uniformly random 40% of the
  questions (the same questions for every model), ``human`` = whether that model's answer is
  truly right;
* ``README.md``: provenance, the judge's rule and the expected numbers, computed here.

The judge. The truth it approximates is Inspect's ``match()`` verdict on the answer (its
``match_str`` with ``match()``'s defaults: the target at the end, case and punctuation
ignored). Per (answering model, sample id), with u = ``unit("fake-judge", label, sample id,
"grade")``, the judge fails a truly right answer when u < FAIL_RIGHT and passes a truly wrong
one when u < PASS_WRONG; otherwise it agrees. PASS_WRONG > FAIL_RIGHT makes it lenient, so the
judge-only accuracy is biased upward, most for the weakest model (which has the most wrong
answers to pass).

Nothing else under ``tests/data/harness/`` is touched. ``make_harness_logs.py`` replaces
``tests/data/harness/inspect/`` wholesale, so run this script again after it.

Usage (from the repository root)::

    python3 -m venv /tmp/judge-venv
    /tmp/judge-venv/bin/pip install inspect_ai==0.3.285
    /tmp/judge-venv/bin/python tests/reference/harness/make_judged_logs.py
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

# Inspect at the top: unlike make_harness_logs.py, this script runs in one virtualenv only.
from inspect_ai import Task
from inspect_ai import eval as inspect_eval_fn
from inspect_ai.dataset import json_dataset
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.scorer._common import match_str  # what match() calls
from inspect_ai.solver import generate
from inspect_ai.solver._task_state import sample_state  # as make_harness_logs.py uses it

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_harness_logs import (  # noqa: E402  (the sibling script, not a package)
    DATA,
    INSPECT_DATASET,
    INSPECT_SKILL,
    inspect_dataset_rows,
    inspect_fake_outputs,
    unit,
)

OUT = DATA / "inspect" / "model_graded"
SCENARIO_DIR = "inspect/model_graded"  # relative to the scratch folder: no machine paths in logs
TASK = "toyqa_judged"
MODELS = ("fake-strong", "fake-mid", "fake-weak")
JUDGE = "fake-judge"
#: P(judge grades I | the answer is right) and P(judge grades C | the answer is wrong).
FAIL_RIGHT = 0.05
PASS_WRONG = 0.30
#: Share of the questions given human labels, and the seed of that draw.
LABEL_SHARE = 0.40
LABEL_SEED = 20261202


# ---------------------------------------------------------------------------------------
# The truth and the fake judge
# ---------------------------------------------------------------------------------------


def truly_right(answer: str, target: str) -> bool:
    """Whether ``answer`` is right, as Inspect's ``match()`` (default arguments) judges it."""
    return match_str(value=answer, target=target, location="end", ignore_case=True)[1]


def judge_grade(label: str, sample_id: str, right: bool) -> str:
    """The fake judge's grade of model ``label``'s answer to ``sample_id`` (see module doc)."""
    u = unit(JUDGE, label, sample_id, "grade")
    if right:
        return "I" if u < FAIL_RIGHT else "C"
    return "C" if u < PASS_WRONG else "I"


def judge_outputs(label: str):
    """A ``custom_outputs`` callable for ``mockllm/fake-judge`` grading model ``label``.

    ``model_graded_qa()`` calls the grader inside the sample's scoring step, so Inspect's
    ``sample_state()`` is the graded sample: its id, target and the answering model's output.
    The reply ends with ``GRADE: C`` or ``GRADE: I``, the default grade pattern's format.
    """

    def output(input, tools, tool_choice, config):  # noqa: A002 - mockllm's signature
        state = sample_state()
        answer = state.output.completion
        target = state.target.text
        prompt = "\n".join(str(m.text) for m in input)
        # The grader must be looking at this sample's answer (the template's [Submission]).
        assert answer in prompt and target in prompt, (state.sample_id, prompt)
        grade = judge_grade(label, str(state.sample_id), truly_right(answer, target))
        verdict = "meets" if grade == "C" else "does not meet"
        text = (
            f'The criterion is "{target}". The submission says "{answer}". '
            f"The submission {verdict} the criterion.\n\nGRADE: {grade}"
        )
        result = ModelOutput.from_content(model=JUDGE, content=text)
        # Usage by hand: otherwise mockllm counts tokens with tiktoken, which downloads.
        n_in, n_out = len(prompt.split()), len(text.split())
        result.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return result

    return output


# ---------------------------------------------------------------------------------------
# The runs
# ---------------------------------------------------------------------------------------


def judged_task():
    """toyqa (read by ``json_dataset``, relative path) scored by ``model_graded_qa()``.

    The scorer keeps its default ``model_role="grader"``; the eval binds the role to the fake
    judge, so the log's header names it (``eval.model_roles.grader``).
    """
    return Task(
        name=TASK, dataset=json_dataset("toyqa.jsonl"), solver=generate(), scorer=model_graded_qa()
    )


def run_evals(work: Path) -> None:
    """One eval per answering model, in ``work`` (a scratch folder outside any checkout)."""
    rows = inspect_dataset_rows()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        for label in MODELS:
            model = get_model(f"mockllm/{label}", custom_outputs=inspect_fake_outputs(label, rows))
            judge = get_model(f"mockllm/{JUDGE}", custom_outputs=judge_outputs(label))
            (log,) = inspect_eval_fn(
                judged_task(),
                model=model,
                model_roles={"grader": judge},
                log_dir=SCENARIO_DIR,
                display="none",
            )
            if log.status != "success":
                raise SystemExit(f"{label}: status {log.status}: {log.error}")
            print(f"  inspect model_graded: {label} -> {log.status}", flush=True)
    finally:
        os.chdir(cwd)


# ---------------------------------------------------------------------------------------
# What the logs hold, read back with Inspect's own reader
# ---------------------------------------------------------------------------------------


def read_back(folder: Path) -> list[dict]:
    """Per log: model, file, compression, and per sample the judge's grade and the truth."""
    logs = []
    for path in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(path))
        label = log.eval.model.split("/", 1)[1]
        with zipfile.ZipFile(path) as zf:
            types = sorted({i.compress_type for i in zf.infolist()})
        samples = []
        for s in log.samples:
            assert s.error is None and s.epoch == 1, (path.name, s.id)
            (name,) = s.scores  # one scorer
            score = s.scores[name]
            right = truly_right(s.output.completion, s.target)
            assert score.value == judge_grade(label, s.id, right), (path.name, s.id)
            samples.append(
                {"id": s.id, "judge": score.value, "right": right, "answer": s.output.completion}
            )
        grader = (log.eval.model_roles or {}).get("grader")
        logs.append(
            {
                "file": path.name,
                "model": log.eval.model,
                "label": label,
                "scorer": name,
                "grader": grader.model if grader else None,
                "compression": {(93,): "zstd", (8,): "deflate"}.get(tuple(types), str(types)),
                "version": log.eval.packages.get("inspect_ai"),
                "headline": log.results.scores[0].metrics["accuracy"].value,
                "samples": samples,
            }
        )
    order = {f"mockllm/{m}": i for i, m in enumerate(MODELS)}
    return sorted(logs, key=lambda entry: order[entry["model"]])


def same_answers_as_eval_zstd(logs: list[dict]) -> bool | None:
    """Whether each model's answers equal its ``inspect/eval_zstd`` expected table's responses
    (None when those tables are absent)."""
    found = True
    for entry in logs:
        table = DATA / "expected" / f"inspect__eval_zstd__{entry['label']}.csv"
        if not table.is_file():
            return None
        with open(table, encoding="utf-8", newline="") as f:
            theirs = {r["question_id"]: (r["response"], r["value"]) for r in csv.DictReader(f)}
        for s in entry["samples"]:
            response, value = theirs[s["id"]]
            found &= response == s["answer"] and (value == "C") == s["right"]
    return found


def labelled_questions(ids: list[str]) -> list[str]:
    """A uniformly random LABEL_SHARE of the question ids: the smallest hash keys, in id order."""
    n = round(LABEL_SHARE * len(ids))
    return sorted(sorted(ids, key=lambda q: unit("labels", LABEL_SEED, q))[:n])


def write_labels(logs: list[dict], chosen: list[str]) -> None:
    """``labels.csv``: one row per (model, labelled question), human = the truth (1 or 0)."""
    with open(OUT / "labels.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["model", "question_id", "human"])
        for entry in logs:
            truth = {s["id"]: s["right"] for s in entry["samples"]}
            for q in chosen:
                w.writerow([entry["model"], q, int(truth[q])])


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def summary(logs: list[dict], chosen: list[str]) -> list[dict]:
    """Per model: judge-only and true accuracy (all questions and the labelled ones), the
    judge's agreement and its two kinds of error."""
    rows = []
    for entry in logs:
        samples = entry["samples"]
        on_labelled = [s for s in samples if s["id"] in chosen]
        judge = [s["judge"] == "C" for s in samples]
        right = [s["right"] for s in samples]
        rows.append(
            {
                "model": entry["model"],
                "n": len(samples),
                "judge_acc": mean(judge),
                "true_acc": mean(right),
                "n_labelled": len(on_labelled),
                "judge_acc_labelled": mean(s["judge"] == "C" for s in on_labelled),
                "true_acc_labelled": mean(s["right"] for s in on_labelled),
                "agree": sum(j == r for j, r in zip(judge, right, strict=True)),
                "passed_wrong": sum(j and not r for j, r in zip(judge, right, strict=True)),
                "failed_right": sum(r and not j for j, r in zip(judge, right, strict=True)),
                "headline": entry["headline"],
                # What the rule gives on average, for these answers.
                "agree_expected": sum(1 - FAIL_RIGHT if r else 1 - PASS_WRONG for r in right),
            }
        )
        # The log's own summary is the judge-only accuracy.
        assert abs(rows[-1]["headline"] - rows[-1]["judge_acc"]) < 1e-12, rows[-1]
    return rows


def write_readme(logs: list[dict], chosen: list[str], same: bool | None) -> None:
    """``README.md``: provenance, the judge's rule, and the expected numbers."""
    rows = summary(logs, chosen)
    n_all = sum(r["n"] for r in rows)
    agree = sum(r["agree"] for r in rows)
    agree_expected = sum(r["agree_expected"] for r in rows)
    files = "\n".join(
        f"| `{e['file']}` | `{e['model']}` | {(OUT / e['file']).stat().st_size:,} B |" for e in logs
    )
    expected = "\n".join(
        f"| `{r['model']}` | {r['judge_acc']:.2f} | {r['true_acc']:.2f} | "
        f"{r['judge_acc'] - r['true_acc']:+.2f} | {r['n_labelled']} | "
        f"{r['judge_acc_labelled']:.3f} | {r['true_acc_labelled']:.3f} | "
        f"{r['agree']}/{r['n']} | {r['passed_wrong']} | {r['failed_right']} |"
        for r in rows
    )
    grid = []
    by_model = [{s["id"]: s for s in e["samples"]} for e in logs]
    for q in sorted(by_model[0]):
        cells = []
        for samples in by_model:
            s = samples[q]
            cells.append(f"{s['judge']} / {int(s['right'])}")
        grid.append(f"| `{q}` | {'yes' if q in chosen else ''} | " + " | ".join(cells) + " |")
    header_models = " | ".join(f"`{e['label']}` judge / truth" for e in logs)
    versions = {e["version"] for e in logs}
    compression = {e["compression"] for e in logs}
    skills = ", ".join(f"{INSPECT_SKILL[m]:.2f}" for m in MODELS)
    same_text = {
        True: "identical to `../eval_zstd/`'s (checked against `../../expected/"
        "inspect__eval_zstd__<model>.csv`: every response, and `match()`'s verdict equals the "
        "truth used here)",
        False: "**not** identical to `../eval_zstd/`'s (see the script)",
        None: "those of `../eval_zstd/` by construction (not checked: its expected tables were absent)",
    }[same]
    text = f"""# Judge-scored (model-graded) Inspect logs, with human labels

Real Inspect logs of a **model-graded** eval, for evalbars' judge-corrected (PPI++) readings:
the score of every sample is a judge model's grade, and `labels.csv` holds human labels of a
uniformly random subset of the questions. Made once by
`tests/reference/harness/make_judged_logs.py`; no harness is a runtime, test or CI dependency.

## Provenance

| | |
|---|---|
| inspect-ai | **{", ".join(sorted(versions))}** (`eval.packages`), in a throwaway virtualenv (`pip install inspect_ai==0.3.285`) |
| Python | {platform.python_version()} ({platform.python_implementation()}, {platform.system()} {platform.machine()}) |
| format | `.eval`, members compressed with **{", ".join(sorted(compression))}**; 1 epoch; 20 samples per log |
| task | `{TASK}`: `toyqa.jsonl` (`tests/reference/harness/inspect_data/`, read by `json_dataset`), `generate()`, scorer `model_graded_qa()` (default template and instructions, C/I grades, default `model_role="grader"`) |
| grader | `eval(..., model_roles={{"grader": get_model("mockllm/{JUDGE}", custom_outputs=...)}})` |
| network | none (fake models, no weights, local dataset) |

Regenerate (from the repository root; replaces this folder only):

```sh
python3 -m venv /tmp/judge-venv
/tmp/judge-venv/bin/pip install inspect_ai==0.3.285
/tmp/judge-venv/bin/python tests/reference/harness/make_judged_logs.py
```

`make_harness_logs.py` replaces `tests/data/harness/inspect/` wholesale: run this script again
after it. Timestamps, ids and file names change at every regeneration; grades, answers, labels and
every number below do not.

| log | `eval.model` | size |
|---|---|---|
{files}

## The models and the judge

The answering models are `make_harness_logs.py`'s `mockllm/fake-strong`, `fake-mid`, `fake-weak`
(skill {skills}); their answers are {same_text}.

**Truth** = Inspect's `match()` verdict on the answer (`match_str`, target at the end, case and
punctuation ignored): `The answer is <target>.` is right; `Either <target> or <wrong>.`,
`I don't know.` and `The answer is <wrong>.` are wrong.

**Judge** `mockllm/{JUDGE}`: it answers `... The submission meets the criterion.\\n\\nGRADE: C` or
`... does not meet the criterion.\\n\\nGRADE: I`. With u = `unit("{JUDGE}", <model label>, <sample
id>, "grade")` (`unit()` = first 8 bytes of SHA-256, as a number in [0, 1), from
`make_harness_logs.py`): a truly right answer is graded I when u < {FAIL_RIGHT}, a truly wrong one
C when u < {PASS_WRONG}, otherwise the judge agrees with the truth. Intended agreement about 0.85
(the rule's expectation for these answers: {agree_expected / n_all:.3f}); lenient, so judge-only
accuracy is biased upward. **Measured agreement: {agree}/{n_all} = {agree / n_all:.3f}** over the
{n_all} graded answers.

**Labels** (`labels.csv`, `model,question_id,human`): the {len(chosen)} of 20 questions
({LABEL_SHARE:.0%}) with the smallest `unit("labels", {LABEL_SEED}, <question id>)` (a seeded, uniformly
random subset; **label sampling seed {LABEL_SEED}**), the same questions for every model: {", ".join(f"`{q}`" for q in chosen)}.
One row per (model, labelled question); `human` = 1 if that model's answer is truly right, else 0.
`model` is the log's `eval.model`, as evalbars' Inspect reader names the model.

## Expected

Accuracies are means of C = 1, I = 0 over the 20 questions ("all") or the labelled ones.

| model | judge acc (all) | true acc (all) | judge bias | labelled | judge acc (labelled) | true acc (labelled) = human-only | agree | wrong passed | right failed |
|---|---|---|---|---|---|---|---|---|---|
{expected}

The judge-only accuracy equals each log's own `results` headline (`model_graded_qa` accuracy).

Per question (`judge / truth`: the judge's grade and whether the answer is truly right):

| question | labelled | {header_models} |
|---|---|{"---|" * len(logs)}
{chr(10).join(grid)}

## Log format notes (model-graded, 0.3.285)

* Scorer key `model_graded_qa` in `samples[].scores` and `results.scores[].name`. The score's
  `value` is the letter (`C`/`I`), `answer` the answering model's completion, `explanation`
  the judge's whole reply, `metadata.grading` = [the grading prompt (user message), the judge's
  reply (assistant message, `model: "{JUDGE}"`)].
* The judge is named in the header only because the grader *role* was bound in `eval()`:
  `eval.model_roles.grader.model` = `mockllm/{JUDGE}`, and `stats.role_usage.grader`. Passing
  `model_graded_qa(model=...)` instead leaves `model_roles` null and records the judge under
  `eval.scorers[].options.model` / `results.scores[].params.model`.
* `eval.model` stays the answering model; the judge's tokens appear in `stats.model_usage` and
  each sample's `model_usage` under `mockllm/{JUDGE}` beside it. Each sample has two `model`
  events (answer, then grade) and one `score` event; a sample member is ~12 kB unpacked (the
  grading prompt is stored in the model event and again in `metadata.grading`), so these logs
  are larger than `../eval_zstd/`'s.
* Not in these logs (every reply here has a grade): when the judge's reply has no `GRADE:`,
  0.3.285 stores `Score.unscored(...)`: `"value": NaN` (a bare JSON `NaN`), `"reason":
  "grader_failed"`, `explanation` "Grade not found in model output: ...", and the sample counts in
  `results.scores[].unscored_samples`, left out of Inspect's accuracy.
"""
    (OUT / "README.md").write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def main() -> None:
    """Run the evals in a scratch folder, then replace ``inspect/model_graded/`` only."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep-work", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="evalbars-judged-"))
    shutil.copy(INSPECT_DATASET, work / "toyqa.jsonl")
    run_evals(work)
    logs = read_back(work / SCENARIO_DIR)
    if [e["model"] for e in logs] != [f"mockllm/{m}" for m in MODELS]:
        raise SystemExit(f"unexpected logs: {[e['file'] for e in logs]}")
    ids = [s["id"] for s in logs[0]["samples"]]
    assert all([s["id"] for s in e["samples"]] == ids for e in logs)
    chosen = labelled_questions(ids)

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for entry in logs:
        shutil.copy2(work / SCENARIO_DIR / entry["file"], OUT / entry["file"])
    write_labels(logs, chosen)
    write_readme(logs, chosen, same_answers_as_eval_zstd(logs))
    for r in summary(logs, chosen):
        print(
            f"  {r['model']}: judge {r['judge_acc']:.2f}, true {r['true_acc']:.2f}, "
            f"labelled {r['n_labelled']} (judge {r['judge_acc_labelled']:.3f}, "
            f"true {r['true_acc_labelled']:.3f}), agree {r['agree']}/{r['n']}"
        )
    if args.keep_work:
        print("scratch folder kept:", work)
    else:
        shutil.rmtree(work)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
