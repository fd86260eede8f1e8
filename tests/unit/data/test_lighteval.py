"""lighteval task families over one question set, and choosing tasks (issue 31).

A multiple-choice, a cloze and a generative task scoring the same questions were read as three
times the questions, with no warning, and their pooled accuracy matched none of lighteval's. The
details files here are written in each test, with the Parquet schema of the committed lighteval
0.13.0 fixtures (tests/data/corpora/lighteval, see tests/reference/corpora/README.md): one
``details_<task>_<ts>.parquet`` per task under ``details/<model>/<ts>/``, and the run's
``results/<model>/results_<ts>.json`` holding lighteval's per-task means, the numbers a
correct read must give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalbars.data.readers import SourceOptions, read_source, set_hint_style
from evalbars.data.readers.lighteval import read_lighteval_files
from evalbars.errors import InputError

CORPORA = Path(__file__).resolve().parents[2] / "data" / "corpora"
FIXTURE = CORPORA / "lighteval" / "details" / "synth" / "model-b" / "2026-12-01T09-23-20.675302"
MCQ_LIKE = FIXTURE / "details_synthmcq:arithmetic|0_2026-12-01T09-23-20.675302.parquet"
GEN_LIKE = FIXTURE / "details_synthgen|0_2026-12-01T09-23-20.675302.parquet"
OLL_V1 = CORPORA / "lighteval_oll_v1"
STAMP = "2026-12-02T10-00-00.000001"
MODEL = "synth/m"
QUESTIONS = 12
#: Which questions the model gets right in each task: accuracies 9/12, 6/12 and 4/12.
RIGHT = {"mc": lambda i: i % 4 != 0, "cloze": lambda i: i % 2 == 0, "gen": lambda i: i % 3 == 0}


def schema_like(fixture: Path, kept_id: bool) -> pa.Schema:
    """The fixture's schema, ``doc.specific`` holding an ``id`` (or null) as asked."""
    schema = pq.read_schema(fixture)
    doc = schema.field("doc").type
    specific = pa.struct([("id", pa.string())]) if kept_id else pa.null()
    fields = [
        pa.field("specific", specific) if f.name == "specific" else f
        for f in (doc.field(i) for i in range(doc.num_fields))
    ]
    return schema.set(schema.get_field_index("doc"), pa.field("doc", pa.struct(fields)))


def question(i: int) -> tuple[str, list[str], int]:
    """``(question, options, gold)`` of question ``i`` (0 to 11: the shared set)."""
    a, b = 3 + 7 * i, 11 + 5 * i
    options = [str(a + b + d) for d in (1, 0, -3, 7)]
    gold = 1
    return f"What is {a} plus {b}?", options, gold


def doc(task, query, choices, gold, row, kept, generative, stop=None) -> dict:
    return {
        "choices": choices,
        "fewshot_samples": [],
        "fewshot_sorting_class": None,
        "generation_grammar": None,
        "generation_size": 16 if generative else -1,
        "gold_index": gold,
        "id": str(row),
        "images": None,
        "instruction": None,
        "num_samples": 1,
        "original_query": None,
        "query": query,
        "sampling_methods": ["GENERATIVE" if generative else "LOGPROBS"],
        "specific": {"id": kept} if kept is not None else None,
        "stop_sequences": stop or [],
        "task_name": task,
        "unconditioned_query": None,
        "use_logits": False,
    }


def response(text=None, logprobs=None) -> dict:
    return {
        "argmax_logits_eq_gold": [],
        "input": None,
        "input_tokens": [],
        "logits": None,
        "logprobs": logprobs or [],
        "output_tokens": [],
        "padded_tokens_count": 0,
        "reasonings": [],
        "text": text or [],
        "text_post_processed": text or [],
        "truncated_tokens_count": 0,
        "unconditioned_logprobs": None,
    }


def task_rows(task: str, form: str, keep_ids: bool, first: int = 0) -> list[dict]:
    """One details row per question ``first`` to ``first + 11`` (0: the shared set), in
    ``form`` (mc: lettered options, the gold letter scored by loglikelihood; cloze: the option
    texts; gen: the answer generated)."""
    rows = []
    for i in range(QUESTIONS):
        text, options, gold = question(first + i)
        right = RIGHT[form](i)
        kept = f"synthq-{i:03d}" if keep_ids else None
        if form == "gen":
            answer = options[gold] if right else "0"
            rows.append(
                {
                    "doc": doc(task, f"Question: {text}\nAnswer:", [options[gold]], 0, i, kept, 1),
                    "metric": {"avg@n:n=3": None, "em": int(right)},
                    "model_response": response(text=[answer]),
                }
            )
            continue
        letters = [f" {letter}" for letter in "ABCD"]
        listed = "".join(f"\n{letter}. {o}" for letter, o in zip("ABCD", options, strict=True))
        query = (
            f"Question: {text}{listed}\nAnswer:" if form == "mc" else f"Question: {text}\nAnswer:"
        )
        choices = letters if form == "mc" else [f" {o}" for o in options]
        rows.append(
            {
                "doc": doc(task, query, choices, gold, i, kept, 0),
                "metric": {"acc": int(right)},
                "model_response": response(logprobs=[-1.0, -0.5, -2.0, -3.0]),
            }
        )
    return rows


def write_run(root: Path, tasks: dict, keep_ids: bool = True, shared: bool = True) -> list[Path]:
    """A lighteval run of ``MODEL``: ``{task: form}`` details files (over the shared question
    set, or each over its own when ``shared`` is false) and the results file with lighteval's
    per-task mean of the logged metric. Returns the details files."""
    run = root / "details" / MODEL / STAMP
    run.mkdir(parents=True)
    paths, results = [], {}
    for number, (task, form) in enumerate(tasks.items()):
        rows = task_rows(task, form, keep_ids, first=0 if shared else QUESTIONS * number)
        schema = schema_like(GEN_LIKE if form == "gen" else MCQ_LIKE, keep_ids)
        path = run / f"details_{task}_{STAMP}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        metric = "em" if form == "gen" else "acc"
        results[task] = {metric: sum(r["metric"][metric] for r in rows) / len(rows)}
        paths.append(path)
    folder = root / "results" / MODEL
    folder.mkdir(parents=True)
    document = {"config_general": {"model_name": MODEL}, "results": results}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(document))
    return paths


def accuracy(frames) -> float:
    (frame,) = frames
    return float(frame["correct"].astype(float).mean())


THREE = {"synthq_cloze|0": "cloze", "synthq_gen|0": "gen", "synthq_mc|0": "mc"}


@pytest.fixture
def cli_hints():
    previous = set_hint_style("cli")
    yield
    set_hint_style(previous)


# --- one question set in three tasks: refused, naming two, unless the user chooses ------------


def test_three_formulations_of_one_question_set_are_refused_naming_two(tmp_path):
    paths = write_run(tmp_path, THREE)
    with pytest.raises(InputError) as caught:
        read_source(tmp_path)
    assert str(caught.value) == (
        f"{paths[1]}: tasks 'synthq_cloze|0' (loglikelihood, acc) and 'synthq_gen|0' "
        f"(generative, em) of model 'synth/m' score the same {QUESTIONS} questions (equal "
        "doc.specific 'id'); pooled, each would count twice: choose the tasks to read (set "
        "`tasks: [synthq_cloze]` on this predictions entry reads 'synthq_cloze|0' alone)"
    )


def test_the_remedy_is_worded_as_a_flag_on_the_command_line(tmp_path, cli_hints):
    write_run(tmp_path, THREE)
    with pytest.raises(InputError, match=r"\(pass `--task synthq_cloze` reads 'synthq_cloze\|0'"):
        read_source(tmp_path)


@pytest.mark.parametrize("chosen", ["synthq_mc", "synthq_mc|0", "lighteval|synthq_mc|0"])
def test_the_chosen_task_gives_lightevals_own_accuracy(tmp_path, chosen):
    paths = write_run(tmp_path, THREE)
    results = json.loads(next((tmp_path / "results").rglob("results_*.json")).read_text())
    frames = read_lighteval_files(paths, SourceOptions(tasks=(chosen,)))
    assert accuracy(frames) == results["results"]["synthq_mc|0"]["acc"] == 9 / 12
    assert frames[0]["question_id"].nunique() == QUESTIONS
    generative = read_lighteval_files(paths, SourceOptions(tasks=("synthq_gen|0",)))
    assert accuracy(generative) == results["results"]["synthq_gen|0"]["em"] == 4 / 12


def test_two_of_the_chosen_tasks_over_one_question_set_are_still_refused(tmp_path):
    paths = write_run(tmp_path, THREE)
    with pytest.raises(InputError, match=r"tasks 'synthq_cloze\|0' .* and 'synthq_mc\|0'"):
        read_lighteval_files(paths, SourceOptions(tasks=("synthq_mc", "synthq_cloze")))


def test_a_task_no_details_file_has_is_refused_naming_those_there_are(tmp_path):
    paths = write_run(tmp_path, THREE)
    with pytest.raises(InputError) as caught:
        read_lighteval_files(paths, SourceOptions(tasks=("synthq_mcq",)))
    assert str(caught.value) == (
        f"{paths[0].parent}: no task 'synthq_mcq' among the lighteval details files; they hold "
        "'synthq_cloze|0', 'synthq_gen|0', 'synthq_mc|0'"
    )


def test_read_source_honours_tasks_for_lighteval(tmp_path):
    write_run(tmp_path, THREE)
    assert accuracy(read_source(tmp_path, SourceOptions(tasks=("synthq_mc",)))) == 9 / 12


# --- how the same questions are recognised ------------------------------------------------------


def test_lightevals_own_formulations_are_recognised_by_row_and_gold(tmp_path):
    # lighteval's templates keep no id, and MCF, CF and hybrid queries and choices differ.
    tasks = {"belebele_eng_cf|0": "cloze", "belebele_eng_mcf|0": "mc"}
    paths = write_run(tmp_path, tasks, keep_ids=False)
    with pytest.raises(InputError) as caught:
        read_source(tmp_path)
    assert str(caught.value) == (
        f"{paths[1]}: tasks 'belebele_eng_cf|0' (loglikelihood, acc) and 'belebele_eng_mcf|0' "
        f"(loglikelihood, acc) of model 'synth/m' score the same {QUESTIONS} questions (equal "
        "doc.id and gold_index of two formulations); pooled, each would count twice: choose "
        "the tasks to read (set `tasks: [belebele_eng_cf]` on this predictions entry reads "
        "'belebele_eng_cf|0' alone)"
    )


def test_one_prompt_at_two_few_shot_counts_is_recognised_by_its_text(tmp_path):
    # Before: "question_id ... occurs 2 times"; the remedy now names the tasks, in full.
    paths = write_run(tmp_path, {"synthq_mc|0": "mc", "synthq_mc|5": "mc"}, keep_ids=False)
    with pytest.raises(InputError) as caught:
        read_source(tmp_path)
    assert str(caught.value) == (
        f"{paths[1]}: tasks 'synthq_mc|0' (loglikelihood, acc) and 'synthq_mc|5' "
        f"(loglikelihood, acc) of model 'synth/m' score the same {QUESTIONS} questions (equal "
        "query and choices); pooled, each would count twice: choose the tasks to read (set "
        "`tasks: [synthq_mc|0]` on this predictions entry reads 'synthq_mc|0' alone)"
    )
    assert accuracy(read_lighteval_files(paths, SourceOptions(tasks=("synthq_mc|5",)))) == 0.75


def test_subsets_of_one_superset_may_repeat_their_ids(tmp_path):
    # Two subsets of a dataset whose prompt functions keep ids that repeat (synthq-000... in
    # each) are two question sets, as their queries say: the ids alone do not make them one.
    paths = write_run(tmp_path, {"synthq:a|0": "mc", "synthq:b|0": "cloze"}, shared=False)
    (frame,) = read_source(tmp_path)
    assert frame["question_id"].nunique() == 2 * QUESTIONS
    assert set(frame["category"]) == {"synthq:a", "synthq:b"}
    # The superset names both; a subset names one.
    assert len(read_lighteval_files(paths, SourceOptions(tasks=("synthq",)))[0]) == 24
    assert accuracy(read_lighteval_files(paths, SourceOptions(tasks=("synthq:b",)))) == 0.5


def test_the_committed_fixture_runs_read_as_before():
    # Different questions in every task (two subsets, a generative task): nothing is refused.
    details = sorted((CORPORA / "lighteval" / "details").rglob("*.parquet"))
    frames = read_lighteval_files(details, SourceOptions(runs="newest"))
    assert [len(f) for f in frames] == [36, 36, 36]  # 10 + 8 questions, 6 x 3 samples
    chosen = read_lighteval_files(details, SourceOptions(runs="newest", tasks=("synthmcq",)))
    assert {c for f in chosen for c in f["category"].unique()} == {
        "synthmcq:arithmetic",
        "synthmcq:geometry",
    }


@pytest.mark.parametrize(
    "chosen", ["arc:challenge", "arc", "arc:challenge|25", "harness|arc:challenge|25"]
)
def test_older_task_names_with_a_suite_are_chosen_as_lighteval_names_them(chosen):
    details = sorted(OLL_V1.rglob("*.parquet"))
    frames = read_lighteval_files(details, SourceOptions(tasks=(chosen,)))
    assert {c for f in frames for c in f["category"].unique()} == {"arc:challenge"}
