"""Ranking claims as people write them, tested as stated, under several readings side by side.

:mod:`~evalbars.readings.claims.parsing` reads the grammar; :mod:`~evalbars.readings.claims.scope`
holds the pair statistics of a set of questions; :mod:`~evalbars.readings.claims.verdicts`
tests every claim under every reading (its docstring is the method); and
:mod:`~evalbars.readings.claims.render` words the answer for people.
"""

from evalbars.readings.claims.parsing import (
    KINDS,
    Claim,
    ClaimError,
    check_claims,
    parse_claim,
    parse_claims,
    read_claims_file,
)
from evalbars.readings.claims.render import (
    claims_display,
    claims_headline,
    claims_json,
    claims_markdown,
    read_claims_table,
)
from evalbars.readings.claims.verdicts import (
    ADJUSTMENTS,
    CLAIM_COLUMNS,
    FAMILIES,
    READINGS,
    Reading,
    evaluate_claims,
    readings,
    rows_of,
    table_readings,
)

__all__ = [
    "KINDS",
    "READINGS",
    "ADJUSTMENTS",
    "Reading",
    "readings",
    "table_readings",
    "rows_of",
    "FAMILIES",
    "CLAIM_COLUMNS",
    "Claim",
    "ClaimError",
    "check_claims",
    "parse_claim",
    "parse_claims",
    "read_claims_file",
    "evaluate_claims",
    "claims_display",
    "claims_markdown",
    "claims_headline",
    "claims_json",
    "read_claims_table",
]
