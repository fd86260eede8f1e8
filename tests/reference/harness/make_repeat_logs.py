"""Regenerate the repeated-sample fixtures: lm-eval ``repeats: 3`` and Inspect ``epochs=3``,
two fake models, each run twice with different seeds.

Test data only, like ``make_harness_logs.py`` beside it (whose hash ``unit()``, skills, offline
environment, Inspect task and ``toyqa.jsonl`` this script reuses): evalbars never imports
lm-eval or inspect-ai. Run once, by hand, in the throwaway virtualenv of README.md (lm-eval
0.4.13 and inspect-ai 0.3.285), from the repository root::

    /tmp/harness-venv/bin/python tests/reference/harness/make_repeat_logs.py

It writes, replacing them wholesale once every run has succeeded:

* ``tests/data/harness/lm_eval_repeats/logs/evalbars__fake-{strong,weak}/``: two
  ``results_<ts>.json`` + ``samples_toyarith_repeats_<ts>.jsonl`` per model (seeds 1 and 2),
  task ``toyarith_repeats`` (``lm_eval_repeat_tasks/``): ``repeats: 3``, 24 arithmetic
  questions in three categories, four filter lists (``strict-match``: regex + take_first;
  ``maj@3``: last-number regex + majority_vote + take_first; ``first2-vote``: take_first_k 2 +
  regex + majority_vote + take_first; ``lower-strict``: remove_whitespace + lowercase + regex
  + take_first), ``exact_match`` with ``ignore_case`` and ``regexes_to_ignore: [","]``;
* ``tests/data/harness/inspect_epochs_runs/logs/``: four ``.eval`` logs (zstd), toyqa's 20
  questions, ``epochs=3``, ``match()``, ``mockllm/fake-{strong,weak}`` with seeds 1 and 2;
* ``truth/`` in each: ``truth.json`` (skills, seeds, run shifts, settings, versions),
  ``samples.csv``, one row per (model, seed, question, repeat or epoch) with what the fake
  wrote and the score every filter must give it, computed here from the fake's own choices
  (never with evalbars, never by re-reading the logs); lm-eval's ``votes.csv`` (the voting
  lists' answers per document) and ``runs.csv`` (which log is which model and seed: the seed
  from lm-eval's ``model_args``, from Inspect's ``eval.metadata.fake_seed``).

The fakes. With ``logit p = logit(skill) + d_q + r_s``, a question difficulty
``d_q = 1.2 z(unit("difficulty", question))`` shared by the models and fixed across runs (so
the models' scores pair on questions), and a run shift
``r_s = 0.35 z(unit(model, seed, "run"))`` (z the standard normal quantile), repeat or epoch j
is right when ``unit(model, seed, j, "correct", question) < p``. lm-eval's fake writes its value
(the answer, or the answer +- 1..9) in one of four styles: ``" Working it out, that makes
V.\\n#### V"`` (55%), ``" The answer is V."`` (25%), ``" #### V (checked 2 times)"`` (12%),
``" #### V"`` with thousands separators (8%). Inspect's fake answers ``The answer is
<target>.`` when right, else one of ``Either <target> or <wrong>.``, ``I don't know.``, ``The
answer is <wrong>.`` (all scored I by ``match()``).

lm-eval sends the three repeats of a document as three copies of one request in a row
(``evaluator.py``: ``cloned_reqs.extend([req] * req.repeats)``); the fake numbers them by
counting each prompt it has seen.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_harness_logs import (  # noqa: E402  (the sibling script, not a package)
    DATA,
    INSPECT_DATASET,
    INSPECT_SKILL,
    LM_EVAL_SKILL,
    child_env,
    inspect_dataset_rows,
    inspect_task,
    unit,
)

HERE = Path(__file__).resolve().parent
TASKS = HERE / "lm_eval_repeat_tasks"
LM_OUT = DATA / "lm_eval_repeats"
INSPECT_OUT = DATA / "inspect_epochs_runs"
LM_MODELS = ("evalbars/fake-strong", "evalbars/fake-weak")
INSPECT_MODELS = ("fake-strong", "fake-weak")
SEEDS = (1, 2)
REPEATS = 3
DIFFICULTY_SD, RUN_SD = 1.2, 0.35
STRICT = re.compile(r"#### (\-?[0-9,]+)")
LAST_NUMBER = re.compile(r"(-?[0-9][0-9,]*)")


def z(u: float) -> float:
    return NormalDist().inv_cdf(min(max(u, 1e-12), 1 - 1e-12))


def solve_probability(model: str, seed, question: str, skill: float) -> float:
    """The fake's chance of being right on this question in this run."""
    logit = math.log(skill / (1 - skill))
    logit += DIFFICULTY_SD * z(unit("difficulty", question))  # shared: hard for every model
    logit += RUN_SD * z(unit(model, seed, "run"))
    return 1 / (1 + math.exp(-logit))


# ---------------------------------------------------------------------------------------
# The lm-eval task's data and the fake's answers
# ---------------------------------------------------------------------------------------


def dataset_rows() -> list[dict]:
    """24 arithmetic questions (8 per category), seeded: some products pass 1,000."""
    rng = random.Random(38)
    rows = []
    for category, symbol, word in (
        ("addition", "+", "plus"),
        ("subtraction", "-", "minus"),
        ("multiplication", "*", "times"),
    ):
        for _ in range(8):
            if category == "multiplication":
                a, b = rng.randint(12, 79), rng.randint(11, 49)
            else:
                a, b = rng.randint(10, 999), rng.randint(10, 999)
            value = {"+": a + b, "-": a - b, "*": a * b}[symbol]
            index = len(rows) + 1
            rows.append(
                {
                    "id": f"rep-{index:03d}",
                    "category": category,
                    "question": f"What is {a} {word} {b}?",
                    "answer": str(value),
                }
            )
    return rows


def lm_answer(model: str, seed, repeat: int, context: str, answer: int, skill: float):
    """(value, style, right) of the fake's ``repeat``-th answer (0-based) to ``context``."""
    p = solve_probability(model, seed, context, skill)
    right = unit(model, seed, repeat, "correct", context) < p
    value = answer
    if not right:
        offset = 1 + int(9 * unit(model, seed, repeat, "offset", context))
        value = answer + (offset if unit(model, seed, repeat, "sign", context) < 0.5 else -offset)
    u = unit(model, seed, repeat, "style", context)
    style = "working" if u < 0.55 else "plain" if u < 0.80 else "checked" if u < 0.92 else "commas"
    return value, style, right


def lm_text(value: int, style: str) -> str:
    return {
        "working": f" Working it out, that makes {value}.\n#### {value}",
        "plain": f" The answer is {value}.",
        "checked": f" #### {value} (checked 2 times)",
        "commas": f" #### {value:,}",
    }[style]


def register_fake_lm() -> None:
    """Register ``evalbars-fake-repeats`` with lm-eval (in the lm-eval child only)."""
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    @register_model("evalbars-fake-repeats")
    class EvalbarsRepeatsLM(LM):
        """The fake of the module docstring: ``pretrained=`` names it, ``seed=`` is the run."""

        def __init__(self, pretrained: str, seed: int | str = 0, **kwargs) -> None:
            super().__init__()
            self.fake_name, self.seed = pretrained, str(seed)
            self.skill = LM_EVAL_SKILL[pretrained]
            self.seen: Counter = Counter()

        def generate_until(self, requests):
            out = []
            for req in requests:
                context, _ = req.args
                repeat = self.seen[context]
                self.seen[context] += 1
                value, style, _ = lm_answer(
                    self.fake_name, self.seed, repeat, context, int(req.doc["answer"]), self.skill
                )
                out.append(lm_text(value, style))
            return out

        def loglikelihood(self, requests):
            raise NotImplementedError("the repeats fixture has generation tasks only")

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError("the repeats fixture has generation tasks only")


def lm_eval_cli(args: list[str]) -> None:
    """Child: register the fake, then hand over to lm-eval's own CLI."""
    register_fake_lm()
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm-eval", "run", *args]
    cli_evaluate()


def run_lm_eval(work: Path) -> Path:
    tasks = work / "lm_eval_repeat_tasks"
    shutil.copytree(TASKS, tasks)
    out = work / "lm_eval"
    for pretrained in LM_MODELS:
        for seed in SEEDS:
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "lm-eval-cli",
                "--",
                "--model",
                "evalbars-fake-repeats",
                "--model_args",
                f"pretrained={pretrained},seed={seed}",
                "--tasks",
                "toyarith_repeats",
                "--include_path",
                ".",
                "--batch_size",
                "1",
                "--device",
                "cpu",
                "--log_samples",
                "--output_path",
                str(out),
            ]
            print("+", " ".join(cmd[2:]), flush=True)
            subprocess.run(cmd, cwd=tasks, env=child_env(work), check=True)
    return out


def prompt_of(row: dict) -> str:
    """The context lm-eval sends for a row (the task's doc_to_text, zero-shot)."""
    return f"Question: {row['question']}\nAnswer:"


def exact(prediction: str, target: str) -> float:
    """The task's exact_match: commas removed from both, case ignored."""
    return float(prediction.replace(",", "").lower() == target.replace(",", "").lower())


def lm_truth_rows() -> list[dict]:
    rows = []
    for model in LM_MODELS:
        for seed in SEEDS:
            for row in dataset_rows():
                context, answer = prompt_of(row), int(row["answer"])
                p = solve_probability(model, str(seed), context, LM_EVAL_SKILL[model])
                for repeat in range(REPEATS):
                    value, style, right = lm_answer(
                        model, str(seed), repeat, context, answer, LM_EVAL_SKILL[model]
                    )
                    text = lm_text(value, style)
                    strict = STRICT.findall(text)
                    last = LAST_NUMBER.findall(text)
                    lower = re.findall(r"the answer is (-?[0-9,]+)", text.strip().lower())
                    rows.append(
                        {
                            "model": model,
                            "seed": seed,
                            "question_id": row["id"],
                            "category": row["category"],
                            "repeat": repeat + 1,
                            "p_correct": round(p, 6),
                            "value": value,
                            "style": style,
                            "right": int(right),
                            "strict_answer": strict[0].strip() if strict else "[invalid]",
                            "last_number": last[-1].strip() if last else "[invalid]",
                            "lower_answer": lower[0].strip() if lower else "[invalid]",
                        }
                    )
    for row in rows:
        target = next(r["answer"] for r in dataset_rows() if r["id"] == row["question_id"])
        row["score_strict"] = exact(row["strict_answer"], target)
        row["score_last_number"] = exact(row["last_number"], target)
        row["score_lower"] = exact(row["lower_answer"], target)
    return rows


def lm_truth_votes(rows: list[dict]) -> list[dict]:
    """The majority_vote filters' expected per-document scores (ties: first seen)."""
    targets = {r["id"]: r["answer"] for r in dataset_rows()}
    grouped: dict = {}
    for row in rows:
        grouped.setdefault((row["model"], row["seed"], row["question_id"]), []).append(row)
    votes = []
    for (model, seed, question), group in grouped.items():
        answers = [r["last_number"] for r in sorted(group, key=lambda r: r["repeat"])]
        maj3 = Counter(answers).most_common(1)[0][0]
        first2 = Counter(answers[:2]).most_common(1)[0][0]
        votes.append(
            {
                "model": model,
                "seed": seed,
                "question_id": question,
                "maj3_answer": maj3,
                "score_maj3": exact(maj3, targets[question]),
                "first2_answer": first2,
                "score_first2": exact(first2, targets[question]),
            }
        )
    return votes


# ---------------------------------------------------------------------------------------
# Inspect
# ---------------------------------------------------------------------------------------


def inspect_outcome(label: str, seed: int, sample_id: str, epoch: int):
    """(outcome, text-maker) of the Inspect fake on one sample and epoch."""
    p = solve_probability(label, seed, sample_id, INSPECT_SKILL[label])
    if unit(label, seed, sample_id, epoch, "correct") < p:
        return "right"
    u = unit(label, seed, sample_id, epoch, "wrong kind")
    return "either" if u < 0.4 else "dont_know" if u < 0.6 else "wrong"


def inspect_outputs(label: str, seed: int, rows: list[dict]):
    """``custom_outputs`` for mockllm: which sample and epoch from Inspect's sample state."""
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.solver._task_state import sample_state

    by_category: dict = {}
    for row in rows:
        by_category.setdefault(row["metadata"]["category"], []).append(row["target"])

    def output(input, tools, tool_choice, config):  # noqa: A002 - mockllm's signature
        state = sample_state()
        target = state.target.text
        others = [t for t in by_category[state.metadata["category"]] if t != target]
        wrong = others[int(len(others) * unit(label, seed, state.sample_id, "wrong"))]
        outcome = inspect_outcome(label, seed, state.sample_id, state.epoch)
        text = {
            "right": f"The answer is {target}.",
            "either": f"Either {target} or {wrong}.",
            "dont_know": "I don't know.",
            "wrong": f"The answer is {wrong}.",
        }[outcome]
        result = ModelOutput.from_content(model=label, content=text)
        n_in = sum(len(str(m.text).split()) for m in input)
        n_out = len(text.split())
        result.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return result

    return output


def run_inspect(work: Path) -> None:
    from inspect_ai import eval as inspect_eval_fn
    from inspect_ai.model import get_model

    cwd = os.getcwd()
    os.chdir(work)
    try:
        for label in INSPECT_MODELS:
            for seed in SEEDS:
                model = get_model(
                    f"mockllm/{label}",
                    custom_outputs=inspect_outputs(label, seed, inspect_dataset_rows()),
                )
                logs = inspect_eval_fn(
                    inspect_task("toyqa"),
                    model=model,
                    log_dir="inspect_epochs_runs",
                    display="none",
                    epochs=REPEATS,
                    metadata={"fake_seed": seed},
                )
                print(f"  inspect {label} seed {seed} -> {logs[0].status}", flush=True)
                if logs[0].status != "success":
                    raise SystemExit(f"inspect run {label} seed {seed}: {logs[0].status}")
    finally:
        os.chdir(cwd)


def inspect_truth_rows() -> list[dict]:
    rows = []
    for label in INSPECT_MODELS:
        for seed in SEEDS:
            for row in inspect_dataset_rows():
                p = solve_probability(label, seed, row["id"], INSPECT_SKILL[label])
                for epoch in range(1, REPEATS + 1):
                    outcome = inspect_outcome(label, seed, row["id"], epoch)
                    rows.append(
                        {
                            "model": f"mockllm/{label}",
                            "seed": seed,
                            "question_id": row["id"],
                            "category": row["metadata"]["category"],
                            "epoch": epoch,
                            "p_correct": round(p, 6),
                            "outcome": outcome,
                            "score_match": int(outcome == "right"),
                        }
                    )
    return rows


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def versions() -> dict:
    from importlib.metadata import version

    return {
        "python": platform.python_version(),
        "lm_eval": version("lm_eval"),
        "inspect_ai": version("inspect_ai"),
    }


def write_truth(folder: Path, settings: dict, files: dict) -> None:
    truth = folder / "truth"
    truth.mkdir(parents=True)
    (truth / "truth.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    for name, rows in files.items():
        write_csv(truth / name, rows)


def lm_runs(folder: Path) -> list[dict]:
    """One row per lm-eval run: the results file, the fake and the seed it records."""
    rows = []
    for results in sorted(folder.glob("*/results_*.json")):
        config = json.loads(results.read_text(encoding="utf-8"))["config"]["model_args"]
        stamp = results.name[len("results_") : -len(".json")]
        rows.append(
            {
                "model": config["pretrained"],
                "seed": config["seed"],
                "run": stamp,
                "results": str(results.relative_to(folder)),
                "samples": str(
                    results.with_name(f"samples_toyarith_repeats_{stamp}.jsonl").relative_to(folder)
                ),
            }
        )
    return rows


def inspect_runs(folder: Path) -> list[dict]:
    """One row per Inspect log: the fake, the seed (eval metadata) and the run id."""
    from inspect_ai.log import read_eval_log

    rows = []
    for log in sorted(folder.glob("*.eval")):
        header = read_eval_log(str(log), header_only=True)
        rows.append(
            {
                "model": header.eval.model,
                "seed": header.eval.metadata["fake_seed"],
                "run": header.eval.run_id,
                "log": log.name,
            }
        )
    return rows


def main() -> None:
    # The task's data: written here, committed beside the task (byte-identical each run).
    data = TASKS / "data" / "toyarith_repeats.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("".join(json.dumps(r) + "\n" for r in dataset_rows()), encoding="utf-8")

    work = Path(tempfile.mkdtemp(prefix="evalbars-repeats-"))
    shutil.copy(INSPECT_DATASET, work / "toyqa.jsonl")
    run_lm_eval(work)
    run_inspect(work)

    common = {
        "seeds": list(SEEDS),
        "difficulty_sd": DIFFICULTY_SD,
        "run_sd": RUN_SD,
        "versions": versions(),
        "script": "tests/reference/harness/make_repeat_logs.py",
    }
    for out in (LM_OUT, INSPECT_OUT):
        shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(work / "lm_eval", LM_OUT / "logs")
    shutil.copytree(work / "inspect_epochs_runs", INSPECT_OUT / "logs")
    lm_rows = lm_truth_rows()
    run_shift = {
        f"{m} seed {s}": round(RUN_SD * z(unit(m, str(s), "run")), 6)
        for m in LM_MODELS
        for s in SEEDS
    }
    write_truth(
        LM_OUT,
        common
        | {
            "harness": "lm-eval",
            "task": "toyarith_repeats",
            "repeats": REPEATS,
            "skills": {m: LM_EVAL_SKILL[m] for m in LM_MODELS},
            "run_shift_logit": run_shift,
            "samples_csv": "one row per (model, seed, question, repeat): what the fake wrote "
            "and each filter's per-repeat answer and exact_match score",
            "votes_csv": "one row per (model, seed, question): maj@3 and first2-vote answers",
        },
        {
            "samples.csv": lm_rows,
            "votes.csv": lm_truth_votes(lm_rows),
            "runs.csv": lm_runs(LM_OUT / "logs"),
        },
    )
    inspect_shift = {
        f"mockllm/{m} seed {s}": round(RUN_SD * z(unit(m, s, "run")), 6)
        for m in INSPECT_MODELS
        for s in SEEDS
    }
    write_truth(
        INSPECT_OUT,
        common
        | {
            "harness": "inspect",
            "task": "toyqa",
            "epochs": REPEATS,
            "skills": {f"mockllm/{m}": INSPECT_SKILL[m] for m in INSPECT_MODELS},
            "run_shift_logit": inspect_shift,
            "samples_csv": "one row per (model, seed, question, epoch): the fake's outcome "
            "and match()'s expected score (1 only for 'The answer is <target>.')",
        },
        {"samples.csv": inspect_truth_rows(), "runs.csv": inspect_runs(INSPECT_OUT / "logs")},
    )
    shutil.rmtree(work)
    print("wrote", LM_OUT, "and", INSPECT_OUT)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "lm-eval-cli":
        lm_eval_cli(sys.argv[3:] if sys.argv[2:3] == ["--"] else sys.argv[2:])
    else:
        main()
