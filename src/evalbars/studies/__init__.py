"""Seeded simulation studies, one module per study.

- :mod:`.leaderboard`: the unpaired leaderboard of the leaderboard-luck explainer;
- :mod:`.fwer`: family-wise error and power on shared questions (the paper's section 5.1);
- :mod:`.clustered`: naive vs clustered vs mixed-model SEs on clustered questions.

Every study is a pure function of its parameters and a seed, returning tidy
DataFrames; randomness comes only from :func:`evalbars.seeding.setting_rng`. Nothing
loops over replicates or questions in Python. Import a study from its module
(``from evalbars.studies.fwer import simulate_fwer``): this package imports none
of them, so a job runs, and is rerun for, the code of its own study only.

The closed-form precision tables are not simulations: see
:mod:`evalbars.stats.planning.precision`. Figures are in :mod:`evalbars.render.figures`.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["combine_settings"]


def combine_settings(tables, sort_by) -> pd.DataFrame:
    """Concatenate per-setting tables and sort them by ``sort_by`` (stable, index reset).

    ``tables`` are DataFrames (or anything :class:`pandas.DataFrame` accepts).
    Sorting makes the combined table independent of the order the settings were
    listed or finished in.
    """
    combined = pd.concat([pd.DataFrame(table) for table in tables], ignore_index=True)
    return combined.sort_values(list(sort_by), kind="stable").reset_index(drop=True)
