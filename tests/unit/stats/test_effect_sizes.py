"""Effect sizes beside p: the discordant odds ratio's exact interval against R, Cohen's h."""

import numpy as np
import pytest

from evalbars.stats.effect_sizes import cohens_h, discordant_odds_ratio


def test_odds_ratio_interval_is_r_binom_test_mapped_to_odds():
    # R 4.2.2: b <- binom.test(150, 236)$conf.int; b / (1 - b)  ->  1.3292283 2.3009791
    ratio = discordant_odds_ratio(150, 86)
    assert float(ratio.estimate) == pytest.approx(150 / 86, rel=1e-15)
    assert float(ratio.low) == pytest.approx(1.3292283, abs=5e-8)
    assert float(ratio.high) == pytest.approx(2.3009791, abs=5e-8)


def test_odds_ratio_at_the_edges_and_stacked():
    ratio = discordant_odds_ratio([5, 0, 0, 3], [0, 4, 0, 3])
    assert ratio.estimate[0] == np.inf and ratio.estimate[1] == 0 and np.isnan(ratio.estimate[2])
    # 5 of 5: the lower bound of pi is (0.025)^(1/5), the upper 1 (odds infinite)
    assert ratio.low[0] == pytest.approx(0.025**0.2 / (1 - 0.025**0.2), rel=1e-12)
    assert ratio.high[0] == np.inf and ratio.low[1] == 0
    assert ratio.estimate[3] == 1.0 and ratio.low[3] * ratio.high[3] == pytest.approx(1.0)


def test_cohens_h_is_the_arcsine_difference():
    assert cohens_h(0.5, 0.5) == 0
    assert float(cohens_h(1.0, 0.0)) == pytest.approx(np.pi)
    assert float(cohens_h(0.5, 0.4)) == pytest.approx(
        2 * np.arcsin(np.sqrt(0.5)) - 2 * np.arcsin(np.sqrt(0.4)), rel=1e-15
    )
