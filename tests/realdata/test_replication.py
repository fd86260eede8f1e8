"""Replication check on the MMLU-Pro archives: the paper's quantities from the analysis tables,
re-scoring, the per-seed runs on the workflow's subsample, and the seeds table over any number
of jobs."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbars.data.items import ITEM_COLUMNS, build_item_table, rescore
from evalbars.data.scores import wide_scores
from evalbars.readings import replication
from evalbars.readings.paper import PAPER_VALUES
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.accuracy import accuracy_table


@pytest.fixture(scope="module")
def real_wide(default_subsample):
    return wide_scores(default_subsample.items)


def test_paper_quantities_match_the_analysis_tables(real_wide):
    ours = replication.paper_quantities(real_wide, alpha=0.05)
    assert list(ours) == PAPER_VALUES["quantity"].tolist()
    models = accuracy_table(real_wide)
    pairs = pairwise.pairwise_table(real_wide, alpha=0.05)
    tests = omnibus.omnibus_table(real_wide).set_index("test")
    contrasts = {
        spec: mixed.lmm_contrasts(mixed.fit_lmm(real_wide, spec)) for spec in mixed.MODEL_SPECS
    }
    assert ours["spread_points"] == pytest.approx(
        100 * (models["accuracy"].max() - models["accuracy"].min())
    )
    for test in ("unpaired", "paired", "bonferroni", "holm"):
        assert ours[f"n_significant_{test}"] == pairs[f"significant_{test}"].sum()
    assert ours["contrast_se_paired"] == pytest.approx(pairs["se_paired"].mean(), rel=1e-12)
    assert ours["contrast_se_lmm_category"] == pytest.approx(
        contrasts["category"]["se"].mean(), rel=1e-12
    )
    assert ours["contrast_se_lmm_nested"] == pytest.approx(
        contrasts["category_question"]["se"].mean(), rel=1e-12
    )
    assert ours["rm_anova_f"] == pytest.approx(tests.loc["rm_anova", "statistic"], rel=1e-12)
    assert ours["oneway_p"] == pytest.approx(tests.loc["oneway_anova", "p"], rel=1e-12)
    assert ours["friedman_chi2"] == pytest.approx(tests.loc["friedman", "statistic"], rel=1e-12)


def test_rescore_reproduces_build_item_table(default_raw, default_items):
    # Re-scoring the `wrong` table under random_guess gives what the items rule would have built.
    # The item table keeps each question's n_options, so the guesses are exact.
    rescored = rescore(default_items, "random_guess", seed=12345)
    built = build_item_table(default_raw, "random_guess", 12345)
    assert rescored[ITEM_COLUMNS].equals(built)
    missing = default_items["missing_prediction"]
    assert missing.sum() == default_items["pred"].isna().sum() == 12049  # the six models' nulls
    assert 0 < rescored.loc[missing, "correct"].sum() < missing.sum()
    assert rescore(default_items, "wrong", seed=1).equals(default_items)


def test_replication_runs_use_the_workflow_subsample(default_items, real_wide):
    seeds = replication.subsample_seeds(3, seed=1)
    assert seeds.tolist() == replication.subsample_seeds(3, seed=1).tolist()
    runs = replication.replication_runs(
        default_items, ["wrong"], n=1497, seeds=seeds, configured_seed=2024, items_policy="wrong"
    )
    assert runs.columns.tolist() == ["policy", "seed", "configured", "quantity", "value"]
    assert len(runs) == 4 * 14
    configured = runs[runs["configured"]].set_index("quantity")["value"]
    # The configured seed's row equals the analysis of data/subsample (sampling.stratified_subsample).
    expected = replication.paper_quantities(real_wide)
    for quantity, value in expected.items():
        assert configured[quantity] == pytest.approx(value, rel=1e-12)
    other = runs[~runs["configured"]]
    assert set(other["seed"]) == set(seeds.tolist())
    assert other.groupby("seed")["value"].apply(tuple).nunique() == 3  # different subsamples


def test_replication_refuses_an_exclude_item_table(default_items):
    with pytest.raises(ValueError, match="exclude"):
        replication.replication_runs(
            default_items, ["wrong"], 1497, [1], 2024, items_policy="exclude"
        )


@pytest.mark.realdata
def test_replication_seeds_table_is_byte_identical_for_any_number_of_jobs(default_items, tmp_path):
    options = {
        "policies": ["wrong", "random_guess"],
        "n": 1497,
        "configured_seed": 2024,
        "items_policy": "wrong",
        "policy_seed": 12345,
    }
    n_seeds, seed = 5, 1
    whole = replication.replication_runs(
        default_items, seeds=replication.subsample_seeds(n_seeds, seed), **options
    ).to_csv(index=False)
    for jobs in (2, 5):
        chunks = []
        for chunk in range(jobs):
            # As in the workflow: each job writes Parquet, the combining job reads them back.
            path = tmp_path / f"chunk{chunk}_of_{jobs}.parquet"
            replication.replication_chunk(
                default_items, n_seeds=n_seeds, seed=seed, jobs=jobs, chunk=chunk, **options
            ).to_parquet(path, index=False)
            chunks.append(pd.read_parquet(path))
        # Only the first chunk carries the configured seed (2 policies x 14 quantities).
        assert [int(chunk["configured"].sum()) for chunk in chunks] == [28] + [0] * (jobs - 1)
        combined = replication.combine_chunks(chunks, options["policies"])
        assert combined.to_csv(index=False) == whole
