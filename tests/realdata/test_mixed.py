"""REML fits of the category and nested mixed models on the MMLU-Pro archives.

Oracles: lme4 1.1 ``lmer`` + emmeans on the real default subsample (``make_r_reference.R``) and
lme4 on all 29 mirrored archives (``fit_all_archives.R``); statsmodels' MixedLM optimum on the
subsample with unparsed predictions dropped; exact identities on the real data: nested residual
variance = RM-ANOVA error mean square, contrast SE = sqrt(2 sigma^2 / n), Wald chi^2/(K-1) =
RM-ANOVA F. The synthetic fixtures and the other oracles: tests/unit/stats/test_mixed.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from evalbars.data import fetch
from evalbars.data.items import build_item_table
from evalbars.data.readers import read_mmlu_pro
from evalbars.data.scores import WideScores, wide_scores
from evalbars.stats import mixed

from ..reference.r_results import R_RESULTS
from ..unit.stats.test_mixed import assert_statsmodels_optimum, rm_anova_error_ms


@pytest.fixture(scope="module")
def subsample_wide(default_subsample) -> WideScores:
    return wide_scores(default_subsample.items)


@pytest.fixture(scope="module")
def full_wide(default_items) -> WideScores:
    return wide_scores(default_items)


def test_lme4_reference_on_real_subsample(subsample_wide):
    ref = R_RESULTS["mmlu_pro_default_subsample"]
    assert ref["n_questions"] == subsample_wide.scores.shape[0] == 1497
    accuracy = dict(zip(subsample_wide.models, subsample_wide.scores.mean(0), strict=True))
    for model, value in ref["accuracy"].items():
        assert accuracy[model] == pytest.approx(value, abs=1e-12)
    for spec in mixed.MODEL_SPECS:
        lme4 = ref["lmm"][spec]
        fit = mixed.fit_lmm(subsample_wide, spec)
        assert fit.method == "exact"
        for component, value in lme4["variance"].items():
            assert fit.variance[component] == pytest.approx(value, abs=1e-6)
            assert fit.variance[component] == pytest.approx(value, rel=1e-5)
        assert fit.reml_criterion <= lme4["reml_criterion"] + 1e-9
        se = {(c["model_a"], c["model_b"]): c["se"] for c in lme4["contrasts"]}
        ours = mixed.lmm_contrasts(fit)
        for a, b, s in ours[["model_a", "model_b", "se"]].itertuples(index=False):
            assert s == pytest.approx(se.get((a, b), se.get((b, a))), abs=1e-6)


@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_general_path_on_real_incomplete_data(spec, default_raw, default_subsample):
    """The subsample with unparsed predictions dropped (16% of cells): the general path's
    optimum is statsmodels' REML optimum."""
    items = build_item_table(default_raw, "exclude")
    items = items[items["question_id"].isin(default_subsample.questions["question_id"])]
    wide = wide_scores(items)
    assert not wide.complete
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == "general" and not any(fit.boundary.values())
    assert_statsmodels_optimum(items, fit)


@pytest.mark.parametrize("which", ["subsample", "full"])
def test_real_data_identities(which, subsample_wide, full_wide):
    wide = subsample_wide if which == "subsample" else full_wide
    scores = wide.scores
    n, k = scores.shape
    assert wide.complete and k == 6
    nested = mixed.fit_lmm(wide, "category_question")
    assert nested.method == "exact" and not any(nested.boundary.values())
    ms_error = rm_anova_error_ms(scores)
    assert nested.variance["residual"] == pytest.approx(ms_error, rel=1e-12)
    contrasts = mixed.lmm_contrasts(nested)
    np.testing.assert_allclose(contrasts["se"], np.sqrt(2 * ms_error / n), rtol=1e-12)
    # estimates are the differences of observed accuracies (within-question OLS = GLS)
    accuracy = dict(zip(wide.models, scores.mean(0), strict=True))
    diff = contrasts["model_a"].map(accuracy) - contrasts["model_b"].map(accuracy)
    np.testing.assert_allclose(contrasts["estimate"], diff, atol=1e-12)
    assert (contrasts["estimate"] >= 0).all()
    # Wald chi^2 / (K - 1) for equal means = RM-ANOVA F
    contrast_matrix = np.eye(k)[:-1] - np.eye(k)[1:]
    delta = contrast_matrix @ nested.params
    wald = delta @ np.linalg.solve(contrast_matrix @ nested.cov @ contrast_matrix.T, delta)
    ms_model = n * np.sum((scores.mean(0) - scores.mean()) ** 2) / (k - 1)
    assert wald / (k - 1) == pytest.approx(ms_model / ms_error, rel=1e-10)
    # the category-only model's contrast SE uses its larger residual (question variance in it)
    category = mixed.fit_lmm(wide, "category")
    se_category = mixed.lmm_contrasts(category)["se"].to_numpy()
    np.testing.assert_allclose(se_category, np.sqrt(2 * category.variance["residual"] / n))
    assert se_category[0] > 1.15 * contrasts["se"].iloc[0]


def test_exact_equals_general_on_real_subsample(subsample_wide):
    for spec in mixed.MODEL_SPECS:
        exact = mixed.fit_lmm(subsample_wide, spec, "exact")
        general = mixed.fit_lmm(subsample_wide, spec, "general")
        for component in exact.variance:
            assert general.variance[component] == pytest.approx(exact.variance[component], rel=1e-7)
        assert general.reml_criterion == pytest.approx(exact.reml_criterion, rel=1e-12)


@pytest.fixture(scope="module")
def all_archives_wide(mirror, default_raw, tmp_path_factory) -> WideScores:
    """Every observed row of all 29 archives (policy ``wrong``), as R saw them.

    Reading the archives (~100 MB of zipped JSON) is most of this test's time: the six
    default models' frames are reused from the session, and a local mirror is read in place
    (each archive checked against its pinned checksum) instead of copied.
    """
    frames = list(default_raw)
    read = {frame["model"].iloc[0] for frame in frames}
    local = Path(mirror) if mirror and Path(mirror).is_dir() else None
    target = tmp_path_factory.mktemp("all_archives")
    for name, digest in sorted(fetch.pinned_checksums().items()):
        if fetch.model_from_archive(name) in read:
            continue
        if local is not None:
            path = local / name
            assert fetch.sha256_file(path) == digest, path
        else:
            path = fetch.fetch_archive(name, target / name, digest, mirror)
        frames.append(read_mmlu_pro(path))
    items = build_item_table(frames, "wrong")
    source = R_RESULTS["mmlu_pro_all_archives"]["source"]
    ids = "\n".join(str(q) for q in np.sort(items["question_id"].unique()))
    assert hashlib.sha256(ids.encode()).hexdigest() == source["question_ids_sha256"]
    assert int(items["correct"].sum()) == source["total_correct"] and len(frames) == 29
    return wide_scores(items)


@pytest.mark.parametrize("spec", mixed.MODEL_SPECS)
def test_all_archives_match_lme4(spec, all_archives_wide):
    """347,215 rows, 12,032 questions, 29 models, 0.49% of cells missing. lme4 stops ~3e-8
    short in the nested model's category variance (our gradient at its estimates is not 0);
    its REMLcrit agrees to ~5e-14 relative."""
    ref = R_RESULTS["mmlu_pro_all_archives"]["lmm"][spec]
    wide = all_archives_wide
    assert not wide.complete and wide.scores.shape == (12032, 29)
    fit = mixed.fit_lmm(wide, spec)
    assert fit.method == "general" and fit.n_obs == 347215 and not any(fit.boundary.values())
    for component, value in ref["variance"].items():
        assert fit.variance[component] == pytest.approx(value, abs=1e-7, rel=1e-5)
    if spec == "category_question":  # the figures
        assert fit.variance["residual"] == pytest.approx(0.14329959, abs=5e-9)
        assert fit.variance["question"] == pytest.approx(0.06850130, abs=5e-9)
        assert fit.variance["category"] == pytest.approx(0.01113807, abs=5e-8)
    assert fit.reml_criterion == pytest.approx(ref["reml_criterion"], rel=1e-12)
    fixef = np.array([ref["fixef"][m] for m in fit.names])
    np.testing.assert_allclose(fit.params, fixef, atol=1e-8)
    order = [ref["models"].index(m) for m in fit.names]
    vcov = np.array(ref["vcov"])[np.ix_(order, order)]
    # the level part of vcov moves with the category variance (lme4's 3e-8 there -> 5e-9);
    # contrasts do not depend on it
    np.testing.assert_allclose(fit.cov, vcov, atol=1e-8)
    contrast = np.eye(len(order))[1:] - np.eye(len(order))[:-1]
    np.testing.assert_allclose(
        contrast @ fit.cov @ contrast.T, contrast @ vcov @ contrast.T, rtol=1e-7, atol=1e-12
    )
    # ours is the stationary point of the REML criterion
    data = mixed.general.general_data(mixed.common.prepare(wide, spec))
    ratios = [fit.variance[c] / fit.variance["residual"] for c in mixed.general.RATIOS[spec]]
    _, grad = mixed.general.profiled(np.array(ratios), data, spec)
    assert np.max(np.abs(grad)) < 1e-6
