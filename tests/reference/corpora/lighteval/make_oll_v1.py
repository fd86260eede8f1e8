"""Write tests/data/corpora/lighteval_oll_v1: Open LLM Leaderboard v1 details (old lighteval).

The OLL v1 details were written by lighteval before 0.11 (the leaderboard ran a 2023-24
revision); installing that lighteval with its torch and datasets pins is not possible here,
so these files are built from the format's source instead, at lighteval tag v0.1.0
(commit 1b0ba822e9532726d27b65fe372e4c64f07c51d1, huggingface/lighteval):

- one row per example = ``asdict(DetailsLogger.Detail)`` (``logging/info_loggers.py``):
  example (the query), instruction, full_prompt, num_effective_few_shots,
  num_asked_few_shots, predictions (per choice ``(logprob, is_greedy)``), input_tokens,
  cont_tokens, truncated, padded, gold, pred_logits, choices, gold_index, metrics;
- written as lighteval did (``logging/evaluation_tracker.py``): ``datasets.Dataset.from_list``,
  columns sorted, ``to_parquet``, to ``<model folder>/<date_id>/details_<task>_<date_id>.parquet``
  with task ``harness|<task>|<k>``, plus ``results_<date_id>.json`` (config_general, results);
- laid out as the leaderboard's details repositories are: ``details_<org>__<model>/``.

The "models" are seeded fakes (a known question's gold choice gets the highest log-prob).
Run with the lighteval virtualenv's Python (it has ``datasets``):

    /work/venvs/lighteval/bin/python tests/reference/corpora/lighteval/make_oll_v1.py
"""

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from datasets import Dataset

ROOT = Path(__file__).resolve().parents[4]
OUT = ROOT / "tests" / "data" / "corpora" / "lighteval_oll_v1"
MODELS = {"synth-org/oll-a": 0.8, "synth-org/oll-b": 0.6, "synth-org/oll-c": 0.4}
TASKS = {
    "harness|arc:challenge|25": 8,
    "harness|hendrycksTest-anatomy|5": 6,
    "harness|hendrycksTest-virology|5": 6,
}
STAMP = "2024-01-05T10-21-44.518352"


@dataclass
class Detail:  # the fields of lighteval v0.1.0 DetailsLogger.Detail, in its order
    example: str = ""
    instruction: str = ""
    full_prompt: str = ""
    num_effective_few_shots: int = 0
    num_asked_few_shots: int = 0
    predictions: list = field(default_factory=list)
    input_tokens: list = field(default_factory=list)
    cont_tokens: list = field(default_factory=list)
    truncated: list = field(default_factory=list)
    padded: list = field(default_factory=list)
    gold: list = field(default_factory=list)
    pred_logits: list = field(default_factory=list)
    choices: list = field(default_factory=list)
    gold_index: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)


def unit(*parts) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def questions(task: str, n: int) -> list:
    out = []
    for i in range(n):
        a, b = 3 + int(unit(task, i, "a") * 60), 3 + int(unit(task, i, "b") * 60)
        gold = int(unit(task, i, "gold") * 4)
        wrong = [a + b + d for d in (2, -1, 11)]
        choices = [f" {v}" for v in wrong[:gold] + [a + b] + wrong[gold:]]
        out.append((f"Question: What is {a} plus {b}?\nAnswer:", choices, gold))
    return out


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    for model, skill in MODELS.items():
        folder = OUT / ("details_" + model.replace("/", "__"))
        (folder / STAMP).mkdir(parents=True)
        results = {}
        for task, n in TASKS.items():
            k = int(task.rsplit("|", 1)[1])
            rows = []
            for query, choices, gold in questions(task, n):
                knows = unit(model, query, "knows") < skill
                logprobs = [-(0.5 + 4 * unit(model, query, c)) for c in choices]
                if knows:
                    logprobs[gold] = -0.01
                # acc_norm divides by the choice's length in characters (lighteval's LoglikelihoodAccNorm)
                normed = [lp / len(c) for lp, c in zip(logprobs, choices, strict=True)]
                acc = int(max(range(4), key=logprobs.__getitem__) == gold)
                acc_norm = int(max(range(4), key=normed.__getitem__) == gold)
                metrics = {"acc": acc, "acc_norm": acc_norm} if "arc" in task else {"acc": acc}
                rows.append(
                    Detail(
                        example=query,
                        full_prompt=f"<{k} solved examples>\n\n{query}",
                        num_effective_few_shots=k,
                        num_asked_few_shots=k,
                        predictions=[(lp, False) for lp in logprobs],
                        truncated=[0] * 4,
                        padded=[0] * 4,
                        choices=choices,
                        gold_index=[gold],
                        metrics=metrics,
                    )
                )
            dataset = Dataset.from_list([asdict(r) for r in rows])
            dataset = dataset.select_columns(sorted(dataset.column_names))
            dataset.to_parquet(str(folder / STAMP / f"details_{task}_{STAMP}.parquet"))
            results[task] = {m: sum(r.metrics[m] for r in rows) / n for m in rows[0].metrics}
        document = {
            "config_general": {"model_name": model, "lighteval_sha": "(built from v0.1.0)"},
            "results": results,
        }
        (folder / f"results_{STAMP}.json").write_text(json.dumps(document, indent=2) + "\n")
        print(model, results)


if __name__ == "__main__":
    main()
