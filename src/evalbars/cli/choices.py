"""The choices the command line offers, as plain tuples, so that building its parser imports
no statistics.

``evalbars --help`` and ``evalbars COMMAND --help`` load neither pandas nor numpy: the parser
side of the command line (:mod:`evalbars.cli`, :mod:`evalbars.cli.arguments`, this module)
imports only the standard library and :mod:`evalbars.defaults`. The modules that own these
vocabularies import pandas, so each is copied here, and ``tests/unit/cli/test_cli.py`` holds every
copy equal to its owner: a new reader, policy or adjustment fails that test until it is added
here too.
"""

__all__ = [
    "FORMATS",
    "MISSING_POLICIES",
    "FAMILIES",
    "ADJUSTMENTS",
    "PROCEDURES",
    "TESTS",
    "SE_UNITS",
    "TIE_MODELS",
    "CLUSTERINGS",
    "RUN_POLICIES",
    "SCORE_SPELLING",
]

#: ``--input-format``: :data:`evalbars.data.readers.FORMATS`, the readers' registry.
FORMATS = (
    "auto",
    "lm_eval",
    "inspect",
    "mmlu_pro",
    "table",
    "helm",
    "lighteval",
    "every_eval_ever",
    "swe_bench",
)
#: ``--missing-prediction``: :data:`evalbars.data.items.MISSING_POLICIES`.
MISSING_POLICIES = ("wrong", "random_guess", "exclude")
#: ``claims --family``: :data:`evalbars.readings.claims.FAMILIES`.
FAMILIES = ("claims", "claims_and_all_pairs")
#: ``claims --adjust``: :data:`evalbars.readings.claims.ADJUSTMENTS`.
ADJUSTMENTS = ("holm", "bonferroni", "bh")
#: ``plan --procedure``: :data:`evalbars.stats.planning.sample_size.PROCEDURES`.
PROCEDURES = ("none", "bonferroni", "holm")
#: ``plan --test``: :data:`evalbars.stats.planning.sample_size.TESTS`.
TESTS = ("wald", "mcnemar")
#: ``--runs``: :data:`evalbars.data.readers.common.RUN_POLICIES`.
RUN_POLICIES = ("only", "newest", "all")
#: ``--score``: the spellings :func:`evalbars.stats.repeats.pass_at_k.parse_item_score` reads
#: (and the config schema's ``score`` pattern).
SCORE_SPELLING = r"^(mean|(pass@|pass\^|maj@|majority@)[1-9][0-9]*)$"
#: ``ranks --se-units``: :data:`evalbars.readings.ranks.board_file.SE_UNITS`.
SE_UNITS = ("auto", "points", "proportion")
#: ``--ties`` (battles): :data:`evalbars.stats.bradley_terry.TIE_MODELS`.
TIE_MODELS = ("half", "rao_kupper", "davidson")
#: ``--cluster-by`` (battles): :data:`evalbars.readings.battles.CLUSTERINGS`.
CLUSTERINGS = ("auto", "prompt", "voter")
