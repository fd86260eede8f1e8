"""Leaderboard verdicts on the MMLU-Pro default subsample: split-half stability, adjacent-pair
resolution, the table, the command and the figure."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars import cli
from evalbars.readings.leaderboard import resolution, stability
from evalbars.readings.leaderboard import table as verdicts
from evalbars.render.figures.verdicts import verdicts_figure
from evalbars.seeding import setting_rng
from evalbars.stats import pairwise
from evalbars.stats.cluster_robust import cr2_mean


def test_stability_matches_ranking_each_half_directly(real_wide):
    table = stability.split_half_stability(real_wide, splits=20, seed=5)
    rng = setting_rng(5, "split_half", 20)
    masks = stability.half_masks(real_wide.categories, 20, rng)
    full = stability.min_ranks(real_wide.scores.mean(axis=0))
    kept = np.zeros(len(real_wide.models))
    for half in [*masks, *~masks]:  # the slow way, one half at a time
        kept += stability.min_ranks(real_wide.scores[half].mean(axis=0)) == full
    np.testing.assert_allclose(table["rank_kept_share"], kept / 40)
    assert list(table["rank"]) == list(full)
    assert table["first_share"].sum() >= 1  # at least one system first on every half


def test_resolution_is_the_planners_formula_on_pairwise_counts(real_wide):
    table = resolution.adjacent_resolution(real_wide, alpha=0.05, power=0.8)
    pairs = pairwise.pairwise_table(real_wide).set_index(["model_a", "model_b"])
    z = special.ndtri(0.975) + special.ndtri(0.8)
    for row in table.itertuples():
        p = pairs.loc[(row.model_a, row.model_b)]
        delta = (p.n10 + p.n01) / p.n
        assert row.disagreement == pytest.approx(delta, rel=1e-12)
        assert row.questions_needed == pytest.approx(
            z**2 * (delta - p["diff"] ** 2) / p["diff"] ** 2
        )
        assert row.se_paired == pytest.approx(p.se_paired, rel=1e-12)
    assert len(table) == 5 and (table["questions"] == 1497).all()
    # Clustered: N* times the design effect, the SE the clustered SE of the differences.
    first = table.iloc[0]
    columns = [real_wide.models.index(m) for m in (first.model_a, first.model_b)]
    d = real_wide.scores[:, columns[0]] - real_wide.scores[:, columns[1]]
    robust = cr2_mean(d, real_wide.categories)
    assert first.se_clustered == pytest.approx(float(robust.se), rel=1e-12)
    assert first.cluster_df == pytest.approx(float(robust.df), rel=1e-12)
    # N* times the design effect and the t(df)-over-normal quantile inflation.
    student = special.stdtrit(first.cluster_df, 0.975) + special.stdtrit(first.cluster_df, 0.8)
    assert first.questions_needed_clustered == pytest.approx(
        first.questions_needed * first.se_clustered**2 / first.se_paired**2 * (student / z) ** 2
    )
    np.testing.assert_array_equal(table["unresolved"], table["ratio"] > 1)


def test_leaderboard_table_and_command(real_wide, default_subsample, tmp_path, capsys):
    table = verdicts.leaderboard_table(real_wide, splits=10, seed=1)
    assert list(table.columns) == verdicts.LEADERBOARD_COLUMNS
    assert list(table["letters"]) == ["a", "ab", "abc", "bc", "c", "c"]
    assert table["next_model"].iloc[:-1].tolist() == table["model"].iloc[1:].tolist()
    path = tmp_path / "items.parquet"  # the item table as the workflow writes it
    default_subsample.items.to_parquet(path, index=False)
    status = cli.main(
        ["leaderboard", str(path), "--format", "csv", "--splits", "10", "--seed", "1"]
    )
    out, err = capsys.readouterr()
    assert status == 0 and err.startswith("6 systems in 3 letter group(s)")
    printed = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(printed["rank_kept_share"], table["rank_kept_share"])
    assert cli.main(["leaderboard", str(path)]) == 0
    header = capsys.readouterr().out.splitlines()[2]
    assert header.split("|")[6].strip() == "letters"
    one = tmp_path / "one.csv"
    rows = {"model": "m", "question_id": [1, 2], "category": "x", "correct": [1, 0]}
    pd.DataFrame(rows).to_csv(one, index=False)
    assert cli.main(["leaderboard", str(one)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ranks 2 or more models, but the data hold 1" in err


def test_figure_draws_the_top_systems_and_counts_those_left_out(real_wide):
    table = verdicts.leaderboard_table(real_wide, splits=5, seed=1)
    fig = verdicts_figure(table, 0.95, max_systems=4)
    board, strip = fig.axes
    assert [t.get_text() for t in board.get_yticklabels()] == list(table["model"].iloc[:4])
    assert "(top 4 shown, 2 left out)" in fig._suptitle.get_text()
    assert "5 of 5 adjacent gaps are unresolved" in fig._suptitle.get_text()
    letters_drawn = [t.get_text() for t in board.texts]
    assert letters_drawn == list(table["letters"].iloc[:4])
    assert len(strip.patches) == 3  # the pairs between drawn systems
