"""Custom lighteval 0.13 tasks on a local dataset (evalbars test data).

``synthmcq:arithmetic`` and ``synthmcq:geometry``: multiple choice, ``acc`` (loglikelihood);
their prompt function keeps the dataset's ``id`` in ``doc.specific``. ``synthgen``: a
generation task with 3 samples per question, scored by ``em`` (lighteval's ExactMatches, the
best of the 3 samples) and ``avg@n:n=3`` (their mean); its prompt function keeps no id.
The dataset folder is ``$SYNTH_DATA`` (written by make_lighteval.py).
"""

import os

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

DATA = os.environ["SYNTH_DATA"]


def mcq_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[f" {c}" for c in line["choices"]],
        gold_index=int(line["answer"]),
        specific={"id": line["id"]},
    )


def gen_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\nAnswer:",
        choices=[str(line["target"])],
        gold_index=0,
    )


def mcq(subset):
    return LightevalTaskConfig(
        name=f"synthmcq:{subset}",
        prompt_function=mcq_prompt,
        hf_repo=DATA,
        hf_subset=subset,
        hf_avail_splits=["test"],
        evaluation_splits=["test"],
        few_shots_split=None,
        few_shots_select=None,
        metrics=[Metrics.loglikelihood_acc],
        generation_size=-1,
        stop_sequence=None,
    )


TASKS_TABLE = [
    mcq("arithmetic"),
    mcq("geometry"),
    LightevalTaskConfig(
        name="synthgen",
        prompt_function=gen_prompt,
        hf_repo=DATA,
        hf_subset="gen",
        hf_avail_splits=["test"],
        evaluation_splits=["test"],
        few_shots_split=None,
        few_shots_select=None,
        metrics=[Metrics.exact_match, Metrics.avg_at_n(sample_params={"n": 3})],
        generation_size=16,
        stop_sequence=["\n"],
        num_samples=[3],
    ),
]
