"""The API of pairwise battles: read battle files, the Bradley-Terry board and the claims on
ratings, and the configuration and run of a battles report (:func:`write_report` routes battle
files here). Each function calls the workflow job's own function (:mod:`evalbars.jobs.battles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalbars.api._read import _listed
from evalbars.defaults import ALPHA, LEVEL, POWER
from evalbars.jobs import battles as battle_jobs

__all__ = [
    "BATTLE_DEFAULTS",
    "read_battles",
    "battles_table",
    "battle_claims",
    "battles_report_config",
]


def read_battles(
    paths, *, strong_weight: float | None = None, baseline=None, answers=None
) -> pd.DataFrame:
    """Read pairwise battles from files or folders, checked as the workflow reads them.

    The battles the workflow's ``battles_read`` job reads
    (:func:`evalbars.jobs.battles.read_battle_sources`): LMArena's battle files,
    Arena-Hard-Auto's judgment files, or a table of ``model_a, model_b, winner``, recognised by
    content, with the comparison graph checked to be connected.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        LMArena battle files, Arena-Hard-Auto judgment files (or a judge's folder of them), or
        CSV/TSV/Parquet tables with ``model_a, model_b, winner``
        (:func:`evalbars.data.battles.read_battles`).
    strong_weight : float, optional
        Weight of a strong Arena-Hard-Auto verdict (default 3, as ``show_result.py``).
    baseline : str, optional
        The baseline of Arena-Hard-Auto v0.1 judgments.
    answers : path-like, optional
        Arena-Hard-Auto's ``model_answer`` folder (style columns).

    Returns
    -------
    DataFrame
        :data:`evalbars.data.battles.BATTLE_COLUMNS`; ``attrs`` holds ``format``,
        ``source_path`` and ``dropped_judgments``.

    Raises
    ------
    evalbars.errors.InputError
        One line naming the file, the record and the problem; models that fall into groups
        that never battled each other (their ratings have no common scale), naming the groups.

    See Also
    --------
    battles_table : The Bradley-Terry board of these battles.
    battle_claims : Claims on their ratings.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> battles = eb.read_battles("tests/data/battles/clustered.csv")
    >>> len(battles), battles.attrs["format"]
    (600, 'table')
    """
    return battle_jobs.checked_battles(
        _listed(paths), strong_weight=strong_weight, baseline=baseline, answers=answers
    )


#: The battles settings (config ``battles:``) and their defaults.
BATTLE_DEFAULTS = battle_jobs.SETTINGS


def battles_table(
    battles: pd.DataFrame,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    power: float = POWER,
    **settings,
) -> pd.DataFrame:
    """The Bradley-Terry board of pairwise battles: ratings, intervals, letters, tiers, ranks.

    The workflow's ``battles_leaderboard.csv``, computed by its ``battles_fit`` and
    ``battles_tables`` jobs (:func:`evalbars.readings.battle_board.battle_leaderboard`): one
    row per model, its Elo rating with its prompt-clustered, per-battle, model-based and
    bootstrap intervals, its compact letters, its tier (max-t over adjacent pairs) and its
    rank interval.

    Parameters
    ----------
    battles : DataFrame
        :func:`read_battles`.
    alpha, level, power
        Level of the letters, tiers and rank intervals; of the intervals; of the plan.
    **settings
        The config's ``battles:`` settings (:data:`BATTLE_DEFAULTS`): ``ties`` (``half``,
        ``rao_kupper``, ``davidson``), ``cluster`` (``auto``, ``prompt``, ``voter``),
        ``style``, ``bootstrap`` (replicates; 0 for none), ``seed``, ``anchor``,
        ``anchor_rating``.

    Returns
    -------
    DataFrame
        The board, best first; ``attrs["separations"]`` counts the pairs the per-battle and
        the clustered readings separate (Holm over all pairs), ``attrs["clustering"]`` says
        how the battles are clustered.

    See Also
    --------
    read_battles : The battles it reads.
    evalbars.stats.bradley_terry.fit_bradley_terry : The fit and its covariances.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> battles = eb.read_battles("tests/data/battles/clustered.csv")
    >>> board = eb.battles_table(battles, bootstrap=200)
    >>> board[["model", "rating", "ci_low", "ci_high", "tier"]].round(1).head(2)
         model  rating  ci_low  ci_high  tier
    0  model-a  1050.7  1012.1   1089.3     1
    1  model-b  1039.0   996.4   1081.7     1
    >>> board.attrs["separations"], board.attrs["clustering"]
    ({'per_battle': 4, 'clustered': 3}, 'clustered by prompt (150 prompts, 600 battles)')
    """
    options = battle_jobs.battle_settings(settings)
    summary = battle_jobs.battles_summary(battles)
    fitted = battle_jobs.battles_fit(
        battles,
        summary,
        ties=options["ties"],
        cluster=options["cluster"],
        style=options["style"],
        bootstrap=options["bootstrap"],
        seed=options["seed"],
    )
    fit = fitted["fit"].frame
    made = battle_jobs.battles_tables(
        battles,
        summary,
        fit,
        fitted["draws"].frame,
        cluster=options["cluster"],
        alpha=alpha,
        level=level,
        power=power,
        anchor=options["anchor"],
        anchor_rating=options["anchor_rating"],
        seed=options["seed"],
    )
    board = made["battles_leaderboard"].frame.copy()
    board.attrs = {
        "separations": made["battles_naive_vs_blocked"].frame.attrs["separations"],
        "clustering": str(fit["note"].iloc[0]),
    }
    return board


def battle_claims(
    battles: pd.DataFrame,
    claims_made: Sequence[str],
    alpha: float = ALPHA,
    *,
    adjust: str = "holm",
    power: float = POWER,
    **settings,
) -> pd.DataFrame:
    """Each ranking claim's verdict on Bradley-Terry ratings of pairwise battles.

    The workflow's ``battles_claims.csv``, computed by its ``battles_claims`` job
    (:func:`evalbars.readings.battle_verdicts.battle_verdicts`): every claim (``A > B``,
    ``A > B + d`` with d in Elo points, ``best: A``, ``top k: A``, each optionally ``in
    CATEGORY``) under the per-battle and the prompt-clustered readings, unadjusted and with
    ``adjust`` over the claims.

    Parameters
    ----------
    battles : DataFrame
        :func:`read_battles`.
    claims_made : sequence of str
        The claims, one a string.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of every verdict.
    adjust : {"holm", "bonferroni", "bh"}, default "holm"
        The adjustment over the claims.
    power : float, default :data:`evalbars.defaults.POWER`
        Power at which the battles needed are planned.
    **settings
        The settings of :func:`battles_table` the claims use: ``ties``, ``cluster``,
        ``style``.

    Returns
    -------
    DataFrame
        One row per (claim, reading, adjustment): the claim's estimate and interval in Elo
        points (``estimate_elo``, ``ci_low_elo``, ``ci_high_elo``), ``p``, ``p_adjusted`` and
        the ``verdict``.

    Raises
    ------
    evalbars.errors.ConfigError
        A malformed claim, or one naming a model or category the battles do not hold, in
        one line.

    See Also
    --------
    battles_table : The board the claims are read on.
    check_claims : Claims on item-level scores.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> battles = eb.read_battles("tests/data/battles/clustered.csv")
    >>> table = eb.battle_claims(battles, ["model-a > model-f + 20"])
    >>> table[["reading", "adjustment", "estimate_elo", "verdict"]].round(1)
          reading adjustment  estimate_elo    verdict
    0  per_battle       none         125.8  supported
    1   clustered       none         125.8  supported
    2  per_battle       holm         125.8  supported
    3   clustered       holm         125.8  supported
    """
    options = battle_jobs.battle_settings(settings)
    made = battle_jobs.battles_claims(
        battles,
        battle_jobs.battles_summary(battles),
        claims=list(claims_made),
        alpha=alpha,
        adjust=adjust,
        power=power,
        ties=options["ties"],
        cluster=options["cluster"],
        style=options["style"],
    )
    return made["battles_claims"].frame


def battles_report_config(
    paths, *, claims: Sequence[str] = (), simulations: bool = False, **settings
) -> dict:
    """The workflow configuration of a report on battle files.

    What :func:`evalbars.api.write_report` writes to a battles run's ``config.yaml``:
    ``data: battles``, the files as ``predictions``, the claims, the ``battles:`` settings
    given (the others take the schema's defaults), one job per stage, and what the run makes:
    the battles stage (and the simulation studies with ``simulations``), the report at
    ``report.html``.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        The battle files.
    claims : sequence of str, optional
        The claims to test.
    simulations : bool, default False
        Also run the simulation studies.
    **settings
        ``battles:`` settings (:data:`BATTLE_DEFAULTS`) and reader settings
        (``strong_weight``, ``baseline``, ``answers``); None values are left out.

    Returns
    -------
    dict
        The configuration, as :func:`evalbars.api.report_config` gives it for scores.

    Raises
    ------
    TypeError
        A setting that is not a battles setting.

    See Also
    --------
    evalbars.api.report_config : The configuration of a report on item-level scores.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> config = eb.battles_report_config(["b.csv"], claims=["a > b"], ties="davidson")
    >>> config["data"], config["battles"], config["run"]["stages"]
    ('battles', {'ties': 'davidson'}, ['battles'])
    """
    given = {k: v for k, v in settings.items() if v is not None}
    unknown = sorted(set(given) - set(BATTLE_DEFAULTS) - set(battle_jobs.READER_SETTINGS))
    if unknown:
        raise TypeError(f"unknown battles setting(s): {', '.join(unknown)}")
    return {
        "models": [],
        "data": "battles",
        "predictions": [str(Path(path).resolve()) for path in _listed(paths)],
        "claims": list(claims),
        "battles": given,
        "jobs": "per_stage",
        "run": {
            "stages": ["battles", *(["simulations"] if simulations else [])],
            "report": "report.html",
        },
    }
