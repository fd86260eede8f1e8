"""R reference values for the logistic GLMM and GEE tests, from ``r_output/<name>_binary.json``.

The JSON files are generated: DO NOT EDIT them by hand. They are written by
``tests/reference/make_r_binary_reference.R`` (R 4.2.2, lme4 1.1.31, emmeans 1.8.4.1, geepack
1.3.9, numDeriv 2016.8.1.1; versions and date in each file under ``versions`` and
``generated``); see ``tests/reference/README_binary.md`` for the commands. R is never a runtime
or CI dependency: the tests read only these committed numbers.

``R_BINARY[name]`` (``name`` without the ``_binary`` suffix) holds, for ``tests/data/<name>.csv``
or a real dataset whose data are not committed (``mmlu_pro_default_subsample``,
``mmlu_pro_default_all``, ``mmlu_pro_all_archives``):

- ``models`` (C-locale order, as Python's ``sorted``), ``accuracy``, ``n_rows``, ``n_cells``,
  ``n_questions``, ``n_categories``, ``epochs``, ``total_correct``; ``source`` (for real data
  ``question_ids_sha256`` of the sorted ids joined by newlines and ``total_correct``).
- ``glmm`` (lme4's default control) and ``glmm_tight`` (refitted from the default estimates with
  ``tolPwrss = 1e-13``, or 1e-12 if that fails: ``tolPwrss``, and bobyqa ``rhoend = 1e-10``;
  absent for ``mmlu_pro_all_archives``): ``fixef`` {model: value}, ``vcov`` (rows in ``models`` order),
  ``vcov_source`` ("hessian" or "rx"), ``vcov_rx``, ``theta`` and ``variance`` {question,
  category}, ``loglik``, ``laplace_deviance`` (= -2 logLik as lme4 reports it),
  ``laplace_deviance_exact`` (lme4's deviance function at these estimates with PIRLS to
  ``exact_tolpwrss``, 1e-13 unless that failed), ``laplace_deviance_formula`` (the Laplace
  deviance computed in R from its formula, exact to rounding),
  ``deviance`` (lme4's ``deviance()``), ``devcomp``, ``singular``, ``n_obs``, ``optimizer``,
  ``feval``, ``messages``, ``fd_gradient`` and ``fd_hessian`` (lme4's finite-difference
  derivatives in (theta, beta)); small data: ``devfun_checks`` (list of {theta, beta,
  laplace_deviance, laplace_deviance_lme4_default, laplace_deviance_formula}); synthetic
  fixtures: ``ranef`` {question:
  {level, value}, category: {level, value}}; ``contrasts`` (emmeans: label, model_a, model_b,
  estimate, se, z, p_none, p_bonferroni, p_holm); ``marginal_accuracy`` {model: p},
  ``marginal_jacobian`` (rows models, columns (theta_q, theta_c, beta)),
  ``marginal_contrasts`` (full covariance; absent if lme4 fell back to RX) and
  ``marginal_contrasts_fixed_theta`` (model_a, model_b, estimate, se, z, p_none, p_bonferroni,
  p_holm). With epochs, ``glmm["binomial_counts"]``: the same model on cbind(successes, failures)
  per cell (fixef, theta, loglik, lchoose_sum, n_cells, trials_table).
- ``gee``: geepack ``geeglm`` exchangeable: ``coef``, ``se``, ``vcov`` (robust), ``alpha``,
  ``scale``, ``accuracy``, ``n_clusters``, ``contrasts`` (log odds ratios) and
  ``accuracy_contrasts`` (delta method), each with p_none, p_bonferroni, p_holm.
- ``glmm_k100`` only (``make_r_glmm_k100_reference.R``): ``glmm_tight`` has no Hessian-based
  ``vcov`` (``vcov_source`` "rx"), and ``start`` (the start file, rounded to 2 decimals),
  ``newton`` (R's Newton steps on glmer's deviance function: ``par``, ``iterations``,
  ``max_abs_step``, ``max_abs_gradient``, ``deviance``, ``elapsed_seconds``),
  ``moved_from_newton`` (how far glmer's optimiser moved from there), ``optimizer_code``,
  ``optimizer_message``.
- ``timing_seconds`` (real data): ``glmer`` (elapsed of the default fit), ``glmer_median`` (of
  refits, subsample), ``glmer_tight_from_default``, ``geeglm``.

Pairs are stored as R orders them: level i - level j for i < j in ``models`` order, which is also
the default order of :func:`evalbars.stats.logistic.contrasts.glmm_contrasts`.
"""

import json
from pathlib import Path

__all__ = ["R_BINARY_DIR", "R_BINARY"]

R_BINARY_DIR = Path(__file__).resolve().parent / "r_output"

R_BINARY = {
    path.name.removesuffix("_binary.json"): json.loads(path.read_text(encoding="utf-8"))
    for path in sorted(R_BINARY_DIR.glob("*_binary.json"))
}
