"""Regenerate the evaluation-harness log fixtures under ``tests/data/harness/``.

Test data only: evalbars never imports lm-eval or inspect-ai, and neither harness is a
runtime, test or CI dependency. A developer runs this script once, by hand, in a throwaway
virtualenv holding the versions pinned in ``requirements.txt`` (see README.md beside this
file), and commits what it writes:

* ``tests/data/harness/lm_eval/``  -- lm-evaluation-harness output folders, exactly as
  ``lm-eval run --log_samples --output_path ...`` lays them out;
* ``tests/data/harness/inspect/``  -- Inspect logs (``.eval`` with zstd members from the
  current release, ``.eval`` with deflate members from an older pinned release, ``.json``),
  one folder per scenario;
* ``tests/data/harness/expected/`` -- for every log, the item table a correct reader must
  produce, made with each harness's *own* reader (never with evalbars' code), plus
  ``manifest.csv`` saying which log each table belongs to and what it exercises.

No model weights and no network: the "models" are deterministic fakes whose answers are a
hash of (fake model name, request text or sample id, epoch) compared with a per-model skill,
and every dataset is a local file in this folder.

Usage (from the repository root)::

    python3 -m venv /tmp/harness-venv
    /tmp/harness-venv/bin/pip install torch==2.13.0        # CPU wheel first, see README
    /tmp/harness-venv/bin/pip install -r tests/reference/harness/requirements.txt
    python3 -m venv /tmp/harness-venv-inspect-deflate
    /tmp/harness-venv-inspect-deflate/bin/pip install -r tests/reference/harness/requirements-inspect-deflate.txt
    /tmp/harness-venv/bin/python tests/reference/harness/make_harness_logs.py \\
        --deflate-python /tmp/harness-venv-inspect-deflate/bin/python

The script also runs itself as a child process (sub-commands ``lm-eval-cli``,
``inspect-cancelled`` and ``inspect-deflate``) so that every harness run starts in a fresh
interpreter, as a user's command-line run would.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATA = REPO / "tests" / "data" / "harness"
LM_EVAL_TASKS = HERE / "lm_eval_tasks"
INSPECT_DATASET = HERE / "inspect_data" / "toyqa.jsonl"

# ---------------------------------------------------------------------------------------
# The fake models
# ---------------------------------------------------------------------------------------

# Probability that a fake model "knows" an answer. When it does not know, it still hits the
# right choice by chance (about 1 in 4 on the multiple-choice tasks), so observed accuracy
# is a little above these numbers. Chosen so the models differ clearly on ~40 questions.
LM_EVAL_SKILL = {
    "evalbars/fake-strong": 0.75,
    "evalbars/fake-mid": 0.55,
    "evalbars/fake-weak": 0.40,
}
INSPECT_SKILL = {
    "fake-strong": 0.80,
    "fake-mid": 0.60,
    "fake-weak": 0.45,
}


def unit(*parts: object) -> float:
    """Map the parts to a number in [0, 1) through SHA-256: a reproducible coin.

    Python's ``hash()`` is salted per process, so it cannot be used here; SHA-256 of the
    parts joined by an unlikely separator gives the same value on every machine and run.
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def register_fake_lm() -> None:
    """Register the ``evalbars-fake`` model with lm-eval's model registry.

    Imported lazily so that the Inspect-only child (run under another virtualenv without
    lm-eval) can import this file.
    """
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    @register_model("evalbars-fake")
    class EvalbarsFakeLM(LM):
        """A weightless lm-eval model whose answers are hash-decided with a given skill.

        ``pretrained=`` names the fake model; lm-eval copies that string into the results
        file's ``model_name`` (and sanitises it into the output folder name), exactly as
        for a Hugging Face model. ``seed=`` salts the hash, so a re-run with another seed
        is "the same model" with different outputs, like a re-run with sampling.

        The model is an oracle with a controlled error rate: it reads the gold answer from
        the request's document (``doc["answer"]``) and answers right with probability
        ``skill`` for that question, decided once per (model, seed, prompt).
        """

        def __init__(self, pretrained: str, seed: int | str = 0, **kwargs) -> None:
            super().__init__()
            if pretrained not in LM_EVAL_SKILL:
                raise ValueError(
                    f"unknown fake model {pretrained!r}; one of {sorted(LM_EVAL_SKILL)}"
                )
            self.fake_name = pretrained
            self.seed = str(seed)
            self.skill = LM_EVAL_SKILL[pretrained]

        def _coin(self, *parts: object) -> float:
            return unit(self.fake_name, self.seed, *parts)

        def loglikelihood(self, requests):
            """Return (log-likelihood, is_greedy) per (context, continuation) request.

            For a multiple-choice doc lm-eval sends one request per choice, with the choice
            index in ``Instance.idx``. If the model "knows" the question, the gold choice
            gets -0.01 (the best raw and length-normalised score, so ``acc`` and
            ``acc_norm`` are both right); every other choice gets a hash-drawn value in
            [-4.5, -0.5). Unknown questions are thus a random guess, and because acc_norm
            divides by the continuation's byte length, acc and acc_norm can pick different
            choices there.
            """
            out = []
            for req in requests:
                context, continuation = req.args
                knows = self._coin("knows", context) < self.skill
                if knows and req.idx == int(req.doc["answer"]):
                    ll = -0.01
                else:
                    ll = -(0.5 + 4.0 * self._coin("ll", context, continuation))
                out.append((ll, False))
            return out

        def loglikelihood_rolling(self, requests):
            """Perplexity requests (unused by the fixture tasks): a hash-drawn value."""
            return [-(1.0 + 10.0 * self._coin("rolling", req.args[0])) for req in requests]

        def generate_until(self, requests):
            """Answer arithmetic questions in one of three styles, right or wrong.

            The style decides which filter can read the number, so the two filters of the
            ``toyarith`` task disagree on some questions:

            * ``"... makes 42.\\n#### 42"``: both ``strict-match`` and ``flexible-extract``;
            * ``"The answer is 42."``: no ``####``, so ``strict-match`` gives ``[invalid]``;
            * ``"#### 42 (checked 2 times)"``: strict reads 42, flexible takes the last
              number, 2.
            """
            out = []
            for req in requests:
                context, _gen_kwargs = req.args
                answer = int(req.doc["answer"])
                if self._coin("knows", context) < self.skill:
                    value = answer
                else:
                    offset = 1 + int(9 * self._coin("offset", context))
                    value = answer + (offset if self._coin("sign", context) < 0.5 else -offset)
                style = self._coin("style", context)
                if style < 0.6:
                    text = f" Working it out, that makes {value}.\n#### {value}"
                elif style < 0.85:
                    text = f" The answer is {value}."
                else:
                    text = f" #### {value} (checked 2 times)"
                out.append(text)
            return out


def inspect_fake_outputs(label: str, dataset_rows: list[dict]):
    """Return a ``custom_outputs`` callable for Inspect's ``mockllm`` provider.

    ``mockllm`` calls it once per generate with (input, tools, tool_choice, config), which
    carry neither the sample id nor the epoch, so it asks Inspect which sample is running
    (``sample_state()``, an internal helper also present in the deflate-era release).
    Outcome per (label, sample id, epoch), with u a hash-drawn number in [0, 1):

    * u < skill:               "The answer is <target>."      (match: C)
    * u < skill + 0.15:        "Either <target> or <wrong>."  (match: I; partial_credit: P)
    * u < skill + 0.22:        "I don't know."                (match: I; partial_credit: N)
    * otherwise:               "The answer is <wrong>."       (I)

    <wrong> is another sample's target from the same category. Token usage is filled in
    by hand: otherwise mockllm counts tokens with tiktoken, which downloads its encoding.
    """
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.solver._task_state import sample_state

    skill = INSPECT_SKILL[label]
    by_category: dict[str, list[str]] = {}
    for row in dataset_rows:
        by_category.setdefault(row["metadata"]["category"], []).append(row["target"])

    def output(input, tools, tool_choice, config):  # noqa: A002 - mockllm's signature
        state = sample_state()
        target = state.target.text
        others = [t for t in by_category[state.metadata["category"]] if t != target]
        wrong = others[int(len(others) * unit(label, state.sample_id, "wrong"))]
        u = unit(label, state.sample_id, state.epoch, "outcome")
        if u < skill:
            text = f"The answer is {target}."
        elif u < skill + 0.15:
            text = f"Either {target} or {wrong}."
        elif u < skill + 0.22:
            text = "I don't know."
        else:
            text = f"The answer is {wrong}."
        result = ModelOutput.from_content(model=label, content=text)
        n_in = sum(len(str(m.text).split()) for m in input)
        n_out = len(text.split())
        result.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return result

    return output


# ---------------------------------------------------------------------------------------
# lm-evaluation-harness runs
# ---------------------------------------------------------------------------------------

# (pretrained=, seed=) of each run, in order. The fourth run repeats fake-mid into the same
# output folder with another seed: two timestamped runs of one model side by side, whose
# outputs differ so a test can tell which one a reader took.
LM_EVAL_RUNS = [
    ("evalbars/fake-strong", 1),
    ("evalbars/fake-mid", 1),
    ("evalbars/fake-weak", 1),
    ("evalbars/fake-mid", 2),
]
LM_EVAL_TASK_LIST = "toybench,toyarith"


def child_env(work: Path) -> dict[str, str]:
    """Environment of every harness child: offline, caches inside the scratch folder."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(work / "hf-home"),  # no stale dataset cache from an earlier run
        TOKENIZERS_PARALLELISM="false",
        PYTHONHASHSEED="0",
    )
    return env


def run_lm_eval(work: Path) -> Path:
    """Run ``lm-eval run`` once per entry of LM_EVAL_RUNS; return the output folder.

    Runs happen in a scratch copy of ``lm_eval_tasks/`` outside any git checkout: the
    task YAMLs name their data files relative to the working directory, and lm-eval
    records ``git describe`` of the working directory, which would otherwise be
    evalbars' own commit.
    """
    tasks = work / "lm_eval_tasks"
    shutil.copytree(LM_EVAL_TASKS, tasks)
    out = work / "lm_eval"
    for pretrained, seed in LM_EVAL_RUNS:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "lm-eval-cli",
            "--",
            "--model",
            "evalbars-fake",
            "--model_args",
            f"pretrained={pretrained},seed={seed}",
            "--tasks",
            LM_EVAL_TASK_LIST,
            "--include_path",
            ".",
            "--batch_size",
            "1",
            "--device",
            "cpu",  # lm-eval's default is cuda:0, recorded in config.device
            "--log_samples",
            "--output_path",
            str(out),
        ]
        print("+", " ".join(cmd[2:]), flush=True)
        subprocess.run(cmd, cwd=tasks, env=child_env(work), check=True)
    return out


def lm_eval_cli(args: list[str]) -> None:
    """Child: register the fake model, then hand over to lm-eval's own CLI entry point."""
    register_fake_lm()
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm-eval", "run", *args]
    cli_evaluate()


# ---------------------------------------------------------------------------------------
# Inspect runs
# ---------------------------------------------------------------------------------------

FLAKY_IDS = ("q-004", "q-013")  # the samples whose solver raises in the error scenarios
CANCEL_AT = "q-007"  # the sample at which the cancelled run receives SIGINT


def inspect_dataset_rows() -> list[dict]:
    """The toyqa dataset as plain dicts (the fake model needs the other targets)."""
    return [json.loads(line) for line in INSPECT_DATASET.read_text(encoding="utf-8").splitlines()]


def inspect_task(name: str, *, flaky: bool = False, partial: bool = False):
    """Build an Inspect Task over ``toyqa.jsonl`` (read by Inspect's ``json_dataset``).

    ``flaky`` swaps in a solver that raises for FLAKY_IDS; ``partial`` scores with both
    ``match()`` and the C/P/I/N ``partial_credit()`` scorer below.
    """
    from inspect_ai import Task
    from inspect_ai.dataset import json_dataset
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        NOANSWER,
        PARTIAL,
        Score,
        Target,
        accuracy,
        match,
        scorer,
        stderr,
    )
    from inspect_ai.solver import TaskState, generate, solver

    @solver
    def flaky_generate():
        """Generate, but fail on FLAKY_IDS as a broken tool or sandbox would."""

        async def solve(state: TaskState, generate_fn):
            if state.sample_id in FLAKY_IDS:
                raise RuntimeError(f"simulated solver failure on sample {state.sample_id}")
            return await generate_fn(state)

        return solve

    @scorer(metrics=[accuracy(), stderr()])
    def partial_credit():
        """C if the answer ends with the target, P if it names it among others, N if the
        model declines, else I: every value of Inspect's C/I/P/N vocabulary."""

        async def score(state: TaskState, target: Target) -> Score:
            text = state.output.completion
            norm = re.sub(r"[^\w\s]", "", text).strip().lower()
            gold = target.text.lower()
            if "dont know" in norm:
                value = NOANSWER
            elif norm.endswith(gold):
                value = CORRECT
            elif gold in norm:
                value = PARTIAL
            else:
                value = INCORRECT
            return Score(value=value, answer=text)

        return score

    # A relative path: Inspect records it as the dataset location in the log, and the
    # runs happen in a scratch folder holding a copy of the file.
    dataset = json_dataset("toyqa.jsonl")
    return Task(
        name=name,
        dataset=dataset,
        solver=flaky_generate() if flaky else generate(),
        scorer=[match(), partial_credit()] if partial else match(),
    )


def inspect_eval(scenario: str, label: str, task_name: str, **kwargs) -> None:
    """Run one Inspect eval of fake model ``label`` into ``inspect/<scenario>/`` (relative
    to the working directory, the scratch folder; a relative log_dir keeps paths of this
    machine out of the logs).

    The model is ``mockllm/<label>``: mockllm accepts any model name after the slash and
    Inspect records it as ``eval.model``, so each fake model gets its own name.
    """
    from inspect_ai import eval as inspect_eval_fn
    from inspect_ai.model import get_model

    task_kwargs = {k: kwargs.pop(k) for k in ("flaky", "partial") if k in kwargs}
    model = get_model(
        f"mockllm/{label}", custom_outputs=inspect_fake_outputs(label, inspect_dataset_rows())
    )
    logs = inspect_eval_fn(
        inspect_task(task_name, **task_kwargs),
        model=model,
        log_dir=f"inspect/{scenario}",
        display="none",
        **kwargs,
    )
    print(f"  inspect {scenario}: {label} -> {logs[0].status}", flush=True)


def run_inspect_current(work: Path) -> None:
    """Every Inspect scenario written by the current release (zstd ``.eval`` and ``.json``)."""
    cwd = os.getcwd()
    os.chdir(work)
    try:
        # The plain comparison: three models, one epoch, match(), zstd .eval.
        for label in ("fake-strong", "fake-mid", "fake-weak"):
            inspect_eval("eval_zstd", label, "toyqa")
        # Several epochs: samples[].epoch runs 1..3. limit=10 (the first ten samples)
        # keeps the file small: every sample carries ~6 kB of events.
        inspect_eval("epochs", "fake-mid", "toyqa", epochs=3, limit=10)
        # Two scorers, one of which gives partial credit (P) and no-answer (N).
        inspect_eval("partial_credit", "fake-weak", "toyqa_partial", partial=True)
        # Errored samples in a log whose status is still "success".
        inspect_eval(
            "errored_samples", "fake-strong", "toyqa_flaky", flaky=True, fail_on_error=False
        )
        # An eval that stops at the first error: status "error". One sample at a time so
        # the log holds the same samples on every regeneration.
        inspect_eval(
            "status_error",
            "fake-strong",
            "toyqa_flaky",
            flaky=True,
            fail_on_error=True,
            max_samples=1,
        )
        # The JSON log format. Inspect pretty-prints it (~12 kB a sample), hence limit=10.
        inspect_eval("json", "fake-weak", "toyqa", log_format="json", limit=10)
    finally:
        os.chdir(cwd)
    # A cancelled eval needs a real interrupt, so it runs in its own process (whose exit
    # status after the interrupt means nothing; check_inspect_statuses checks the log).
    cmd = [sys.executable, str(Path(__file__).resolve()), "inspect-cancelled"]
    print("+ inspect-cancelled", flush=True)
    subprocess.run(cmd, cwd=work, env=child_env(work), check=False)


# The status each scenario's logs must have; anything else means a run went wrong.
EXPECTED_STATUS = {"status_error": "error", "status_cancelled": "cancelled"}


def check_inspect_statuses(work: Path) -> None:
    """Fail unless every scenario folder holds its logs with the intended status."""
    from inspect_ai.log import read_eval_log

    for folder in sorted((work / "inspect").iterdir()):
        logs = sorted(folder.glob("*.eval")) + sorted(folder.glob("*.json"))
        want = EXPECTED_STATUS.get(folder.name, "success")
        got = [read_eval_log(str(f), header_only=True).status for f in logs]
        if not got or any(g != want for g in got):
            raise SystemExit(f"{folder.name}: log statuses {got}, expected {want}")


def inspect_cancelled() -> None:
    """Child: run an eval that the fake model interrupts with SIGINT, as Ctrl+C would.

    Python's asyncio runner turns SIGINT into cancellation of the running task; Inspect
    then writes the log with status ``cancelled`` and the samples completed so far.
    """
    inner = inspect_fake_outputs("fake-weak", inspect_dataset_rows())

    def interrupting(input, tools, tool_choice, config):  # noqa: A002
        from inspect_ai.solver._task_state import sample_state

        if sample_state().sample_id == CANCEL_AT:
            os.kill(os.getpid(), signal.SIGINT)
        return inner(input, tools, tool_choice, config)

    from inspect_ai import eval as inspect_eval_fn
    from inspect_ai.model import get_model

    model = get_model("mockllm/fake-weak", custom_outputs=interrupting)
    try:
        inspect_eval_fn(
            inspect_task("toyqa"),
            model=model,
            log_dir="inspect/status_cancelled",
            display="none",
            max_samples=1,
        )
    except KeyboardInterrupt:
        pass


def run_inspect_deflate(work: Path, deflate_python: str) -> None:
    """Run the deflate scenario under the older Inspect release, in its own virtualenv."""
    cmd = [deflate_python, str(Path(__file__).resolve()), "inspect-deflate"]
    print("+ inspect-deflate (", deflate_python, ")", flush=True)
    subprocess.run(cmd, cwd=work, env=child_env(work), check=True)


def inspect_deflate() -> None:
    """Child (older Inspect): the plain comparison once more, in deflate-member ``.eval`` files."""
    import inspect_ai

    print(f"  inspect_ai {inspect_ai.__version__} writing eval_deflate", flush=True)
    inspect_eval("eval_deflate", "fake-strong", "toyqa")


# ---------------------------------------------------------------------------------------
# Expected tables, from each harness's own reader
# ---------------------------------------------------------------------------------------

COLUMNS = [
    "harness",
    "model",
    "task",
    "group",
    "question_id",
    "doc_id",
    "category",
    "subject",
    "epoch",
    "metric",
    "filter",
    "value",
    "score",
    "errored",
    "error",
    "target",
    "response",
    "status",
    "run",
    "source_file",
]


def rel(path: Path, root: Path) -> str:
    """Path of a log relative to ``tests/data/harness`` (POSIX separators)."""
    return path.relative_to(root).as_posix()


def lm_eval_tables(root: Path) -> list[tuple[str, list[dict], dict]]:
    """One table per lm-eval run, from the files as lm-eval wrote them.

    A run is one ``results_<timestamp>.json``; its samples are the
    ``samples_<task>_<timestamp>.jsonl`` files with the same timestamp in the same folder.
    Each samples line is parsed with ``json`` and reported as is: one row per
    (doc, filter, metric), the score being the line's value under the metric's name.
    Nothing is re-scored here.
    """
    tables = []
    runs_per_model: dict[str, int] = {}
    for results_file in sorted((root / "lm_eval").glob("*/results_*.json")):
        results = json.loads(results_file.read_text(encoding="utf-8"))
        stamp = results_file.stem[len("results_") :]
        model = results["model_name"]
        group_of = {
            sub: grp for grp, subs in results.get("group_subtasks", {}).items() for sub in subs
        }
        rows = []
        for samples_file in sorted(results_file.parent.glob(f"samples_*_{stamp}.jsonl")):
            task = samples_file.name[len("samples_") : -len(f"_{stamp}.jsonl")]
            assert task in results["configs"], (task, samples_file)
            for line in samples_file.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                doc = rec["doc"]
                gen = results["configs"][task]["output_type"] == "generate_until"
                for metric in rec["metrics"]:
                    rows.append(
                        {
                            "harness": "lm_eval",
                            "model": model,
                            "task": task,
                            "group": group_of.get(task, ""),
                            "question_id": doc["id"],
                            "doc_id": rec["doc_id"],
                            "category": doc["category"],
                            "subject": doc.get("subject", ""),
                            "epoch": 1,
                            "metric": metric,
                            "filter": rec["filter"],
                            "value": rec[metric],
                            "score": float(rec[metric]),
                            "errored": False,
                            "error": "",
                            "target": rec["target"],
                            # generate_until: the filtered answer; multiple_choice: the
                            # filtered (log-likelihood, is_greedy) pairs are not one answer
                            "response": rec["filtered_resps"][0] if gen else "",
                            "status": "",
                            "run": stamp,
                            "source_file": rel(samples_file, root),
                        }
                    )
        n = runs_per_model[model] = runs_per_model.get(model, 0) + 1
        short = model.split("/")[-1]
        info = {"log": rel(results_file, root), "model": model, "run": stamp, "run_of_model": n}
        tables.append((f"lm_eval__{short}__run{n}", rows, info))
    for _, _, info in tables:  # a reader told `runs: newest` keeps only these
        info["newest"] = info["run_of_model"] == runs_per_model[info["model"]]
    return tables


def inspect_tables(root: Path) -> list[tuple[str, list[dict], dict]]:
    """One table per Inspect log, read with ``inspect_ai.log.read_eval_log``.

    One row per (sample, epoch, scorer); a sample without scores (an errored one) gives one
    row with empty metric and score. ``score`` is ``inspect_ai.scorer.value_to_float()``
    of the value (C=1, P=0.5, I=0, N=0), Inspect's own mapping. The samples are checked
    against ``read_eval_log_samples`` (the streaming reader) too.
    """
    from inspect_ai.log import read_eval_log, read_eval_log_samples
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    tables = []
    for log_file in sorted((root / "inspect").glob("*/*")):
        if log_file.suffix not in (".eval", ".json"):
            continue
        log = read_eval_log(str(log_file))
        # The streaming reader must see the same samples (its order may differ).
        streamed = [
            (s.id, s.epoch)
            for s in read_eval_log_samples(str(log_file), all_samples_required=False)
        ]
        assert sorted(streamed) == sorted((s.id, s.epoch) for s in log.samples or []), log_file
        rows = []
        for s in log.samples or []:
            base = {
                "harness": "inspect",
                "model": log.eval.model,
                "task": log.eval.task,
                "group": "",
                "question_id": s.id,
                "doc_id": "",
                "category": (s.metadata or {}).get("category", ""),
                "subject": (s.metadata or {}).get("subject", ""),
                "epoch": s.epoch,
                "filter": "",
                "errored": s.error is not None,
                "error": s.error.message if s.error else "",
                "target": s.target if isinstance(s.target, str) else json.dumps(s.target),
                "response": s.output.completion if s.output else "",
                "status": log.status,
                "run": log.eval.run_id,
                "source_file": rel(log_file, root),
            }
            if not s.scores:
                rows.append({**base, "metric": "", "value": "", "score": ""})
            for name, score in (s.scores or {}).items():
                rows.append(
                    {**base, "metric": name, "value": score.value, "score": to_float(score.value)}
                )
        # Compression of the zip members, as the zip's own directory records it.
        types = []
        if log_file.suffix == ".eval":
            with zipfile.ZipFile(log_file) as zf:
                types = sorted({i.compress_type for i in zf.infolist()})
        compression = {(93,): "zstd", (8,): "deflate"}.get(
            tuple(types), "+".join(map(str, types)) or "none"
        )
        info = {
            "log": rel(log_file, root),
            "model": log.eval.model,
            "run": log.eval.run_id,
            "status": log.status,
            "format": log_file.suffix.lstrip("."),
            "compression": compression,
            "written_by": f"inspect_ai {log.eval.packages.get('inspect_ai', '?')}",
        }
        scenario = log_file.parent.name
        label = log.eval.model.split("/")[-1]
        tables.append((f"inspect__{scenario}__{label}", rows, info))
    return tables


# What each fixture exercises, for the manifest and the README.
FEATURES = {
    "lm_eval__fake-strong__run1": "group toybench (toybench_math, toybench_history: doc_id repeats) + toyarith with 2 filters",
    "lm_eval__fake-mid__run1": "as fake-strong; older of two runs of one model in one folder",
    "lm_eval__fake-mid__run2": "as fake-strong; newer of two runs of one model in one folder (seed=2: outputs differ)",
    "lm_eval__fake-weak__run1": "as fake-strong",
    "inspect__eval_zstd__fake-strong": "plain .eval, zstd members, match(), 1 epoch",
    "inspect__eval_zstd__fake-mid": "plain .eval, zstd members, match(), 1 epoch",
    "inspect__eval_zstd__fake-weak": "plain .eval, zstd members, match(), 1 epoch",
    "inspect__eval_deflate__fake-strong": ".eval with deflate members (older release), match()",
    "inspect__epochs__fake-mid": "epochs=3: samples[].epoch in 1..3 (first 10 samples)",
    "inspect__partial_credit__fake-weak": "two scorers: match() (C/I) and partial_credit (C/I/P/N)",
    "inspect__errored_samples__fake-strong": "status success, 2 samples with error and no scores (fail_on_error=False)",
    "inspect__status_error__fake-strong": "status error (fail_on_error=True): partial log, refuse unless partial allowed",
    "inspect__status_cancelled__fake-weak": "status cancelled (SIGINT mid-run): partial log",
    "inspect__json__fake-weak": "log_format=json (first 10 samples)",
}


def write_expected(root: Path) -> None:
    """Write ``expected/<name>.csv`` for every log and ``expected/manifest.csv``."""
    out = root / "expected"
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, rows, info in lm_eval_tables(root) + inspect_tables(root):
        with open(out / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        manifest.append(
            {
                "expected": f"expected/{name}.csv",
                "harness": rows[0]["harness"] if rows else name.split("__")[0],
                "log": info["log"],
                "model": info["model"],
                "status": info.get("status", "success"),
                "format": info.get("format", "jsonl"),
                "compression": info.get("compression", "none"),
                "written_by": info.get("written_by", "lm_eval"),
                "newest_run_of_model": info.get("newest", True),
                "rows": len(rows),
                "exercises": FEATURES.get(name, ""),
            }
        )
    manifest.sort(key=lambda m: m["expected"])  # log names are random within a second
    with open(out / "manifest.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(manifest[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(manifest)


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def main() -> None:
    """Regenerate everything under tests/data/harness/ from scratch."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--deflate-python",
        required=True,
        help="python of the virtualenv with requirements-inspect-deflate.txt",
    )
    parser.add_argument("--keep-work", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="evalbars-harness-"))
    shutil.copy(INSPECT_DATASET, work / "toyqa.jsonl")
    run_lm_eval(work)
    run_inspect_current(work)
    run_inspect_deflate(work, args.deflate_python)
    check_inspect_statuses(work)

    # Replace the committed fixtures only once every run has succeeded.
    for sub in ("lm_eval", "inspect", "expected"):
        shutil.rmtree(DATA / sub, ignore_errors=True)
    DATA.mkdir(parents=True, exist_ok=True)
    shutil.copytree(work / "lm_eval", DATA / "lm_eval")
    shutil.copytree(work / "inspect", DATA / "inspect")
    write_expected(DATA)
    if args.keep_work:
        print("scratch folder kept:", work)
    else:
        shutil.rmtree(work)
    print("wrote", DATA)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "lm-eval-cli":
        lm_eval_cli(sys.argv[3:] if sys.argv[2:3] == ["--"] else sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "inspect-cancelled":
        inspect_cancelled()
    elif len(sys.argv) > 1 and sys.argv[1] == "inspect-deflate":
        inspect_deflate()
    else:
        main()
