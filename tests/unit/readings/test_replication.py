"""Replication check: the paper's numbers, the per-seed analysis, re-scoring, and the summary logic."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars.data.items import ITEM_COLUMNS, build_item_table, rescore
from evalbars.data.scores import wide_scores
from evalbars.readings import replication
from evalbars.readings.paper import PAPER_MODELS, PAPER_VALUES
from evalbars.render.figures.replication import replication_figure
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.accuracy import accuracy_table


def test_paper_values_are_internally_consistent():
    # The transcribed statistics must give the transcribed p-values at the paper's degrees of
    # freedom (the paper's section 5.2): F(5,7480) = 4.45, p = 4.8e-4; F(5,8976) = 2.90, p = .013;
    # Friedman chi2(5) = 22.2, p = 4.8e-4. A typo in either column breaks this.
    values = PAPER_VALUES.set_index("quantity")["paper_value"]
    assert stats.f.sf(values["rm_anova_f"], 5, 7480) == pytest.approx(
        values["rm_anova_p"], rel=0.02
    )
    assert stats.f.sf(values["oneway_f"], 5, 8976) == pytest.approx(values["oneway_p"], rel=0.05)
    assert stats.chi2.sf(values["friedman_chi2"], 5) == pytest.approx(
        values["friedman_p"], rel=0.02
    )
    # Counts are out of the 15 pairs of six models; corrections can only remove pairs.
    assert values["n_significant_holm"] <= values["n_significant_paired"] <= 15
    assert values["n_significant_bonferroni"] <= values["n_significant_holm"]
    assert len(PAPER_MODELS) == 6 and len(values) == 14


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


def fake_runs(values, configured_value, quantity="spread_points", policy="wrong"):
    rows = [(policy, 1000 + i, False, quantity, v) for i, v in enumerate(values)]
    rows.append((policy, 2024, True, quantity, configured_value))
    return pd.DataFrame(rows, columns=["policy", "seed", "configured", "quantity", "value"])


def test_replication_table_percentile_and_range():
    paper = pd.DataFrame(
        [("spread_points", "spread", 50.0, "points"), ("rm_anova_f", "F", 200.0, "F")],
        columns=["quantity", "description", "paper_value", "axis_label"],
    )
    runs = pd.concat(
        [fake_runs(np.arange(1, 101), 42.0), fake_runs(np.arange(1, 101), 7.0, "rm_anova_f")]
    )
    table = replication.replication_table(runs, paper).set_index("quantity")
    spread = table.loc["spread_points"]
    assert spread["our_value"] == 42.0
    assert spread["n_seeds"] == 100
    assert spread["paper_percentile"] == pytest.approx(49.5)  # 49 below, one tie counted half
    assert spread["seed_q025"] == pytest.approx(np.quantile(np.arange(1, 101), 0.025))
    assert spread["seed_q975"] == pytest.approx(97.525)
    assert spread["reproduced"]
    assert table.loc["rm_anova_f", "paper_percentile"] == 100
    assert not table.loc["rm_anova_f", "reproduced"]
    summary = replication.replication_summary(table.reset_index())
    assert summary == (
        "Under missing_prediction=wrong, 1 of 2 of the paper's numbers lie inside the middle 95% "
        "of our 100 subsample redraws; not reproduced: rm_anova_f."
    )


def test_counts_tied_with_the_paper_are_reproduced():
    # Integer counts: a paper value equal to both quantiles is inside the closed range.
    runs = fake_runs([3] * 50, 3, quantity="n_significant_holm")
    table = replication.replication_table(runs)
    row = table.iloc[0]
    assert (row["seed_q025"], row["seed_q975"], row["paper_percentile"]) == (3, 3, 50)
    assert row["reproduced"]


def test_replication_figure_has_one_panel_per_number():
    rng = np.random.default_rng(0)
    rows = []
    for policy in ("wrong", "random_guess"):
        for quantity, value in PAPER_VALUES[["quantity", "paper_value"]].itertuples(index=False):
            values = value * np.exp(rng.normal(0, 0.2, 41))
            rows += [(policy, s, s == 0, quantity, v) for s, v in enumerate(values)]
    runs = pd.DataFrame(rows, columns=["policy", "seed", "configured", "quantity", "value"])
    table = replication.replication_table(runs)
    fig = replication_figure(runs, table)
    assert isinstance(fig, matplotlib.figure.Figure)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 14
    counts = table.groupby("policy", sort=False)["reproduced"].sum()
    title = fig._suptitle.get_text()
    assert f"{counts['wrong']} of 14 (wrong)" in title and "of 40 subsample redraws" in title
    assert visible[9].get_xlabel() == "log10 p"


# --- The seeds spread over jobs (replication.jobs; the SLURM run: tests/cluster) -----------------


def test_seed_chunks_are_contiguous_and_cover_the_seed_list():
    for n_seeds, jobs in [(200, 1), (200, 3), (40, 7), (5, 9), (10, 4)]:
        chunks = replication.seed_chunks(n_seeds, jobs)
        assert len(chunks) == min(jobs, n_seeds)
        assert [i for chunk in chunks for i in chunk] == list(range(n_seeds))
        sizes = [len(chunk) for chunk in chunks]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    with pytest.raises(ValueError, match="jobs >= 1"):
        replication.seed_chunks(40, 0)


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
