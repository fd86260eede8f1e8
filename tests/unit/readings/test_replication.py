"""Replication check: the paper's numbers, the per-seed analysis, re-scoring, and the summary logic."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars.readings import replication
from evalbars.readings.paper import PAPER_MODELS, PAPER_VALUES
from evalbars.render.figures.replication import replication_figure


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
