"""Seeding of simulation settings: every setting's stream depends only on what it is.

A setting's :class:`numpy.random.SeedSequence` entropy is ``[seed, study code,
*parameter values]``: it is reproducible on its own, whatever order (or machine,
or core count) the settings run in, and adding or reordering rows of a parameter
grid changes no other setting's numbers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STUDY_CODES", "setting_seed_sequence", "setting_rng", "share_and_se"]

#: Integer code of each study in the seed entropy (never reuse a retired code). 101 and 102
#: are the planner's simulations (:func:`evalbars.stats.planning.sample_size.simulate_pair_power` and
#: :func:`evalbars.stats.planning.holm.simulate_holm_power`); 22 and 23 the leaderboard verdicts' split
#: halves (:mod:`evalbars.readings.leaderboard.stability`) and the gate's sequential simulation;
#: 24 the gate's type-I error under few clusters (:mod:`evalbars.studies.cluster_type1`), 25 the
#: PPI++ coverage study (:mod:`evalbars.studies.ppi_coverage`), 26 the draw of questions to label
#: (:func:`evalbars.data.labels.questions_to_label`); 40 the winner's-curse coverage study
#: (:mod:`evalbars.studies.winners_coverage`).
STUDY_CODES = {
    "leaderboard": 1,
    "fwer": 3,
    "clustered": 4,
    "split_half": 22,
    "sequential": 23,
    "gate_clusters": 24,
    "ppi_coverage": 25,
    "label_sample": 26,
    "winners_coverage": 40,
    "passk_band": 38,  # the pass@k band coverage study (evalbars.studies.passk_band), issue 38
    "battles_coverage": 41,
    "winners_estimated": 42,  # the winner's readings with an estimated covariance, issue 40
    "cost_coverage": 43,  # the cost readings' coverage (evalbars.studies.cost_coverage), issue 40
    "plan_pair": 101,
    "plan_holm": 102,
}


def _encode_parameter(value) -> int:
    """A non-negative parameter as an integer in millionths (0.5 and 0.05 stay distinct)."""
    encoded = round(float(value) * 1_000_000)
    if encoded < 0:
        raise ValueError(f"seeded parameters must be non-negative, got {value!r}")
    return encoded


def setting_seed_sequence(seed: int, study: str, *parameters) -> np.random.SeedSequence:
    """Seed sequence of one simulation setting, independent of every other setting.

    The entropy is ``[seed, study code, *parameters]`` with each parameter in
    millionths, so the stream depends only on what the setting *is* (its
    parameter values), not on where it sits in a grid or when it runs.
    ``study`` is a key of :data:`STUDY_CODES`.
    """
    entropy = [int(seed), STUDY_CODES[study], *(_encode_parameter(p) for p in parameters)]
    return np.random.SeedSequence(entropy)


def setting_rng(seed: int, study: str, *parameters) -> np.random.Generator:
    """:class:`numpy.random.Generator` on :func:`setting_seed_sequence`."""
    return np.random.default_rng(setting_seed_sequence(seed, study, *parameters))


def share_and_se(indicator) -> tuple[float, float]:
    """Share of True and its Monte Carlo SE :math:`\\sqrt{p(1-p)/R}`."""
    indicator = np.asarray(indicator, dtype=bool)
    share = float(indicator.mean())
    return share, float(np.sqrt(share * (1 - share) / indicator.size))
