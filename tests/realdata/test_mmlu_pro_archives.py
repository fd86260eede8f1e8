"""The canonical item table and the default subsample on the real MMLU-Pro archives."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from evalbars.data import fetch, sampling
from evalbars.data.items import ITEM_COLUMNS, build_item_table
from evalbars.data.readers import read_mmlu_pro

from ..conftest import DEFAULT_MODELS, DEFAULT_SUBSAMPLE, mirror_location
from ..helpers import exact_hamilton

# Upstream's question counts per category (MMLU-Pro test split, 12,032 questions).
CATEGORY_SIZES = {
    "biology": 717,
    "business": 789,
    "chemistry": 1132,
    "computer science": 410,
    "economics": 844,
    "engineering": 969,
    "health": 818,
    "history": 381,
    "law": 1101,
    "math": 1351,
    "other": 924,
    "philosophy": 499,
    "physics": 1299,
    "psychology": 798,
}


def direct_accuracy(path) -> float:
    """Accuracy straight from the archive: pred == answer over all records, null pred wrong."""
    with zipfile.ZipFile(path) as zf:
        records = json.loads(zf.read(zf.namelist()[0]))
    records = [r for r in records if isinstance(r, dict)]
    return sum(r["pred"] == r["answer"] for r in records) / len(records)


def test_item_table_has_72192_rows_and_the_archives_accuracies(default_items, archive_dir):
    assert len(default_items) == 72_192 == 6 * 12_032
    assert default_items.columns.tolist() == ITEM_COLUMNS
    assert default_items.groupby("model")["question_id"].nunique().eq(12_032).all()
    assert (
        default_items.groupby("question_id")["category"].first().value_counts().to_dict()
        == CATEGORY_SIZES
    )
    ours = default_items.groupby("model")["correct"].mean()
    for model in DEFAULT_MODELS:
        assert ours[model] == direct_accuracy(archive_dir / fetch.archive_name(model))
    # Null predictions are kept (pred null) and scored wrong under the default policy.
    assert default_items.loc[default_items["pred"].isna(), "correct"].eq(0).all()
    assert default_items["pred"].isna().groupby(default_items["model"]).sum().to_dict() == {
        "Mistral-7B-Instruct-v0.1": 1865,
        "Mistral-7B-Instruct-v0.2": 2237,
        "Mistral-7B-v0.1": 1251,
        "Qwen1.5-7B-Chat": 2809,
        "Yi-6B": 1610,
        "Yi-6b-Chat": 2277,
    }


def test_default_subsample_is_1497_proportional_questions(default_subsample):
    drawn = default_subsample
    assert DEFAULT_SUBSAMPLE["n"] == 1497
    assert len(drawn.questions) == 1497 and drawn.n_dropped == 0
    counts = drawn.questions.groupby("category").size().to_dict()
    assert len(counts) == 14
    assert counts == exact_hamilton(CATEGORY_SIZES, 1497)
    assert len(drawn.items) == 6 * 1497
    assert drawn.items.groupby("model").size().eq(1497).all()


def test_exclude_policy_shrinks_the_eligible_set(default_raw):
    items = build_item_table(default_raw, "exclude", 0)
    eligible, dropped = sampling.eligible_questions(items)
    # A question is eligible only when all six models produced an extractable answer.
    all_extracted = (
        pd.concat(default_raw).groupby("question_id")["correct"].apply(lambda s: s.notna().all())
    )
    assert len(eligible) == int(all_extracted.sum())
    # Questions no model answered leave the table; the others count as not eligible.
    none_extracted = (
        pd.concat(default_raw).groupby("question_id")["correct"].apply(lambda s: s.isna().all())
    )
    assert dropped == 12_032 - len(eligible) - int(none_extracted.sum())
    drawn = sampling.stratified_subsample(items, 1497, seed=1)
    assert len(drawn.questions) == 1497 and drawn.n_dropped == dropped


def mirror_archives():
    """Every archive the shared mirror holds (all 29 pinned ones when the mirror is absent)."""
    mirror = mirror_location()
    if mirror and "://" not in mirror:
        return sorted(p.name for p in Path(mirror).glob("model_outputs_*_5shots.zip"))
    return sorted(fetch.pinned_checksums())


@pytest.mark.parametrize("name", mirror_archives())
def test_every_mirror_archive_is_usable_by_name(name, mirror, tmp_path):
    model = fetch.model_from_archive(name)
    path = fetch.fetch_archive(name, tmp_path / name, fetch.pinned_checksums()[name], mirror=mirror)
    raw = read_mmlu_pro(path)
    items = build_item_table([raw])
    assert items["model"].unique().tolist() == [model]
    assert items["correct"].mean() == pytest.approx(direct_accuracy(path), abs=0)
    assert items["question_id"].nunique() == len(items) > 10_000
