"""The audit of published standard errors against lm-eval, Inspect and HELM logs.

Every expected number is recomputed here with numpy from the harness's own files (samples
lines, per-instance stats), not from evalbars' item table, so that the audit and the test share
no code but the reading of the items.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.items import build_item_table
from evalbars.data.readers import SourceOptions, lm_eval, read_source
from evalbars.readings.stderr_audit import (
    AUDIT_COLUMNS,
    FLAGS,
    PUBLISHED_COLUMNS,
    audit_lines,
    audit_stderr,
    published_stderr,
)

DATA = Path(__file__).resolve().parents[2] / "data"
ZEROED = DATA / "stderr_audit" / "lm_eval" / "evalbars__fake-strong"
SHIPPED = DATA / "harness" / "lm_eval"
INSPECT = DATA / "harness" / "inspect"
HELM = DATA / "corpora" / "helm"
STAMP = "2026-11-30T10-52-35.545044"
MODEL = "evalbars/fake-strong"


def items_of(path, **options) -> pd.DataFrame:
    return build_item_table(read_source(path, SourceOptions(**options)))


def sample_scores(folder: Path, task: str, metric: str, filter_name: str = "none") -> np.ndarray:
    """A task's per-document scores, straight from lm-eval's samples file."""
    lines = (folder / f"samples_{task}_{STAMP}.jsonl").read_text().splitlines()
    samples = [json.loads(line) for line in lines]
    return np.array([s[metric] for s in samples if s["filter"] == filter_name], float)


def mean_stderr(scores: np.ndarray) -> float:
    """lm-eval's ``mean_stderr``: sample standard deviation over sqrt(n)."""
    return float(np.std(scores, ddof=1) / np.sqrt(scores.size))


def by_task(audit: pd.DataFrame) -> pd.DataFrame:
    return audit.set_index("task")


@pytest.fixture(scope="module")
def zeroed_audit() -> pd.DataFrame:
    return audit_stderr(published_stderr(ZEROED.parent), items_of(ZEROED.parent))


def test_the_zeroed_fixture_flags_exactly_the_zero_and_the_mismatched_group(zeroed_audit):
    flags = by_task(zeroed_audit)["flag"].to_dict()
    assert flags == {
        "toyarith": "zero while the scores vary",
        "toybench": "differs",
        "toybench_math": "ok",
        "toybench_history": "ok",
    }
    assert list(zeroed_audit.columns) == AUDIT_COLUMNS
    assert set(zeroed_audit["flag"]) <= set(FLAGS)


def test_the_zeroed_task_is_recomputed_as_lm_eval_would(zeroed_audit):
    row = by_task(zeroed_audit).loc["toyarith"]
    scores = sample_scores(ZEROED, "toyarith", "exact_match", "strict-match")
    assert (row["metric"], row["filter"], row["n"]) == ("exact_match", "strict-match", 15)
    assert row["published_stderr"] == 0.0
    assert row["recomputed_stderr"] == pytest.approx(mean_stderr(scores), rel=1e-12)
    assert row["recomputed_stderr"] == pytest.approx(math.sqrt(11 / 15 * 4 / 15 / 14), rel=1e-12)
    assert row["relative_difference"] == -1.0
    # One task is one category: the clustered SE is not estimable, and says so.
    assert row["clusters"] == 1 and np.isnan(row["clustered_stderr"])


def test_the_unweighted_group_with_a_size_weighted_stderr_differs(zeroed_audit):
    row = by_task(zeroed_audit).loc["toybench"]
    math_scores = sample_scores(ZEROED, "toybench_math", "acc")
    history = sample_scores(ZEROED, "toybench_history", "acc")
    assert (math_scores.size, history.size) == (12, 8)
    # The published value is the unweighted mean of the subtask means (weight_by_size: false)...
    unweighted = (math_scores.mean() + history.mean()) / 2
    assert row["published_estimate"] == pytest.approx(unweighted, rel=1e-12)
    assert row["recomputed_estimate"] == pytest.approx(unweighted, rel=1e-12)
    # ... whose stderr is that of two independent means (lm-eval PR #3882).
    expected = math.sqrt(mean_stderr(math_scores) ** 2 + mean_stderr(history) ** 2) / 2
    assert row["recomputed_stderr"] == pytest.approx(expected, rel=1e-12)
    # The published one is lm-eval's size-weighted pooled_sample_stderr.
    pooled = math.sqrt(
        (11 * np.var(math_scores, ddof=1) + 7 * np.var(history, ddof=1)) / (20 - 2) / 20
    )
    assert row["published_stderr"] == pytest.approx(pooled, rel=1e-12)
    assert row["relative_difference"] == pytest.approx(pooled / expected - 1, rel=1e-9)
    assert row["n"] == 20 and row["clusters"] == 2
    assert "pooled_sample_stderr" in row["note"] and "#3882" in row["note"]


def test_each_flag_is_said_in_one_line(zeroed_audit):
    lines = audit_lines(zeroed_audit)
    assert len(lines) == 2
    zero, group = sorted(lines, key=lambda line: "toyarith" not in line)
    assert zero.startswith(f"{MODEL}, toyarith (lm_eval exact_match,strict-match, results_")
    assert "published stderr 0 while the 15 scores vary; recomputed 0.118187" in zero
    assert group.startswith(f"{MODEL}, toybench (lm_eval acc,none, results_")
    assert "published stderr 0.0991865 (-7.62%); recomputed 0.107364" in group


def test_published_values_name_the_tasks_groups_and_defaults_as_lm_eval_writes_them():
    published = published_stderr(ZEROED)
    assert list(published.columns) == PUBLISHED_COLUMNS
    assert len(published) == 8  # 2 metrics x 3 (sub)tasks and groups, 2 filters of toyarith
    rows = published.set_index(["task", "metric", "filter"])
    group = rows.loc[("toybench", "acc", "none")]
    assert group["item_tasks"] == ("toybench_math", "toybench_history")
    assert group["published_n"] == 20 and group["source_file"] == f"results_{STAMP}.json"
    # What evalbars' reader scores by default: acc of a multiple-choice task, the first filter.
    assert rows.loc[("toybench", "acc_norm", "none"), "default_metric"] == False  # noqa: E712
    assert rows.loc[("toyarith", "exact_match", "flexible-extract"), "default_filter"] == False  # noqa: E712
    assert rows.loc[("toyarith", "exact_match", "strict-match"), "published_stderr"] == 0.0


def test_the_shipped_lm_eval_runs_are_ok_and_an_unread_run_has_no_items():
    audit = audit_stderr(published_stderr(SHIPPED), items_of(SHIPPED, runs="newest"))
    older = audit["source_file"] == "results_2026-11-30T10-52-57.302444.json"
    assert set(audit.loc[older, "flag"]) == {"no items"}  # fake-mid's first run, not read
    assert set(audit.loc[~older, "flag"]) == {"ok"}
    assert len(audit.loc[~older]) == 12  # 3 models x (3 tasks + 1 group)
    strong = by_task(audit[audit["model"] == MODEL])
    folder = SHIPPED / "evalbars__fake-strong"
    math_scores = sample_scores(folder, "toybench_math", "acc")
    history = sample_scores(folder, "toybench_history", "acc")
    pooled = math.sqrt(11 * (np.var(math_scores, ddof=1) + np.var(history, ddof=1)) / 22 / 24)
    assert strong.loc["toybench", "recomputed_stderr"] == pytest.approx(pooled, rel=1e-12)
    assert strong.loc["toybench", "convention"].startswith("pooled_sample_stderr")
    # pooled_sample_stderr leaves out the spread between the subtask means: not the i.i.d. SE
    # of the 24 concatenated items, which question_stderr reports.
    concatenated = mean_stderr(np.concatenate([math_scores, history]))
    assert strong.loc["toybench", "question_stderr"] == pytest.approx(concatenated, rel=1e-12)
    assert concatenated != pytest.approx(pooled, rel=1e-3)


def test_items_of_another_filter_are_flagged_as_not_what_the_value_summarises():
    folder = SHIPPED / "evalbars__fake-strong"
    published, items = published_stderr(folder), items_of(folder, filter="flexible-extract")
    assert by_task(audit_stderr(published, items)).loc["toyarith", "flag"] == "estimate differs"
    chosen = by_task(audit_stderr(published, items, metric="exact_match,flexible-extract"))
    assert chosen.loc["toyarith", "flag"] == "ok"
    scores = sample_scores(folder, "toyarith", "exact_match", "flexible-extract")
    assert chosen.loc["toyarith", "recomputed_stderr"] == pytest.approx(mean_stderr(scores))


@pytest.mark.parametrize(
    ("log", "questions"), [("epochs", 10), ("errored_samples", 18), ("json", 10), ("eval_zstd", 20)]
)
def test_inspect_stderr_is_recomputed_over_epoch_means_and_scored_samples(log, questions):
    audit = audit_stderr(published_stderr(INSPECT / log), items_of(INSPECT / log))
    assert set(audit["flag"]) == {"ok"}
    assert set(audit["n"]) == {questions}
    assert (audit["relative_difference"].abs() < 1e-12).all()


def test_inspect_epochs_are_reduced_by_their_mean_before_the_stderr():
    items = items_of(INSPECT / "epochs")
    assert set(items["epoch"]) == {1, 2, 3}
    means = items.groupby("question_id")["correct"].mean().to_numpy(float)
    (row,) = audit_stderr(published_stderr(INSPECT / "epochs"), items).itertuples()
    assert row.recomputed_stderr == pytest.approx(mean_stderr(means), rel=1e-12)
    assert row.published_stderr == pytest.approx(mean_stderr(means), rel=1e-12)


def test_a_zeroed_inspect_stderr_and_a_clustered_one():
    published = published_stderr(INSPECT / "errored_samples")
    items = items_of(INSPECT / "errored_samples")
    zeroed = audit_stderr(published.assign(published_stderr=0.0), items)
    assert zeroed["flag"].tolist() == ["zero while the scores vary"]
    # Inspect's stderr(cluster=...): sqrt(C/(C-1)) times the CR0 SE over the scored samples.
    scored = items[~items["missing_prediction"]]
    scores, clusters = scored["correct"].to_numpy(float), scored["category"].astype(str)
    sums = pd.Series(scores - scores.mean()).groupby(clusters.to_numpy()).sum().to_numpy()
    inspect_clustered = math.sqrt(sums.size / (sums.size - 1) * (sums**2).sum()) / scores.size
    clustered = published.assign(published_stderr=inspect_clustered, stderr_cluster="category")
    (row,) = audit_stderr(clustered, items).itertuples()
    assert row.flag == "ok" and row.convention.startswith("stderr(cluster='category')")


def test_two_inspect_scorers_need_a_metric():
    items = items_of(INSPECT / "partial_credit", scorer="partial_credit")
    published = published_stderr(INSPECT / "partial_credit")
    assert audit_stderr(published, items).empty
    audit = audit_stderr(published, items, metric="partial_credit")
    assert audit[["metric", "flag"]].values.tolist() == [["partial_credit", "ok"]]


def helm_trial_means(folder: Path) -> np.ndarray:
    """Per-trial mean exact_match over the unperturbed test instances, from HELM's own file."""
    entries = json.loads((folder / "per_instance_stats.json").read_text())
    scores: dict = {}
    for entry in entries:
        if entry.get("perturbation"):
            continue
        for stat in entry["stats"]:
            name = stat["name"]
            if (name["name"], name.get("split"), name.get("perturbation")) == (
                "exact_match",
                "test",
                None,
            ):
                scores.setdefault(entry["train_trial_index"], []).append(stat["mean"])
    return np.array([np.mean(values) for _, values in sorted(scores.items())])


def test_helm_stddev_is_the_spread_of_the_trial_means():
    audit = audit_stderr(published_stderr(HELM), items_of(HELM))
    assert len(audit) == 6 and set(audit["flag"]) == {"ok"}
    for row in audit.itertuples():
        folder = HELM / row.task
        trial_means = helm_trial_means(folder)
        assert trial_means.size == 3 == row.published_n
        assert row.recomputed_stderr == pytest.approx(np.std(trial_means), rel=1e-9)
        assert row.recomputed_estimate == pytest.approx(trial_means.mean(), rel=1e-12)


def test_a_helm_stddev_beyond_the_tolerance_differs():
    published = published_stderr(HELM)
    bumped = published.assign(published_stderr=published["published_stderr"] * (1 + 1e-5))
    audit = audit_stderr(bumped, items_of(HELM))
    assert set(audit["flag"]) == {"differs"}
    assert np.allclose(audit["relative_difference"], 1e-5, rtol=1e-6)


def test_rounded_values_pass_only_within_their_rounding():
    published = published_stderr(ZEROED.parent)
    items = items_of(ZEROED.parent)
    honest = published[published["task"] != "toyarith"]
    rounded = honest.assign(
        published_stderr=honest["published_stderr"].round(4),
        published_estimate=honest["published_estimate"].round(4),
    )
    strict = by_task(audit_stderr(rounded, items))["flag"]
    assert strict.loc["toybench_math"] == "estimate differs"  # 0.8333 is not 10/12
    lenient = by_task(audit_stderr(rounded, items, decimals=4))["flag"]
    assert lenient.drop("toybench").eq("ok").all()
    assert lenient.loc["toybench"] == "differs"  # 0.0992 against 0.1074: beyond any rounding


def test_lighteval_results_named_as_lm_evals_are_passed_over():
    # lighteval writes results_<ts>.json as lm-eval does; the audit reads lm-eval's only (the
    # lighteval example's workflow stopped on "names no model_name").
    corpus = DATA / "corpora" / "lighteval"
    results = sorted(corpus.rglob("results_*.json"))
    assert len(results) == 4 and all(lm_eval.is_lm_eval_name(p) for p in results)
    assert published_stderr(corpus).empty
    assert len(published_stderr(DATA / "harness" / "lm_eval")) > 0
