"""The scales of the numbers users type: accuracy points against proportions.

Gaps and margins are accuracy points (2 for two points); a value that is almost certainly a
proportion written where points are meant gets a "did you mean" hint here, for every command
and config key that takes one. Imports nothing heavy: the workflow's config check (run while
Snakemake builds the DAG) uses it.
"""

from __future__ import annotations

__all__ = ["points_hint"]


def points_hint(points: float) -> str | None:
    """The hint "did you mean 2 points?" for a gap or margin under 1 point, else None.

    Gaps and margins are given in accuracy points; a value in (0, 1) is almost always a
    proportion written where points are meant (``0.02`` for 2 points), and would plan or
    test for a hundredth of the intended gap. The one home of that check: ``evalbars plan
    --gap`` (:func:`evalbars.readings.planner.check_plan_request`), the config's
    ``claims_options.plan_gaps`` (:func:`evalbars.pipeline.smk.validate_config`) and a claim's margin
    (:func:`evalbars.readings.claims.parsing.parse_claim`) call it.

    Examples
    --------
    >>> points_hint(0.02)
    'did you mean 2 points?'
    >>> points_hint(0.01)
    'did you mean 1 point?'
    >>> points_hint(2) is None
    True
    """
    if not 0 < points < 1:
        return None
    meant = 100 * points
    return f"did you mean {meant:g} point{'' if meant == 1 else 's'}?"
