"""Regenerate the token-usage Inspect fixture under ``tests/data/harness/inspect_usage/``.

Test data only, like ``make_harness_logs.py`` beside it (whose hash ``unit()``, skills and
dataset this script reuses, and whose judge rule it borrows from ``make_judged_logs.py``):
evalbars never imports inspect-ai. A developer runs this once, by hand, in a throwaway
virtualenv holding inspect-ai 0.3.285, and commits what it writes:

* three logs of the toyqa questions (20 samples, 1 epoch), each answered by one fake model
  whose every call reports a deterministic ``ModelUsage``, so that Inspect itself fills each
  sample's ``model_usage`` (summed over the sample's calls), its ``role_usage`` (the grader's
  calls) and, from prices registered with ``set_model_info()``, every usage's ``total_cost``:

  - ``fake-strong``, ``match()``, ``.eval`` (zstd);
  - ``fake-mid``, ``model_graded_qa()`` with the grader role bound to another fake,
    ``mockllm/fake-judge``: two models in each sample's ``model_usage``, ``.eval``;
  - ``fake-weak`` graded by **itself** (the grader role bound to a second ``mockllm/fake-weak``):
    Inspect sums both roles' calls under the one model name in ``model_usage``, and only
    ``role_usage["grader"]`` tells the grading apart, ``.eval``;

  in ``logs/`` (a folder of logs only, so that a reader can be pointed at it);
* ``expected_usage.csv``: per (log, sample, epoch) the answering model's tokens, calls and cost,
  the grader's tokens and cost, and the score, written from the fakes' own ledger of what they
  reported (the truth) and checked here against what Inspect's reader finds in the logs;
* ``prices.csv``: the prices given to Inspect (per million input and output tokens).

The fakes. Every call reports ``input_tokens = words(prompt) * k`` and ``output_tokens =
words(reply) * k`` with ``k`` the model's tokens per word (:data:`TOKENS_PER_WORD`, as if each
model had its own tokenizer), ``words`` being ``str.split`` over every input message's text. The
answering fakes answer as ``make_harness_logs.inspect_fake_outputs`` does (same skills, same
hash); the solver asks once more ("Please give your best guess.") when the first reply is
``I don't know.``, and the second reply is a coin flip between the target and a wrong answer,
so those samples hold two calls. The judge grades as ``make_judged_logs.judge_grade`` does.

Usage (from the repository root)::

    python3 -m venv /tmp/usage-venv
    grep -v -E '^(torch|lm_eval)==' tests/reference/harness/requirements.txt > /tmp/usage-constraints.txt
    /tmp/usage-venv/bin/pip install inspect_ai==0.3.285 -c /tmp/usage-constraints.txt
    /tmp/usage-venv/bin/python tests/reference/harness/make_usage_logs.py
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval_fn
from inspect_ai.dataset import json_dataset
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessageUser,
    ModelCost,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    get_model,
    set_model_info,
)
from inspect_ai.scorer import match, model_graded_qa, value_to_float
from inspect_ai.solver import TaskState, solver
from inspect_ai.solver._task_state import sample_state  # as make_harness_logs.py uses it

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_harness_logs import (  # noqa: E402  (the sibling scripts, not a package)
    DATA,
    INSPECT_DATASET,
    INSPECT_SKILL,
    inspect_dataset_rows,
    unit,
)
from make_judged_logs import judge_grade, truly_right  # noqa: E402

OUT = DATA / "inspect_usage"
SCENARIO_DIR = "inspect_usage"  # relative to the scratch folder: no machine paths in the logs
#: Tokens per word of each fake ("its tokenizer"), for input and output alike.
TOKENS_PER_WORD = {"fake-strong": 3, "fake-mid": 2, "fake-weak": 1, "fake-judge": 1}
#: Dollars per million input and output tokens, registered with Inspect (``set_model_info``).
PRICES = {
    "mockllm/fake-strong": (3.0, 15.0),
    "mockllm/fake-mid": (0.5, 1.5),
    "mockllm/fake-weak": (0.15, 0.6),
    "mockllm/fake-judge": (1.0, 4.0),
}
DECLINE = "I don't know."
FOLLOW_UP = "Please give your best guess."
#: (answering fake, task name, grader fake or None, log format).
RUNS = (
    ("fake-strong", "toyqa_usage", None, "eval"),
    ("fake-mid", "toyqa_usage_judged", "fake-judge", "eval"),
    ("fake-weak", "toyqa_usage_judged", "fake-weak", "eval"),
)

#: What the fakes reported, per (answering fake, role, sample id, epoch): [input, output, calls].
LEDGER: dict[tuple[str, str, str, int], list[int]] = {}


def words(messages) -> int:
    """Words of every message's text (``str.split``): the fakes' prompt length."""
    return sum(len(str(m.text).split()) for m in messages)


def report(result: ModelOutput, label: str, run: str, role: str, input) -> ModelOutput:  # noqa: A002
    """Attach this call's usage to ``result`` and add it to the ledger."""
    k = TOKENS_PER_WORD[label]
    n_in, n_out = words(input) * k, len(result.completion.split()) * k
    result.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
    state = sample_state()
    entry = LEDGER.setdefault((run, role, str(state.sample_id), state.epoch), [0, 0, 0])
    entry[0] += n_in
    entry[1] += n_out
    entry[2] += 1
    return result


def answer_outputs(label: str, rows: list[dict]):
    """``custom_outputs`` of an answering fake: make_harness_logs' outcome rule, and a coin
    flip between the target and a wrong answer when asked again after declining."""
    skill = INSPECT_SKILL[label]
    by_category: dict[str, list[str]] = {}
    for row in rows:
        by_category.setdefault(row["metadata"]["category"], []).append(row["target"])

    def output(input, tools, tool_choice, config):  # noqa: A002 - mockllm's signature
        state = sample_state()
        target = state.target.text
        others = [t for t in by_category[state.metadata["category"]] if t != target]
        wrong = others[int(len(others) * unit(label, state.sample_id, "wrong"))]
        if str(input[-1].text) == FOLLOW_UP:
            guess = unit(label, state.sample_id, state.epoch, "guess") < 0.5
            text = f"The answer is {target if guess else wrong}."
        else:
            u = unit(label, state.sample_id, state.epoch, "outcome")
            if u < skill:
                text = f"The answer is {target}."
            elif u < skill + 0.15:
                text = f"Either {target} or {wrong}."
            elif u < skill + 0.22:
                text = DECLINE
            else:
                text = f"The answer is {wrong}."
        result = ModelOutput.from_content(model=label, content=text)
        return report(result, label, label, "answer", input)

    return output


def judge_outputs(judge: str, label: str):
    """``custom_outputs`` of the grader ``judge`` grading ``label``'s answers (the rule of
    ``make_judged_logs.judge_grade``; its reply ends with ``GRADE: C`` or ``GRADE: I``)."""

    def output(input, tools, tool_choice, config):  # noqa: A002 - mockllm's signature
        state = sample_state()
        answer, target = state.output.completion, state.target.text
        prompt = "\n".join(str(m.text) for m in input)
        assert answer in prompt and target in prompt, (state.sample_id, prompt)
        grade = judge_grade(label, str(state.sample_id), truly_right(answer, target))
        verdict = "meets" if grade == "C" else "does not meet"
        text = (
            f'The criterion is "{target}". The submission says "{answer}". '
            f"The submission {verdict} the criterion.\n\nGRADE: {grade}"
        )
        result = ModelOutput.from_content(model=judge, content=text)
        return report(result, judge, label, "grader", input)

    return output


@solver
def answer_with_one_retry():
    """Generate; when the reply is ``I don't know.``, ask once more for a best guess."""

    async def solve(state: TaskState, generate):
        state = await generate(state)
        if state.output.completion.strip() == DECLINE:
            state.messages.append(ChatMessageUser(content=FOLLOW_UP))
            state = await generate(state)
        return state

    return solve


def register_prices() -> None:
    """Give Inspect a price per fake, so it records ``total_cost`` on every usage."""
    for model, (price_in, price_out) in PRICES.items():
        set_model_info(
            model,
            ModelInfo(
                organization="evalbars",
                model=model.split("/", 1)[1],
                cost=ModelCost(
                    input=price_in, output=price_out, input_cache_write=0.0, input_cache_read=0.0
                ),
            ),
        )


def run_evals(work: Path) -> None:
    """One eval per :data:`RUNS` entry, in ``work`` (a scratch folder outside any checkout)."""
    rows = inspect_dataset_rows()
    register_prices()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        for label, task_name, grader, log_format in RUNS:
            scorer = model_graded_qa() if grader else match()
            task = Task(
                name=task_name,
                dataset=json_dataset("toyqa.jsonl"),
                solver=answer_with_one_retry(),
                scorer=scorer,
            )
            model = get_model(f"mockllm/{label}", custom_outputs=answer_outputs(label, rows))
            roles = {}
            if grader:
                roles["grader"] = get_model(
                    f"mockllm/{grader}", custom_outputs=judge_outputs(grader, label)
                )
            (log,) = inspect_eval_fn(
                task,
                model=model,
                model_roles=roles or None,
                log_dir=SCENARIO_DIR,
                log_format=log_format,
                display="none",
            )
            if log.status != "success":
                raise SystemExit(f"{label}: status {log.status}: {log.error}")
            print(f"  inspect_usage: {label} ({task_name}, {log_format}) -> {log.status}")
    finally:
        os.chdir(cwd)


def cost(model: str, n_in: int, n_out: int) -> float:
    """What Inspect's ``compute_model_cost`` gives for these tokens at :data:`PRICES`."""
    price_in, price_out = PRICES[model]
    return n_in * price_in / 1_000_000 + n_out * price_out / 1_000_000


EXPECTED_COLUMNS = [
    "log",
    "model",
    "task",
    "question_id",
    "epoch",
    "input_tokens",
    "output_tokens",
    "calls",
    "cost",
    "grader",
    "grader_input_tokens",
    "grader_output_tokens",
    "grader_cost",
    "score",
]


def expected_rows(folder: Path) -> list[dict]:
    """The expected table, from the ledger, checked against each log as Inspect reads it.

    For the self-graded log the answering model's tokens are ``model_usage[model]`` minus
    ``role_usage["grader"]``; both sides are checked.
    """
    to_float = value_to_float()
    rows = []
    order = {f"mockllm/{label}": i for i, (label, *_) in enumerate(RUNS)}
    logs = sorted(
        (p for p in folder.iterdir() if p.suffix in (".eval", ".json")),
        key=lambda p: order[read_eval_log(str(p), header_only=True).eval.model],
    )
    for path in logs:
        log = read_eval_log(str(path))
        model = log.eval.model
        label = model.split("/", 1)[1]
        grader_role = (log.eval.model_roles or {}).get("grader")
        grader = grader_role.model if grader_role else ""
        if path.suffix == ".eval":
            with zipfile.ZipFile(path) as zf:
                assert {i.compress_type for i in zf.infolist()} == {93}, path  # zstd
        for s in log.samples:
            assert s.error is None, (path.name, s.id)
            n_in, n_out, calls = LEDGER[(label, "answer", str(s.id), s.epoch)]
            g_in, g_out, _ = LEDGER.get((label, "grader", str(s.id), s.epoch), ("", "", 0))
            logged = s.model_usage[model]
            role = s.role_usage.get("grader")
            if grader == model:  # one model name for both roles: Inspect summed them
                assert logged.input_tokens == n_in + g_in, (path.name, s.id)
                assert logged.output_tokens == n_out + g_out, (path.name, s.id)
                assert math.isclose(
                    logged.total_cost, cost(model, n_in + g_in, n_out + g_out), rel_tol=1e-12
                )
            else:
                assert (logged.input_tokens, logged.output_tokens) == (n_in, n_out), s.id
                assert math.isclose(logged.total_cost, cost(model, n_in, n_out), rel_tol=1e-12)
            if grader:
                assert (role.input_tokens, role.output_tokens) == (g_in, g_out), s.id
                assert math.isclose(role.total_cost, cost(grader, g_in, g_out), rel_tol=1e-12)
                assert set(s.model_usage) == {model, grader}, s.model_usage
            else:
                assert not s.role_usage and set(s.model_usage) == {model}, s.id
            (scorer,) = s.scores
            rows.append(
                {
                    "log": path.name,
                    "model": model,
                    "task": log.eval.task,
                    "question_id": s.id,
                    "epoch": s.epoch,
                    "input_tokens": n_in,
                    "output_tokens": n_out,
                    "calls": calls,
                    "cost": repr(cost(model, n_in, n_out)),
                    "grader": grader,
                    "grader_input_tokens": g_in,
                    "grader_output_tokens": g_out,
                    "grader_cost": repr(cost(grader, g_in, g_out)) if grader else "",
                    "score": to_float(s.scores[scorer].value),
                }
            )
    return rows


def write_outputs(work: Path) -> list[dict]:
    """Copy the logs into OUT and write ``expected_usage.csv`` and ``prices.csv``."""
    rows = expected_rows(work / SCENARIO_DIR)
    shutil.rmtree(OUT, ignore_errors=True)
    # The logs in a folder of their own: a walk of it (read_items) meets no CSV.
    shutil.copytree(work / SCENARIO_DIR, OUT / "logs")
    with open(OUT / "expected_usage.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=EXPECTED_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(OUT / "prices.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["model", "input", "output"])
        for model, (price_in, price_out) in PRICES.items():
            w.writerow([model, price_in, price_out])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep-work", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalbars-usage-"))
    shutil.copy(INSPECT_DATASET, work / "toyqa.jsonl")
    run_evals(work)
    rows = write_outputs(work)
    for label, *_ in RUNS:
        mine = [r for r in rows if r["model"] == f"mockllm/{label}"]
        print(
            f"  {label}: {len(mine)} samples, {sum(r['calls'] == 2 for r in mine)} with two calls, "
            f"{sum(r['input_tokens'] for r in mine)} in / {sum(r['output_tokens'] for r in mine)} "
            f"out tokens, ${sum(float(r['cost']) for r in mine):.6f}, "
            f"accuracy {sum(r['score'] for r in mine) / len(mine):.2f}"
        )
    if args.keep_work:
        print("scratch folder kept:", work)
    else:
        shutil.rmtree(work)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
