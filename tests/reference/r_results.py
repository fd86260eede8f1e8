"""R reference values for the R-parity tests, loaded from ``tests/reference/r_output/*.json``.

The JSON files are generated: DO NOT EDIT them by hand. They are written by
``tests/reference/make_r_reference.R`` (R 4.2.2, lme4 1.1.31, emmeans 1.8.4.1; the exact versions
and date are stored in each file under ``versions`` and ``generated``); see
``tests/reference/README.md`` for the commands. R is never a runtime or CI dependency: the tests
read only these committed numbers.

``R_RESULTS[name]`` holds, for the fixture ``tests/data/<name>.csv`` (or the real default
subsample, ``mmlu_pro_default_subsample``, whose data are not committed):

- ``models``: models in R's factor-level order (C-locale sorted, as Python's ``sorted``);
  ``accuracy``: {model: mean}; ``n_questions``, ``n_models``, ``complete``, ``source`` (for the
  real subsample: ``subsample_n``, ``subsample_seed``, ``missing_prediction``,
  ``question_ids_sha256`` of the sorted ids joined by newlines, ``total_correct``).
- ``oneway``: ``anova(lm(correct ~ model))`` -> F, df1, df2, p, ms_model, ms_error.
- ``rm_anova`` (complete data only): ``aov(correct ~ model + Error(question/model))`` -> F, df1,
  df2, p, ms_error, ss_error, ms_model; gg_epsilon, p_gg, hf_epsilon (not truncated at 1), p_hf
  from ``anova.mlm(test = "Spherical")``.
- ``friedman`` (complete data only): statistic, df, p (tie-corrected ``friedman.test``);
  cochran_q, p_cochran_q computed by hand in R.
- ``mcnemar``: list of {model_a, model_b, n, n10, n01, p} for level pairs i < j; n10 counts
  questions model_a got right and model_b wrong; p is ``binom.test(n10, n10 + n01)$p.value``.
- ``lmm``: {"category", "category_question"} -> {formula, variance {category, [question,]
  residual}, theta, sigma, models, fixef {model: value}, vcov (list of rows, order ``models``),
  reml_criterion, singular, contrasts}; contrasts is a list of {label (emmeans' own), model_a,
  model_b, estimate (= fixef[a] - fixef[b]), se, z, p_none, p_bonferroni, p_holm, p_tukey}
  from ``summary(pairs(emmeans(fit, ~ model, lmer.df = "asymptotic"), reverse = FALSE), adjust)``.
- ``timing_seconds`` (real subsample only): elapsed seconds of each ``lmer`` fit.

Fixtures with repeated samples (``synthetic_epochs*``, an ``epoch`` column) have no ``rm_anova``,
``friedman`` or ``mcnemar``; their ``lmm`` also holds ``category_question_model`` (``+
(1|category:question:model)``, variance component ``question_model``), ``epochs`` counts the
cells by number of samples and ``lmer_control`` the optimiser tolerances. ``mmlu_pro_all_archives``
(``fit_all_archives.R``, all 29 mirrored archives) holds only ``lmm`` (no contrasts),
``total_correct`` and ``timing_seconds`` (elapsed seconds of each fit, the first cold).

lme4's optimiser stops where the REML criterion is flat to ~1e-12, so its variance components
are accurate to about 1e-8 (residual) and 1e-7 (category) absolute, not to all printed digits.

Use ``r_pair(R_RESULTS[name], "mcnemar", a, b)`` or ``r_pair(..., ("lmm", spec, "contrasts"), a, b)``
to get a pair in any orientation (estimate and z change sign, n10 and n01 swap).
"""

import json
from pathlib import Path

__all__ = ["R_OUTPUT_DIR", "R_RESULTS", "r_pair"]

R_OUTPUT_DIR = Path(__file__).resolve().parent / "r_output"

R_RESULTS = {
    path.stem: json.loads(path.read_text(encoding="utf-8"))
    for path in sorted(R_OUTPUT_DIR.glob("*.json"))
}


def r_pair(result: dict, where, model_a: str, model_b: str) -> dict:
    """The R record of the pair (model_a, model_b), oriented as asked.

    Parameters
    ----------
    result : dict
        One entry of ``R_RESULTS``.
    where : str or tuple of str
        Key path to the list of pair records, e.g. ``"mcnemar"`` or
        ``("lmm", "category_question", "contrasts")``.
    model_a, model_b : str
        The pair in the caller's orientation.

    Returns
    -------
    dict
        A copy of the record with ``model_a``/``model_b`` as asked; if R stored the pair the
        other way round, ``estimate`` and ``z`` change sign and ``n10``/``n01`` swap (p-values
        and SEs are symmetric).
    """
    records = result
    for key in (where,) if isinstance(where, str) else where:
        records = records[key]
    for record in records:
        if (record["model_a"], record["model_b"]) == (model_a, model_b):
            return dict(record)
        if (record["model_a"], record["model_b"]) == (model_b, model_a):
            flipped = dict(record, model_a=model_a, model_b=model_b)
            for key in ("estimate", "z"):
                if key in flipped:
                    flipped[key] = -flipped[key]
            if "n10" in flipped:
                flipped["n10"], flipped["n01"] = record["n01"], record["n10"]
            flipped.pop("label", None)  # emmeans' label names R's orientation
            return flipped
    raise KeyError(f"no R record for the pair ({model_a}, {model_b}) under {where}")
