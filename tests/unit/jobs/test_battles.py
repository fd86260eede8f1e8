"""The battles stage's jobs (evalbars.jobs.battles, evalbars.jobs.figures.battles), the battles
claims table (evalbars.readings.battle_verdicts), the board (evalbars.readings.battle_board),
Elo margins in the claims grammar, how battles are clustered, and how a battles run is
configured (evalbars.pipeline.smk).

The workflow tier runs the rules (tests/workflow/test_battles_report.py)."""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars.api import BATTLE_DEFAULTS
from evalbars.data.battles import battles_preview, read_battles
from evalbars.errors import ConfigError, InputError
from evalbars.jobs import battles as jobs
from evalbars.jobs.figures.battles import battles_figures
from evalbars.pipeline import smk
from evalbars.readings.battle_verdicts import (
    BATTLE_CLAIM_COLUMNS,
    battle_claims_display,
    battle_claims_headline,
    battle_verdicts,
)
from evalbars.readings.battles import (
    adjacent_tiers,
    battle_claims,
    battle_letters,
    battle_plan,
    battles_needed,
    fit_battles,
    naive_vs_clustered,
    pairwise_table,
    rank_intervals,
    with_clusters,
)
from evalbars.readings.claims.parsing import ClaimError, parse_claim
from evalbars.render.figures.style import FigureOutput
from evalbars.stats.bradley_terry import ELO_SCALE, cluster_bootstrap, elo_ratings
from evalbars.stats.pairwise import adjust_pvalues

from ...conftest import REPO

DATA = Path(__file__).resolve().parents[2] / "data" / "battles"
CLUSTERED = DATA / "clustered.csv"
JUDGMENTS = DATA / "arena_hard" / "model_judgment" / "stand-in-judge"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def clustered():
    return read_battles(CLUSTERED)


@pytest.fixture(scope="module")
def arena_hard():
    logging.getLogger("evalbars").setLevel(logging.ERROR)
    try:
        return read_battles(JUDGMENTS)
    finally:
        logging.getLogger("evalbars").setLevel(logging.NOTSET)


def _read(source):
    made = jobs.battles_read(sources=[{"path": str(source)}], strong_weight=3.0)
    return made, made["battles"].frame, json.loads(made["summary"].text)


# --- battles_read ---------------------------------------------------------------------------------


def test_the_read_job_counts_what_the_preview_counts():
    made, battles, summary = _read(CLUSTERED)
    preview = battles_preview(read_battles(CLUSTERED))
    assert (summary["format"], summary["battles"], summary["models"]) == ("table", 600, 6)
    assert (summary["prompts"], summary["ties"], summary["pairs"]) == (150, 85, 15)
    assert summary["lines"] == preview.lines()
    assert summary["categories"] == sorted(read_battles(CLUSTERED)["category"].unique())
    pd.testing.assert_frame_equal(made["battles_models"].frame, preview.per_model)
    assert battles["game"].dtype == "Int64" and len(battles) == 600


def test_the_read_job_on_arena_hard_judgments_says_what_it_dropped(caplog):
    with caplog.at_level(logging.WARNING):
        _, battles, summary = _read(JUDGMENTS)
    assert summary["format"] == "arena_hard" and summary["dropped_judgments"] == 7
    assert summary["battles"] == 786 and set(battles["game"]) == {1, 2}


def test_a_comparison_graph_in_pieces_stops_the_read_naming_the_pieces(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\nb,a,tie\nc,d,model_b\nd,c,model_a\n")
    with pytest.raises(InputError) as error:
        _read(path)
    line = str(error.value)
    assert "\n" not in line and line.startswith(str(path))
    assert "2 groups that never battled each other" in line
    assert "'a', 'b'" in line and "'c', 'd'" in line


# --- battles_fit: the fit and the bootstrap between jobs --------------------------------------------


@pytest.mark.parametrize("ties", ["half", "rao_kupper", "davidson"])
def test_a_fit_comes_back_from_its_table_unchanged(clustered, ties):
    frame, _ = with_clusters(clustered)
    fit = fit_battles(frame, ties=ties, cluster="cluster")
    back = jobs.fit_from_frame(jobs.fit_frame(fit, "note"), fit.units)
    assert back.models == fit.models and back.ties == ties
    np.testing.assert_array_equal(back.theta, fit.theta)
    assert back.tie_parameter == pytest.approx(fit.tie_parameter, nan_ok=True)
    assert set(back.covariances) == {"model", "per_battle", "clustered"}
    for name, matrix in fit.covariances.items():
        np.testing.assert_array_equal(back.covariances[name], matrix)
    assert (back.loglik, back.n_battles, back.n_clusters) == (
        fit.loglik,
        fit.n_battles,
        fit.n_clusters,
    )


def test_a_style_fit_comes_back_with_its_features():
    frame = pd.DataFrame(
        {
            "model_a": ["x", "y", "z"] * 40,
            "model_b": ["y", "z", "x"] * 40,
            "outcome": ([1.0, 0.0, 0.5] * 20) + ([0.0, 1.0, 1.0] * 20),
            "weight": 1.0,
            "prompt_id": [str(i // 3) for i in range(120)],
        }
    )
    rng = np.random.default_rng(1)
    for column in ("tokens_a", "tokens_b", "headers_a", "headers_b", "lists_a", "lists_b",
                   "bold_a", "bold_b"):  # fmt: skip
        frame[column] = rng.integers(0, 50, len(frame)).astype(float)
    fit = fit_battles(frame, style=True)
    back = jobs.fit_from_frame(jobs.fit_frame(fit))
    assert back.features == ("length", "headers", "lists", "bold")
    np.testing.assert_array_equal(back.gamma, fit.gamma)
    np.testing.assert_array_equal(back.covariances["clustered"], fit.covariances["clustered"])


def test_the_fit_job_draws_a_seeded_prompt_cluster_bootstrap():
    _, battles, summary = _read(CLUSTERED)
    settings = dict(ties="half", cluster="auto", style=False, bootstrap=50, seed=7)
    first = jobs.battles_fit(battles, summary, **settings)
    again = jobs.battles_fit(battles, summary, **settings)
    pd.testing.assert_frame_equal(first["draws"].frame, again["draws"].frame)
    draws = jobs.draws_from_frame(first["draws"].frame)
    fit = fit_battles(with_clusters(read_battles(CLUSTERED))[0], cluster="cluster")
    expected = cluster_bootstrap(fit, 50, seed=7)
    np.testing.assert_allclose(draws.theta, expected.theta, rtol=0, atol=1e-12)
    assert first["fit"].frame["note"].iloc[0] == "clustered by prompt (150 prompts, 600 battles)"
    none = jobs.battles_fit(battles, summary, **settings | {"bootstrap": 0})
    assert none["draws"].frame.empty and jobs.draws_from_frame(none["draws"].frame) is None
    assert list(none["draws"].frame.columns) == list(fit.models)


# --- battles_tables: every table is a reading of the one fit -----------------------------------------


@pytest.fixture(scope="module")
def tables():
    _, battles, summary = _read(JUDGMENTS)
    fitted = jobs.battles_fit(
        battles, summary, ties="half", cluster="auto", style=False, bootstrap=100, seed=3
    )
    made = jobs.battles_tables(
        battles,
        summary,
        fitted["fit"].frame,
        fitted["draws"].frame,
        cluster="auto",
        alpha=0.05,
        level=0.95,
        power=0.8,
        anchor="baseline-model",
        anchor_rating=1000.0,
        seed=2024,
    )
    return made, fitted


def test_the_leaderboard_is_the_readings_of_the_fit(arena_hard, tables):
    made, fitted = tables
    board = made["battles_leaderboard"].frame
    fit = fit_battles(arena_hard)
    ratings = elo_ratings(fit, "clustered", anchor="baseline-model").set_index("model")
    assert board["model"].tolist() == ratings.index.tolist()
    np.testing.assert_allclose(board["rating"], ratings["rating"], rtol=1e-12)
    np.testing.assert_allclose(board["ci_low"], ratings["ci_low"], rtol=1e-12)
    naive = elo_ratings(fit, "per_battle", anchor="baseline-model").set_index("model")
    np.testing.assert_allclose(board["ci_high_per_battle"], naive["ci_high"], rtol=1e-12)
    anchor = board.set_index("model").loc["baseline-model"]
    assert anchor["rating"] == 1000.0 and anchor["se"] == 0.0
    tiers = adjacent_tiers(fit, "clustered")
    assert board["tier"].tolist() == tiers["tier"].tolist() == [1, 2, 2, 2, 3]
    letters = battle_letters(pairwise_table(fit, "clustered"), board["model"])
    assert board["letters"].tolist() == letters["letters"].tolist() == ["a", "b", "b", "b", "c"]
    draws = jobs.draws_from_frame(fitted["draws"].frame)
    ranks = rank_intervals(fit, "clustered", draws=draws)
    assert board["rank_low"].tolist() == ranks["rank_low"].tolist() == [1, 2, 2, 2, 5]
    np.testing.assert_allclose(board["p_first"], ranks["p_first"])
    assert board.loc[0, "p_first"] == 1.0
    # the bootstrap's percentile interval brackets each rating, the anchor's is a point
    assert (board["ci_low_bootstrap"] <= board["rating"] + 1e-9).all()
    assert (board["ci_high_bootstrap"] >= board["rating"] - 1e-9).all()
    assert board.loc[board["model"] == "baseline-model", "ci_low_bootstrap"].item() == 1000.0
    counts = board.set_index("model")[["battles", "wins", "ties", "losses"]]
    assert counts.loc["baseline-model"].tolist() == [786, 328, 125, 333]


def test_per_battle_against_clustered_on_the_arena_hard_file(arena_hard, tables):
    """The guide's table: the two games of a prompt agree, so the clustered SE of a difference
    from the baseline is 1.35 times the per-battle one; both readings separate 7 of 10 pairs."""
    made, _ = tables
    table = made["battles_naive_vs_blocked"].frame
    pd.testing.assert_frame_equal(table, naive_vs_clustered(fit_battles(arena_hard)))
    assert table.attrs["separations"] == {"per_battle": 7, "clustered": 7}
    rows = table.set_index(["model_a", "model_b"]).round(1)
    guide = {
        ("model-alpha", "baseline-model"): (216.9, 28.7, 38.8),
        ("model-beta", "baseline-model"): (48.1, 28.0, 37.8),
        ("baseline-model", "model-gamma"): (19.8, 28.0, 37.2),
        ("baseline-model", "model-delta"): (183.7, 30.7, 41.6),
        ("model-alpha", "model-beta"): (168.8, 40.1, 40.3),
        ("model-gamma", "model-delta"): (163.9, 41.6, 43.1),
    }
    for pair, numbers in guide.items():
        assert tuple(rows.loc[pair, ["diff", "se_per_battle", "se_clustered"]]) == numbers
    text = made["battles_naive_vs_blocked"].markdown
    assert text.startswith("Of 10 pairs, 7 are separated by the per-battle reading")


def test_the_pairs_and_the_plan_are_the_readings_of_the_fit(arena_hard, tables):
    made, fitted = tables
    fit = fit_battles(arena_hard)
    pairs = made["battles_pairwise"].frame
    assert pairs["reading"].unique().tolist() == ["clustered", "per_battle", "bootstrap"]
    clustered = pairs[pairs["reading"] == "clustered"].reset_index(drop=True)
    pd.testing.assert_frame_equal(clustered, pairwise_table(fit, "clustered"))
    np.testing.assert_allclose(clustered["p_adjusted"], adjust_pvalues(clustered["p"], "holm"))
    plan = made["battles_plan"].frame
    pd.testing.assert_frame_equal(plan, battle_plan(fit))
    assert made["battles_leaderboard"].markdown.startswith(
        "5 models in 3 tiers (clustered reading, max-t over the adjacent gaps); of 10 pairs, 7 "
        "are separated per battle and 7 clustered (Holm)."
    )


def test_an_anchor_that_is_not_a_model_is_one_line(tables):
    _, battles, summary = _read(CLUSTERED)
    fitted = jobs.battles_fit(
        battles, summary, ties="half", cluster="auto", style=False, bootstrap=0, seed=1
    )
    with pytest.raises(InputError, match=r"battles.anchor: 'gpt-4' is not a model of the battles"):
        jobs.battles_tables(
            battles, summary, fitted["fit"].frame, fitted["draws"].frame, cluster="auto",
            alpha=0.05, level=0.95, power=0.8, anchor="gpt-4", anchor_rating=1000.0, seed=1,
        )  # fmt: skip


# --- Claims: Elo margins, verdicts as every claim's ------------------------------------------------


def test_elo_margins_are_a_unit_of_their_own():
    claim = parse_claim("a > b + 150", ["a", "b"], unit="elo")
    assert (claim.margin, claim.unit, claim.label) == (150.0, "elo", "a > b + 150 Elo")
    assert parse_claim("a >= b - 30 Elo points", unit="elo").margin == 30.0
    assert parse_claim("|a - b| < 0.5 elo", unit="elo").label == "|a - b| < 0.5 Elo"
    with pytest.raises(ClaimError, match="not %: write '5' or '5 Elo'"):
        parse_claim("a > b + 5%", unit="elo")
    # accuracy points keep their checks, and refuse an Elo margin
    with pytest.raises(ClaimError, match="below 100 points"):
        parse_claim("a > b + 150")
    with pytest.raises(ClaimError, match="an Elo margin on item-level scores"):
        parse_claim("a > b + 20 Elo")
    with pytest.raises(ClaimError, match="did you mean 2 points"):
        parse_claim("a > b + 0.02")
    assert parse_claim("a > b + 2").label == "a > b + 2"


def test_claims_are_doubled_one_sided_p_adjusted_over_the_claims(arena_hard):
    frame, note = with_clusters(arena_hard)
    texts = ["model-alpha > model-beta + 50", "best: model-alpha", "model-beta > model-gamma"]
    table = battle_verdicts(frame, texts, note=note)
    assert list(table.columns) == BATTLE_CLAIM_COLUMNS and len(table) == 12
    one_sided = battle_claims(frame, texts, cluster="cluster")
    for kind in ("per_battle", "clustered"):
        raw = one_sided[one_sided["reading"] == kind]
        rows = table[(table["reading"] == kind) & (table["adjustment"] == "none")]
        np.testing.assert_allclose(rows["p"], np.minimum(1, 2 * raw["p"]), rtol=1e-12)
        holm = table[(table["reading"] == kind) & (table["adjustment"] == "holm")]
        np.testing.assert_allclose(holm["p_adjusted"], adjust_pvalues(rows["p"], "holm"))
        assert (holm["family_size"] == 3).all()
    # the pair claim with a 50-point margin: z from the clustered SE
    row = table.iloc[1]
    assert (row["claim"], row["reading"]) == ("model-alpha > model-beta + 50 Elo", "clustered")
    fit = fit_battles(frame, cluster="cluster")
    d, se = fit.difference("model-alpha", "model-beta", "clustered")
    z = (ELO_SCALE * d - 50) / (ELO_SCALE * se)
    assert row["p"] == pytest.approx(2 * special.ndtr(-z), rel=1e-12)
    assert row["ci_low_elo"] == pytest.approx(ELO_SCALE * (d - special.ndtri(0.975) * se))
    # a margin-free claim's clustered p is the pair's two-sided p of battles_pairwise
    pair = pairwise_table(fit, "clustered").set_index(["model_a", "model_b"])
    free = table[(table["claim"] == "model-beta > model-gamma") & (table["reading"] == "clustered")]
    assert free["p"].iloc[0] == pytest.approx(pair.loc[("model-beta", "model-gamma"), "p"])
    assert table.loc[4:7, "rival"].tolist() == ["model-beta"] * 4
    quoted = table[(table["reading"] == "clustered") & (table["adjustment"] == "holm")]
    assert quoted["verdict"].tolist() == ["supported", "supported", "not supported"]
    assert quoted["note"].tolist() == [note] * 3


def test_battles_needed_on_the_quoted_row_plans_for_the_distance_to_the_threshold(arena_hard):
    frame, note = with_clusters(arena_hard)
    table = battle_verdicts(frame, ["model-beta > model-gamma", "model-alpha > model-beta"])
    row = table[(table["reading"] == "clustered") & (table["adjustment"] == "holm")].iloc[0]
    assert row["verdict"] == "not supported" and np.isfinite(row["battles_needed"])
    expected = battles_needed(row["estimate_elo"], tie_rate=row["tie_rate"],
                              design_effect=row["design_effect"], alpha=0.05 / 2, power=0.8)  # fmt: skip
    assert row["battles_needed"] == np.ceil(expected)
    assert row["more_battles"] == row["battles_needed"] - row["pair_battles"]
    decided = table[(table["reading"] == "clustered") & (table["adjustment"] == "holm")].iloc[1]
    assert decided["verdict"] == "supported" and decided["more_battles"] == 0
    # other rows carry no plan
    assert table.loc[table["adjustment"] == "none", "battles_needed"].isna().all()


def test_the_claims_job_refuses_an_unknown_model_in_one_line():
    _, battles, summary = _read(CLUSTERED)
    settings = dict(alpha=0.05, adjust="holm", power=0.8, ties="half", cluster="auto", style=False)
    with pytest.raises(ConfigError, match=r"unknown model 'model-z'; did you mean"):
        jobs.battles_claims(battles, summary, claims=["model-a > model-z"], **settings)
    made = jobs.battles_claims(battles, summary, claims=[], **settings)
    assert made["battles_claims"].frame.empty
    assert list(made["battles_claims"].frame.columns) == BATTLE_CLAIM_COLUMNS


def test_the_claims_are_said_in_one_sentence_and_a_row_each(clustered):
    frame, note = with_clusters(clustered)
    table = battle_verdicts(frame, ["model-a > model-f", "model-a > model-b"], note=note)
    assert battle_claims_headline(table) == (
        "1 of 2 claims is supported by the clustered reading after the Holm adjustment for 2 "
        "claims."
    )
    shown = battle_claims_display(table)
    assert shown.columns.tolist() == [
        "claim", "battles", "gap, Elo (CI)", "per-battle", "clustered", "per-battle, Holm",
        "clustered, Holm", "battles needed (head to head)",
    ]  # fmt: skip
    assert shown.loc[0, "gap, Elo (CI)"] == "+125.8 (+64.9 to +186.7)"
    assert shown.loc[0, "battles needed (head to head)"] == "decided"


# --- How the battles are clustered -----------------------------------------------------------------


def test_lmarena_battles_are_clustered_by_voter_and_a_file_without_prompts_by_battle():
    frame = pd.DataFrame(
        {
            "model_a": ["x", "y", "x", "y"],
            "model_b": ["y", "x", "y", "x"],
            "prompt_id": ["q1", "q2", "q3", "q4"],
            "judge": ["u1", "u1", "u2", "u2"],
            "record": [1, 2, 3, 4],
        }
    )
    voted, note = with_clusters(frame, file_format="lmarena")
    assert voted["cluster"].tolist() == ["u1", "u1", "u2", "u2"]
    assert (
        note
        == "clustered by voter (2 voters, 4 battles; LMArena's question_id is unique per battle)"
    )
    by_prompt, note = with_clusters(frame, "prompt", file_format="lmarena")
    assert note.endswith(
        "every prompt has one battle, so the clustered reading is the per-battle one)"
    )
    bare, note = with_clusters(frame.drop(columns=["prompt_id"]), "prompt")
    assert bare["cluster"].tolist() == ["battle 1", "battle 2", "battle 3", "battle 4"]
    assert note.startswith("the battles name no prompt: each battle is its own cluster")
    some = frame.assign(judge=["u1", None, "u2", "u2"])
    with pytest.raises(InputError, match="battle 2 names no judge while others do"):
        with_clusters(some, "voter")


def test_battles_without_prompts_read_as_per_battle_with_cr1():
    frame = read_battles(DATA / "worked_example.csv")
    own, note = with_clusters(frame)
    fit = fit_battles(own, cluster="cluster")
    n = len(frame)
    np.testing.assert_allclose(
        fit.covariances["clustered"], fit.covariances["per_battle"] * n / (n - 1), rtol=1e-9
    )


# --- The first screen and the figures -----------------------------------------------------------------


def test_the_first_screen_answers_the_claims_or_gives_the_separations(tables):
    made, fitted = tables
    _, _, summary = _read(JUDGMENTS)
    board = made["battles_leaderboard"].frame
    side = made["battles_naive_vs_blocked"].frame
    frame, note = with_clusters(read_battles(JUDGMENTS))
    claims = battle_verdicts(frame, ["model-alpha > model-beta"], note=note)
    page = jobs.battles_landing(
        summary, board, side, claims, fitted["fit"].frame, notes=["a note"], alpha=0.05
    )["landing"].text
    assert "786 battles on 100 prompts between 5 models" in page
    assert "clustered by prompt (100 prompts, 786 battles)" in page
    assert "The claim is supported by the clustered reading." in page
    assert "Of 10 pairs, 7 are separated by the per-battle reading" in page
    assert "Tiers of the clustered reading (3, max-t over the adjacent gaps)" in page
    assert '<p class="note">a note</p>' in page
    bare = jobs.battles_landing(
        summary, board, side, claims.iloc[:0], fitted["fit"].frame, notes=[], alpha=0.05
    )["landing"].text
    assert 'pass --claim "model-alpha > model-beta" to evalbars report' in html.unescape(bare)
    assert bare.index("Of 10 pairs") < bare.index("Per-battle versus clustered")


def test_the_figures_state_their_finding(tables):
    made, _ = tables
    drawn = battles_figures(
        made["battles_leaderboard"].frame,
        made["battles_naive_vs_blocked"].frame,
        level=0.95,
        max_systems=3,
    )
    assert set(drawn) == {"battles_ratings", "battles_intervals"}
    assert all(isinstance(item, FigureOutput) for item in drawn.values())
    ratings = drawn["battles_ratings"].figure.axes[0].get_title()
    assert (
        ratings == "5 models fall in 3 tiers under the clustered reading\n(top 3 shown, 2 left out)"
    )
    intervals = drawn["battles_intervals"].figure.axes[0].get_title()
    assert intervals.startswith("7 of 10 pairs are separated per battle, 7 clustered")


# --- A battles run's configuration ------------------------------------------------------------------


def test_a_battles_run_makes_the_battles_stage_in_place_of_the_stages_that_read_scores():
    shipped = {"run": {"stages": ["data", "analysis", "replication", "ranks", "simulations",
                                  "claims", "leaderboard"]}}  # fmt: skip
    assert smk.run_stages(shipped) == shipped["run"]["stages"]
    assert smk.run_stages(shipped | {"data": "battles"}) == ["battles", "simulations"]
    assert smk.run_stages({"data": "battles", "run": {"stages": ["simulations"]}}) == [
        "simulations"
    ]
    assert not smk.labelled_run({"data": "battles", "labels": None}, [])


@pytest.mark.parametrize(
    "config, line",
    [
        ({"run": {"stages": ["battles"]}}, "`run.stages`: the battles stage reads pairwise"),
        ({"data": "battles", "models": ["Yi-6B"]}, "config key `models`: a battles run"),
        ({"data": "battles", "labels": "l.csv"}, "config key `labels`: a battles run"),
        ({"data": "battles", "battles": {"cluster": "judge"}}, '`battles.cluster`: "judge"'),
        ({"data": "battles", "battles": {"tie": "half"}}, "`battles.tie` does not exist"),
    ],
)
def test_a_battles_setting_that_does_not_fit_is_one_line(config, line):
    with pytest.raises(ConfigError, match=line.replace("(", r"\(").replace(")", r"\)")):
        smk.validate_config(config, SCHEMA)


def test_the_schema_fills_the_battles_defaults_of_the_api():
    config = smk.validate_config({"data": "battles"}, SCHEMA)
    battles = config["battles"]
    for key, value in BATTLE_DEFAULTS.items():
        assert battles[key] == value, key
    assert battles["strong_weight"] == 3 and battles["baseline"] is None
