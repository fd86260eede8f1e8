"""Figures state their findings in their titles, from the same numbers the tables hold."""

from __future__ import annotations

import pandas as pd

from evalbars.render.figures.clustered import clustered_figure
from evalbars.render.figures.fwer import methods_figure, models_figure, power_figure
from evalbars.render.figures.leaderboard import leaderboard_figures
from evalbars.render.figures.precision import halfwidth_figure, questions_needed_figure
from evalbars.stats.planning.precision import precision_tables
from evalbars.studies import combine_settings
from evalbars.studies.clustered import simulate_clustered
from evalbars.studies.leaderboard import simulate_leaderboard

from ...helpers import frames, fwer_frame


def test_simulation_figures_state_their_findings():
    settings = [frames(simulate_leaderboard(n, spread=1.0, runs=2000, seed=1)) for n in (100, 200)]
    table = combine_settings([s.summary for s in settings], ["spread", "questions", "rule"])
    default = settings[1]
    figures = leaderboard_figures(table, default.runs, default.one_run, spread=1.0)
    assert set(figures) == {
        "one_run",
        "leader_grid",
        "difference_histogram",
        "decision_rules",
        "played_out",
    }
    share = (default.runs["a_minus_b_points"] < 0).mean()
    assert f"{share:.0%} of runs" in figures["difference_histogram"].axes[0].get_title(loc="left")
    wrong = table[(table["questions"] == 200) & (table["rule"] == "higher_score_wins")][
        "wrong"
    ].iloc[0]
    assert f"{wrong:.0%}" in figures["decision_rules"].get_suptitle()
    tables = precision_tables()
    halfwidth = halfwidth_figure(tables.precision)
    assert "±7.8 points at 100 questions" in halfwidth.axes[0].get_title(loc="left")
    needed = questions_needed_figure(tables.questions_needed, rate=0.8)
    assert "3,200 questions per model unpaired" in needed.axes[0].get_title(loc="left")
    fwer = pd.concat(
        [
            fwer_frame(range(2, 5), questions=200, rho=0.5, replications=200, seed=1),
            fwer_frame(range(2, 5), questions=200, rho=0.5, gap=0.08, replications=200, seed=1),
        ]
    )
    methods = methods_figure(fwer, models=4, questions=200)
    assert "4 models, 200 shared questions" in methods.axes[0].get_title(loc="left")
    assert "Uncorrected pairwise tests" in models_figure(fwer, questions=200).axes[0].get_title(
        loc="left"
    )
    assert "Multiplicity costs power" in power_figure(fwer, models=4).get_suptitle()
    clustered = pd.concat(
        [
            pd.DataFrame(simulate_clustered(m, 0.31, questions=240, replications=200, seed=1))
            for m in (4, 12)
        ]
    )
    title = clustered_figure(clustered).get_suptitle()
    ratio = clustered[clustered["estimator"] == "clustered_miller"]["se_ratio_to_naive"]
    assert f"{ratio.min():.1f}×" in title and f"{ratio.max():.1f}×" in title
