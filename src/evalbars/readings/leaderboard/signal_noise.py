"""Benchmark signal-to-noise: can this benchmark (or this category) support a ranking?

Signal is the spread of the systems' scores; noise the uncertainty of one system's score.
Heineman et al. (2025) define the signal as the relative dispersion of scores across
models, :math:`\\max_{j,k}|m_j - m_k| / \\bar m`, the noise as the relative standard
deviation of one model's score, :math:`\\sigma / \\bar m`, and SNR as their ratio (the
mean score cancels), and show that SNR predicts how often a benchmark's small-scale
decisions hold. Their noise is run-to-run (checkpoint) variation; evalbars has two
noises:

- ``noise_sampling``: the standard error of a score over the questions, averaged over
  the systems (what another draw of questions would change);
- ``noise_runs``: where cells hold repeated samples (epochs), the standard deviation of
  one run's score, :math:`\\sqrt{\\sum_q s_q^2}/n` with :math:`s_q^2` the variance of
  question q's samples, averaged over the systems (what another run on the same
  questions would change).

``snr`` is ``snr_runs`` where epochs exist, else ``snr_sampling``. A category *lowers*
the benchmark's SNR when the benchmark without it has a higher one (their
intervention "drop noisy subtasks").

References
----------
.. [1] Heineman, D. et al. (2025). Signal and Noise: A Framework for Reducing
   Uncertainty in Language Model Evaluation. arXiv:2508.13144.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores

__all__ = ["signal_to_noise"]


def _snr(sums, squares, counts, run_var, has_runs):
    """Signal, noises and SNRs from per-(scope, model) score sums, squares and counts."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / counts
        se = np.sqrt(np.maximum(squares / counts - mean**2, 0.0) / counts)
        spread = np.nanmax(mean, axis=-1) - np.nanmin(mean, axis=-1)
        noise_sampling = np.nanmean(se, axis=-1)
        noise_runs = np.nanmean(np.sqrt(run_var) / counts, axis=-1) if has_runs else np.nan
        return {
            "mean_score": np.nanmean(mean, axis=-1),
            "signal": spread,
            "noise_sampling": noise_sampling,
            "snr_sampling": spread / noise_sampling,
            "noise_runs": noise_runs * np.ones_like(spread),
            "snr_runs": spread / noise_runs,
        }


def signal_to_noise(wide: WideScores) -> pd.DataFrame:
    """SNR of the whole benchmark and of each category, and which categories lower it.

    Returns
    -------
    DataFrame
        First row ``scope = all``, then one per category: ``scope, questions, models,
        mean_score, signal, noise_sampling, snr_sampling, noise_runs, snr_runs, snr,
        snr_without, lowers_snr``. ``signal`` is the largest minus the smallest
        system score (proportion); ``snr_without`` the benchmark's SNR with the
        category left out and ``lowers_snr`` whether that is higher than the whole
        benchmark's. Sums are taken per (category, model) by bincount, so the
        leave-one-out SNRs are totals minus one category.
    """
    answered = np.isfinite(wide.scores)
    filled = np.where(answered, wide.scores, 0.0)
    counts_cells = wide.sample_counts
    has_runs = bool((counts_cells > 1).any())
    with np.errstate(invalid="ignore", divide="ignore"):
        cell_var = np.where(counts_cells > 1, wide.within_squares / (counts_cells - 1), 0.0)
    names, codes = np.unique(wide.categories, return_inverse=True)
    k = filled.shape[1]
    flat = (codes[:, None] * k + np.arange(k)[None, :]).ravel()
    size = len(names) * k

    def per_category(values):
        return np.bincount(flat, weights=values.ravel(), minlength=size).reshape(len(names), k)

    parts = [per_category(v) for v in (filled, filled * filled, answered.astype(float), cell_var)]
    totals = [p.sum(axis=0) for p in parts]
    whole = _snr(*totals, has_runs)
    cats = _snr(*parts, has_runs)
    without = _snr(*[t[None, :] - p for t, p in zip(totals, parts, strict=True)], has_runs)
    key = "snr_runs" if has_runs else "snr_sampling"
    questions = np.bincount(codes, minlength=len(names))
    table = pd.DataFrame(
        {
            "scope": ["all", *names],
            "questions": [answered.any(axis=1).sum(), *questions],
            "models": k,
            **{
                name: np.concatenate([np.atleast_1d(whole[name]), np.atleast_1d(cats[name])])
                for name in whole
            },
        }
    )
    table["snr"] = table[key]
    table["snr_without"] = np.concatenate([[np.nan], np.atleast_1d(without[key])])
    table["lowers_snr"] = np.concatenate([[False], without[key] > whole[key]])
    return table
