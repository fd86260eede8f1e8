"""Pairwise tables: published values, R reference values, brute force, identities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evalbars.data.scores import WideScores, accuracy_order
from evalbars.render.landing import separation_sentence
from evalbars.stats import pairwise
from evalbars.stats.accuracy import accuracy_table

from ...helpers import PAIR_COLUMNS, ones_then_zeros, wide_from
from ...reference.r_results import R_RESULTS, r_pair

DATA = Path(__file__).resolve().parents[2] / "data"


# --- Published values -----------------------------------------------------------------------------


def test_exact_mcnemar_agresti_presidential_approval():
    # Agresti (1990), presidential approval: discordant 150 vs 86; R binom.test(86, 236): p = 3.71593613957143e-05.
    assert float(pairwise.exact_mcnemar_p(150, 86)) == pytest.approx(
        3.71593613957143e-05, rel=1e-10
    )
    assert float(pairwise.exact_mcnemar_p(86, 150)) == pytest.approx(
        3.71593613957143e-05, rel=1e-10
    )
    assert float(pairwise.exact_mcnemar_p(0, 0)) == 1.0
    assert float(pairwise.exact_mcnemar_p(5, 5)) == 1.0


@pytest.mark.parametrize("b, c", [(3, 11), (40, 20), (0, 7), (150, 86), (500, 460)])
def test_exact_mcnemar_matches_statsmodels(b, c):
    expected = mcnemar([[10, b], [c, 10]], exact=True).pvalue
    assert float(pairwise.exact_mcnemar_p(b, c)) == pytest.approx(expected, rel=1e-12)


def test_adjust_pvalues_published_example():
    # Bonferroni and Holm of p = (0.01, 0.04, 0.03, 0.005), as statsmodels' multipletests gives.
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(pairwise.adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_allclose(pairwise.adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(pairwise.adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    with pytest.raises(ValueError, match="unknown adjustment 'fdr'"):
        pairwise.adjust_pvalues(p, "fdr")


def test_adjust_pvalues_equals_multipletests_with_ties_and_leaves_its_input_alone():
    # In-place steps (no new array of every pair per step) give statsmodels' values, ties,
    # ones and several families included, and never write to the p-values given.
    rng = np.random.default_rng(7)
    p = rng.random((3, 400)) ** 3
    p[:, ::5] = p[:, 1::5]  # ties
    p[:, :4] = 1.0
    given = p.copy()
    for method, name in (("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")):
        adjusted = pairwise.adjust_pvalues(p, method)
        for row in range(p.shape[0]):
            expected = multipletests(p[row], method=name)[1]
            np.testing.assert_allclose(adjusted[row], expected, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(p, given)


def test_holm_with_underflowed_p_values_sorts_only_the_others_and_changes_nothing():
    # Half the pairs of a large leaderboard have p = 0 (the normal tail underflows): Holm sorts
    # only the others, whose multipliers m - j + 1 are unchanged; the values are those of the
    # whole sort (a family on the last axis of a 2-D array), bit for bit, and statsmodels'.
    rng = np.random.default_rng(11)
    for trial in range(60):
        m = int(rng.integers(1, 300))
        p = rng.random(m) ** 4 * (rng.random(m) < 0.6)  # about 40% zeros
        p[:: max(1, m // 7)] = p[0]  # ties, a zero or not
        if trial % 5 == 0:
            p[-1] = np.nan  # NaN sorts last: it stays NaN, as in the whole sort
        if trial % 9 == 0:
            p[:] = 0.0
        adjusted = pairwise.adjust_pvalues(p, "holm")
        np.testing.assert_array_equal(adjusted, pairwise.adjust_pvalues(p[None, :], "holm")[0])
        if not np.isnan(p).any():
            np.testing.assert_array_equal(adjusted, multipletests(p, method="holm")[1])
        assert (adjusted[p == 0] == 0).all()


def test_bh_published_example():
    # Benjamini & Hochberg (1995), section 4.1: 15 p-values of a trial of treatments for
    # myocardial infarction; at q = 0.05 the step-up procedure rejects the four smallest
    # (the largest i with p_(i) <= i q / m is i = 4: 0.0095 <= 4 x 0.05 / 15 = 0.0133).
    p = [0.0201, 0.7590, 0.0001, 0.0298, 0.0004, 0.4262, 0.0019, 0.0344, 0.0278, 1.0]
    p += [0.0095, 0.5719, 0.0459, 0.6528, 0.3240]
    adjusted = pairwise.adjust_pvalues(p, "bh")
    assert sorted(np.flatnonzero(adjusted <= 0.05)) == [2, 4, 6, 10]
    # the fifth smallest, 0.0201, adjusts to min over j >= 5 of 15 p_(j) / j = 15 x 0.0201 / 5
    assert adjusted[0] == pytest.approx(0.0603, abs=1e-12)


def test_miller_math_example_unpaired_se():
    # Miller (2024, arXiv:2411.00640), Galleon vs Dreadnought on MATH, n = 5000, 65.5% vs 63.0%: SE 0.672% / 0.683%, unpaired difference SE 0.958%, z = 2.61.
    wide = wide_from(
        [ones_then_zeros(5000, 3275), ones_then_zeros(5000, 3150)],
        models=["Galleon", "Dreadnought"],
    )
    models = accuracy_table(wide)
    assert models["model"].tolist() == ["Galleon", "Dreadnought"]
    np.testing.assert_allclose(models["se_naive"], [0.00672, 0.00683], atol=5e-6)
    row = pairwise.pairwise_table(wide).iloc[0]
    assert row["diff"] == pytest.approx(0.025, abs=1e-15)
    assert row["se_unpaired"] == pytest.approx(0.00958, abs=5e-6)
    assert row["z_unpaired"] == pytest.approx(2.61, abs=5e-3)


# --- Brute force and conventions -------------------------------------------------------------------


def brute_force_pair(x, y):
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    n = len(x)
    d = x - y
    se_unpaired = np.sqrt(x.var() / n + y.var() / n)
    se_paired = np.sqrt(d.var() / n)  # numpy var: ddof = 0
    return {
        "n": n,
        "diff": d.mean(),
        "se_unpaired": se_unpaired,
        "se_paired": se_paired,
        "p_unpaired": 2 * stats.norm.sf(abs(d.mean() / se_unpaired)),
        "p_paired": 2 * stats.norm.sf(abs(d.mean() / se_paired)),
        "n10": int((x > y).sum()),
        "n01": int((x < y).sum()),
    }


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_pairwise_table_equals_a_loop_over_pairs(missing, binary):
    rng = np.random.default_rng(5)
    ability = rng.normal(size=(400, 1))
    latent = ability + rng.normal(size=(400, 5)) + np.linspace(0.5, -0.5, 5)
    # Binary scores count wins by matrix products; graded scores by comparisons.
    scores = (latent > 0).astype(float) if binary else np.round(np.clip(latent, -1, 1), 1)
    scores[rng.random(scores.shape) < missing] = np.nan
    wide = wide_from(scores.T, models=list("VWXYZ"))
    table = pairwise.pairwise_table(wide, alpha=0.05)
    assert table.columns.tolist() == PAIR_COLUMNS
    assert len(table) == 10
    order = accuracy_order(wide)
    assert table[["model_a", "model_b"]].equals(pairwise.model_pairs(order))
    for row in table.itertuples(index=False):
        ref = brute_force_pair(
            scores[:, "VWXYZ".index(row.model_a)], scores[:, "VWXYZ".index(row.model_b)]
        )
        for key, value in ref.items():
            assert getattr(row, key) == pytest.approx(value, rel=1e-12, abs=1e-15), key
        if binary:
            expected = float(pairwise.exact_mcnemar_p(ref["n10"], ref["n01"]))
            assert row.p_mcnemar == pytest.approx(expected)
        else:  # graded scores have no 2x2 table: the exact test does not apply
            assert np.isnan(row.p_mcnemar) and not row.significant_mcnemar
    np.testing.assert_allclose(table["p_holm"], pairwise.adjust_pvalues(table["p_paired"], "holm"))
    np.testing.assert_allclose(table["p_bonferroni"], np.minimum(1, 10 * table["p_paired"]))
    for test in ("unpaired", "paired", "mcnemar", "bonferroni", "holm"):
        assert (table[f"significant_{test}"] == (table[f"p_{test}"] < 0.05)).all()


def test_identical_models_give_z_zero_p_one():
    x = ones_then_zeros(50, 20)
    row = pairwise.pairwise_table(wide_from([x, x])).iloc[0]
    assert (row["diff"], row["se_paired"], row["z_paired"], row["p_paired"]) == (0, 0, 0, 1)
    assert (row["n10"], row["n01"], row["p_mcnemar"]) == (0, 0, 1.0)


# --- R reference values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "synthetic_balanced",
        "synthetic_boundary",
        "synthetic_boundary_question",
        "synthetic_incomplete",
    ],
)
def test_counts_and_mcnemar_match_r(name, reference_wide):
    ref = R_RESULTS[name]
    wide = reference_wide(name)
    table = pairwise.pairwise_table(wide)
    models = accuracy_table(wide).set_index("model")
    for model, accuracy in ref["accuracy"].items():
        assert models.loc[model, "accuracy"] == pytest.approx(accuracy, rel=1e-12)
    assert len(ref["mcnemar"]) == len(table)
    for row in table.itertuples(index=False):
        r = r_pair(ref, "mcnemar", row.model_a, row.model_b)
        assert (row.n, row.n10, row.n01) == (r["n"], r["n10"], r["n01"])
        assert row.p_mcnemar == pytest.approx(r["p"], rel=1e-8)


# --- Tukey's p for many pairs -------------------------------------------------------------------------


def test_tukey_p_interpolates_the_exact_tail_for_many_pairs():
    rng = np.random.default_rng(5)
    z = np.abs(rng.normal(0.0, 4.0, pairwise.TUKEY_EXACT_LIMIT + 1000))
    for k in (40, 1000):
        exact = np.minimum(1.0, stats.studentized_range.sf(np.sqrt(2.0) * z, k, np.inf))
        approx = pairwise.tukey_p(z, k)
        assert np.abs(approx - exact).max() < 1e-7
        central = exact > 1e-8
        np.testing.assert_allclose(approx[central], exact[central], rtol=2e-6)
        assert np.all(np.diff(approx[np.argsort(z)]) <= 0)  # decreasing in |z|
    few = z[: pairwise.TUKEY_EXACT_LIMIT]
    np.testing.assert_array_equal(
        pairwise.tukey_p(few, 6), stats.studentized_range.sf(np.sqrt(2.0) * few, 6, np.inf)
    )


# --- Exact counts, blocks and shards -----------------------------------------------------------------


def scored(kind: str, n: int = 120, k: int = 11, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1)) + rng.normal(size=(n, k)) + np.linspace(1, -1, k)
    x = (latent > 0).astype(float) if kind.startswith("binary") else np.round(latent, 1)
    x[:, 4] = x[:, 3]  # two models that agree everywhere
    if kind.endswith("missing"):
        x[rng.random(x.shape) < 0.15] = np.nan
    return x


@pytest.mark.parametrize("kind", ["binary", "binary missing", "graded", "graded missing"])
@pytest.mark.parametrize("block", [2, 5, pairwise.BLOCK_MODELS])
def test_pair_statistics_of_one_matrix_equal_those_of_the_float64_products_to_the_bit(
    kind, block, monkeypatch
):
    # A stack of one matrix takes the K x K float64 products; one 0/1 matrix takes exact float32
    # counts in blocks of models. The counts are integers, so every statistic is the same float.
    monkeypatch.setattr(pairwise, "BLOCK_MODELS", block)
    monkeypatch.setattr(pairwise, "_COMPARE_CELLS", 500)  # graded comparisons in many steps
    x = scored(kind)
    stack = pairwise.pair_statistics(x[None])
    one = pairwise.pair_statistics(x)
    columns = np.random.default_rng(0).permutation(x.shape[1])
    reordered = pairwise.pair_statistics(x, columns=columns)
    for key in pairwise.PAIR_STATISTICS:
        np.testing.assert_array_equal(one[key], stack[key][0], err_msg=key)
        np.testing.assert_array_equal(
            reordered[key], pairwise.pair_statistics(x[:, columns])[key], err_msg=key
        )
    a, b = np.triu_indices(x.shape[1], k=1)
    for p in (0, 7, len(a) - 1):
        ref = brute_force_pair(x[:, a[p]], x[:, b[p]])
        assert (one["n"][p], one["n10"][p], one["n01"][p]) == (ref["n"], ref["n10"], ref["n01"])


def test_pair_ranges_cut_the_pairs_into_contiguous_blocks():
    for k, shards in [(2, 1), (6, 4), (11, 3), (40, 7), (5, 12)]:
        ranges = [pairwise.pair_range(k, s, shards) for s in range(shards)]
        assert ranges[0][0] == 0 and ranges[-1][1] == k * (k - 1) // 2
        assert all(
            stop == start for (_, stop), (start, _) in zip(ranges[:-1], ranges[1:], strict=True)
        )
        sizes = [stop - start for start, stop in ranges]
        assert max(sizes) - min(sizes) <= 1
    with pytest.raises(ValueError, match="shard 3 of 3"):
        pairwise.pair_range(6, 3, 3)


@pytest.mark.parametrize("kind", ["binary", "binary missing", "graded missing"])
def test_shards_gathered_give_the_whole_table_byte_for_byte(kind, monkeypatch):
    # Shards cut rows mid-way through a model's pairs and mid-way through a block of models;
    # Holm and Bonferroni are computed once, over the gathered family.
    monkeypatch.setattr(pairwise, "BLOCK_MODELS", 4)
    x = scored(kind)
    wide = wide_from(x.T, models=[f"m{i:02d}" for i in range(x.shape[1])])
    whole = pairwise.pairwise_table(wide)
    assert whole.columns.tolist() == PAIR_COLUMNS
    for shards in (1, 3, 8, 60):
        parts = [
            pairwise.pair_tests(wide, pairwise.pair_range(len(wide.models), s, shards))
            for s in range(shards)
        ]
        assert all(part.columns.tolist() == pairwise.PAIR_TEST_COLUMNS for part in parts)
        gathered = pairwise.adjusted_pair_table(pd.concat(parts, ignore_index=True))
        assert gathered.to_csv(index=False) == whole.to_csv(index=False)
        pd.testing.assert_frame_equal(gathered, whole)


# --- When the exact readings apply ----------------------------------------------------------------


def test_exact_readings_apply_to_one_0_1_sample_per_shared_cell():
    # A: 0/1, one sample; B: three samples on question 0 only; C: partial credit on question 3
    # only; D: answers questions 1-3 (not question 0, B's repeated cell).
    nan = np.nan
    scores = np.array([[1, 2 / 3, 1, nan], [0, 1, 0, 1], [1, 0, 1, 0], [1, 1, 0.5, 1]], dtype=float)
    samples = np.array([[1, 3, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]])
    wide = WideScores(scores, list("ABCD"), np.arange(4), np.full(4, "x"), samples=samples)
    a, b = np.triu_indices(4, k=1)
    reasons = pairwise.exact_readings_reasons(wide, a, b)
    expected = {
        ("A", "B"): pairwise.REPEATED_SAMPLES,
        ("A", "C"): pairwise.NOT_BINARY,
        ("A", "D"): "",
        ("B", "C"): pairwise.REPEATED_SAMPLES,  # repeated samples are named first
        ("B", "D"): "",  # B's repeated cell is on a question D did not answer
        ("C", "D"): pairwise.NOT_BINARY,
    }
    names = np.array(list("ABCD"))
    pairs = [(names[i], names[j]) for i, j in zip(a, b, strict=True)]
    assert dict(zip(pairs, reasons, strict=True)) == expected
    # One pair by name, the same rule.
    assert pairwise.exact_readings_not_applicable(wide, "B", "D") is None
    assert pairwise.exact_readings_not_applicable(wide, "D", "C") == "scores are not 0/1"
    # Complete data (questions 1-3) take each model's own cells: C's partial credit.
    complete = pairwise.exact_readings_reasons(wide.rows([1, 2, 3]), a, b)
    assert complete.tolist() == [pairwise.NOT_BINARY if "C" in pair else "" for pair in pairs]
    # pairwise.csv: the exact McNemar p only where the exact readings apply.
    table = pairwise.pairwise_table(wide).set_index(["model_a", "model_b"])
    for (x, y), reason in expected.items():
        row = table.loc[(x, y)] if (x, y) in table.index else table.loc[(y, x)]
        assert np.isnan(row["p_mcnemar"]) == bool(reason), (x, y)
        assert not (np.isnan(row["p_mcnemar"]) and row["significant_mcnemar"])


def test_a_constant_difference_is_bounded_by_the_worst_null_that_gives_it():
    # d = c on all n questions, c > s: under the null distribution d in {c, -1} with mean s,
    # P(d = c) = (1 + s)/(1 + c), the largest any null with mean <= s allows; its n-th power is
    # the p. For 0/1 scores (c = 1) that is the sign test, ((1 + s)/2)^n.
    for c, s, n in (
        (0.5, 0.0, 3),
        (0.3, -0.1, 20),
        (1.0, 0.0, 10),
        (1.0, 0.01, 6),
        (-0.05, -0.1, 8),
    ):
        chance = (1 + s) / (1 + c)
        assert chance * c + (1 - chance) * -1 == pytest.approx(s, abs=1e-15)
        assert pairwise.zero_se_one_sided_p(c, n, s) == pytest.approx(chance**n, rel=1e-12)
    assert pairwise.zero_se_one_sided_p(1.0, 10) == 2.0**-10
    assert pairwise.zero_se_one_sided_p([0.0, 0.2, -0.3], 5, 0.2).tolist() == [1.0, 1.0, 1.0]
    # Round-off of zero is zero: a constant partial-credit gap has SE 0, not 1e-9.
    x = np.tile([0.7, 0.1], (7, 1))
    stats = pairwise.pair_statistics(x)
    assert stats["se_paired"][0] == 0.0 and stats["diff"][0] == pytest.approx(0.6)


def test_a_pair_with_no_shared_question_has_no_mcnemar_p_and_says_so_in_words():
    wide = WideScores(
        np.array([[1.0, np.nan], [0.0, np.nan], [np.nan, 1.0]]),
        ["alpha", "beta"],
        np.arange(3),
        np.array(["x", "x", "x"]),
    )
    table = pairwise.pairwise_table(wide)
    assert table["n"].tolist() == [0] and np.isnan(table["p_mcnemar"].iloc[0])
    assert separation_sentence(table) == (
        "No two models share a question: the 1 pair has no paired reading, and each model is "
        "read on its own questions."
    )
