# R reference values for the evalbars analysis (tests only; R is never a runtime or CI dependency).
#
# Usage (from the repository root):
#   Rscript tests/reference/make_r_reference.R <long.csv> <name> [key=value ...]
#
# <long.csv> has columns model,question_id,category,correct (0/1), and optionally epoch: with an
# epoch column a (model, question) cell may hold several samples (epochs; not necessarily the same
# number in every cell). Writes
#   tests/reference/r_output/<name>.json  every number below, 15 significant digits
#   tests/reference/r_output/<name>.txt   the printed R console output (same numbers)
# Extra key=value arguments are stored verbatim under "source" in the JSON (e.g. the subsample
# seed and size of a real-data run). Set EVALBARS_R_TIMING=1 to time each lmer fit with
# system.time() (reported under "timing_seconds"; off by default so that fixture output is
# reproducible byte for byte apart from the date line).
#
# The tests read every JSON file in r_output/ through tests/reference/r_results.py (R_RESULTS);
# nothing else needs regenerating.
#
# Statistics (models are factor levels in C-locale sorted order; pairs are (level i, level j), i < j,
# labelled as emmeans labels them):
#   oneway    anova(lm(correct ~ model))                           F, df1, df2, p
#   rm_anova  aov(correct ~ model + Error(question/model))          F, df1, df2, p, error mean square
#             plus Greenhouse-Geisser / Huynh-Feldt epsilons from anova.mlm(test = "Spherical")
#             (complete data only)
#   friedman  friedman.test(question x model matrix)               statistic, df, p (tie-corrected)
#             and Cochran's Q computed by hand (complete data only)
#   mcnemar   exact: binom.test(n10, n10 + n01)$p.value per pair, on questions both models answered
#   lmm       lmer REML: correct ~ 0 + model + (1|category)                       ("category")
#                        correct ~ 0 + model + (1|category) + (1|category:question) ("category_question")
#             variance components, theta, fixef, vcov, REMLcrit, isSingular, and emmeans contrasts
#             summary(pairs(emmeans(fit, ~ model, lmer.df = "asymptotic"), reverse = FALSE),
#                     adjust = none / bonferroni / holm / tukey)
# With an epoch column: every statistic above that needs one score per cell (RM-ANOVA, Friedman,
# Cochran's Q, McNemar) is skipped, the one-way ANOVA and the two mixed models use every sample,
# and a third mixed model is fitted,
#             correct ~ 0 + model + (1|category) + (1|category:question)
#                       + (1|category:question:model)             ("category_question_model")
# with its model-by-question variance reported as "question_model"; all three with nloptwrap's
# tolerances tightened (lmer_control in the JSON). The JSON then also holds "epochs": the number
# of cells with 0, 1, 2, ... samples.

suppressPackageStartupMessages({
  library(lme4)
  library(emmeans)
  library(jsonlite)
})
options(digits = 15, width = 120)

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "tests/reference"
})
source(file.path(script_dir, "reference_common.R"))
cli <- reference_args("usage: Rscript make_r_reference.R <long.csv> <name> [key=value ...]")
csv_path <- cli$csv_path
name <- cli$name
extra <- cli$extra
timing <- Sys.getenv("EVALBARS_R_TIMING") == "1"
outputs <- reference_outputs(script_dir, name)
json_path <- outputs$json
txt_path <- outputs$txt
versions <- package_versions(c("lme4", "emmeans", "jsonlite"))
cat(sprintf("# %s: %s\n# R %s, lme4 %s, emmeans %s\n",
            name, basename(csv_path), versions$r, versions$lme4, versions$emmeans))

raw <- read.csv(csv_path, colClasses = c(model = "character", question_id = "character",
                                         category = "character", correct = "integer"))
epochs <- "epoch" %in% names(raw)
models <- sort(unique(raw$model), method = "radix")  # C-locale order, as Python's sorted()
d <- data.frame(
  model = factor(raw$model, levels = models),
  question = factor(raw$question_id),
  category = factor(raw$category),
  correct = as.numeric(raw$correct)
)
if (epochs) d$epoch <- raw$epoch
stopifnot(all(d$correct %in% c(0, 1)),
          !anyDuplicated(d[c("model", "question", if (epochs) "epoch")]))
K <- length(models)
# questions x models, NA if missing; with epochs, cell means
wide <- tapply(d$correct, list(d$question, d$model), if (epochs) mean else identity)
complete <- !anyNA(wide)
n_questions <- nrow(wide)
cat(sprintf("rows %d, questions %d, models %d, categories %d, complete %s\n",
            nrow(d), n_questions, K, nlevels(d$category), complete))
cat("models (level order):", paste(models, collapse = ", "), "\n")
print(tapply(d$correct, d$model, mean))
if (epochs) {
  samples <- table(factor(table(d$question, d$model)))
  cat("cells by number of samples:\n"); print(samples)
}

result <- list(
  name = name,
  source = c(list(csv = basename(csv_path)), extra),
  versions = versions,
  generated = format(Sys.Date()),
  n_rows = nrow(d), n_questions = n_questions, n_models = K,
  n_categories = nlevels(d$category), complete = complete,
  models = models,
  accuracy = as.list(tapply(d$correct, d$model, mean))
)
if (epochs) result$epochs <- as.list(samples)

# ---- one-way ANOVA ignoring question identity ------------------------------------------------
cat("\n## one-way ANOVA: anova(lm(correct ~ model))\n")
ow <- anova(lm(correct ~ model, data = d))
print(ow)
result$oneway <- list(F = ow["model", "F value"], df1 = ow["model", "Df"],
                      df2 = ow["Residuals", "Df"], p = ow["model", "Pr(>F)"],
                      ms_model = ow["model", "Mean Sq"], ms_error = ow["Residuals", "Mean Sq"])

# ---- repeated-measures ANOVA, question as subject ---------------------------------------------
if (complete && !epochs) {
  cat("\n## RM-ANOVA: summary(aov(correct ~ model + Error(question/model)))\n")
  rm_fit <- summary(aov(correct ~ model + Error(question / model), data = d))
  print(rm_fit)
  tab <- rm_fit[["Error: question:model"]][[1]]
  rownames(tab) <- trimws(rownames(tab))
  cat("\n## sphericity: anova(lm(wide ~ 1), X = ~1, test = 'Spherical')\n")
  mlm <- lm(wide ~ 1)
  sph <- anova(mlm, X = ~1, test = "Spherical")
  print(sph)
  # the epsilons anova.mlm uses for its G-G / H-F p-values (H-F is not truncated at 1 here)
  eps <- stats:::sphericity(SSD(mlm), X = ~1)
  cat(sprintf("Greenhouse-Geisser epsilon %.15g, Huynh-Feldt epsilon %.15g\n", eps$GG.eps, eps$HF.eps))
  result$rm_anova <- list(
    F = tab["model", "F value"], df1 = tab["model", "Df"], df2 = tab["Residuals", "Df"],
    p = tab["model", "Pr(>F)"], ms_error = tab["Residuals", "Mean Sq"],
    ss_error = tab["Residuals", "Sum Sq"], ms_model = tab["model", "Mean Sq"],
    gg_epsilon = eps$GG.eps, p_gg = sph[1, "G-G Pr"],
    hf_epsilon = eps$HF.eps, p_hf = sph[1, "H-F Pr"]
  )
  stopifnot(isTRUE(all.equal(sph[1, "F"], result$rm_anova$F, tolerance = 1e-10)))

  cat("\n## Friedman: friedman.test(question x model matrix)\n")
  fr <- friedman.test(wide)
  print(fr)
  # Cochran's Q = (K - 1) (K sum_j C_j^2 - N^2) / (K N - sum_i R_i^2), C_j column totals,
  # R_i row totals, N grand total (Cochran 1950).
  col_tot <- colSums(wide); row_tot <- rowSums(wide); N <- sum(wide)
  q <- (K - 1) * (K * sum(col_tot^2) - N^2) / (K * N - sum(row_tot^2))
  cat(sprintf("Cochran's Q (by hand) %.15g, df %d, p %.15g\n", q, K - 1,
              pchisq(q, K - 1, lower.tail = FALSE)))
  result$friedman <- list(statistic = unname(fr$statistic), df = unname(fr$parameter),
                          p = fr$p.value, cochran_q = q,
                          p_cochran_q = pchisq(q, K - 1, lower.tail = FALSE))
}

# ---- exact McNemar per pair -------------------------------------------------------------------
if (!epochs) {
  cat("\n## exact McNemar: binom.test(n10, n10 + n01)\n")
  mcn <- list()
  for (i in seq_len(K - 1)) for (j in (i + 1):K) {
    a <- wide[, i]; b <- wide[, j]; both <- !is.na(a) & !is.na(b)
    n10 <- sum(a[both] == 1 & b[both] == 0); n01 <- sum(a[both] == 0 & b[both] == 1)
    p <- if (n10 + n01 > 0) binom.test(n10, n10 + n01)$p.value else 1
    cat(sprintf("%s vs %s: n %d, n10 %d, n01 %d, p %.15g\n", models[i], models[j], sum(both), n10, n01, p))
    mcn[[length(mcn) + 1]] <- list(model_a = models[i], model_b = models[j], n = sum(both),
                                   n10 = n10, n01 = n01, p = p)
  }
  result$mcnemar <- mcn
}

# ---- linear mixed models (REML) + emmeans contrasts -------------------------------------------
formulas <- list(
  category = correct ~ 0 + model + (1 | category),
  category_question = correct ~ 0 + model + (1 | category) + (1 | category:question)
)
# lme4's default nloptwrap tolerances (xtol_abs = ftol_abs = 1e-8, and nloptr's xtol_rel = 1e-4)
# leave the three-term model's
# variances ~1e-6 short of the REML optimum; the epoch fixtures are fitted with tighter ones.
tight <- lmerControl(optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 1e-12))
if (epochs) {
  result$lmer_control <- tight$optCtrl
  formulas$category_question_model <- correct ~ 0 + model + (1 | category) +
    (1 | category:question) + (1 | category:question:model)
}
result$lmm <- list()
timings <- list()
for (spec in names(formulas)) {
  cat(sprintf("\n## lmer REML, %s: %s\n", spec, deparse(formulas[[spec]])))
  elapsed <- system.time(fit <- if (epochs) {
    lmer(formulas[[spec]], data = d, REML = TRUE, control = tight)
  } else {
    lmer(formulas[[spec]], data = d, REML = TRUE)
  })
  if (timing) {
    cat(sprintf("system.time(lmer %s): elapsed %.3f s (user %.3f, system %.3f)\n",
                spec, elapsed[["elapsed"]], elapsed[["user.self"]], elapsed[["sys.self"]]))
    timings[[spec]] <- elapsed[["elapsed"]]
  }
  print(summary(fit), digits = 12)
  vc <- as.data.frame(VarCorr(fit))
  variance <- list(
    category = vc$vcov[vc$grp == "category"],
    question = if (spec != "category") vc$vcov[vc$grp == "category:question"] else NULL,
    question_model = if (spec == "category_question_model") {
      vc$vcov[vc$grp == "category:question:model"]
    } else NULL,
    residual = vc$vcov[vc$grp == "Residual"]
  )
  variance <- variance[!vapply(variance, is.null, logical(1))]
  for (comp in names(variance)) cat(sprintf("variance %s %.15g\n", comp, variance[[comp]]))
  fe <- fixef(fit)
  names(fe) <- sub("^model", "", names(fe))
  V <- as.matrix(vcov(fit))
  cat(sprintf("REMLcrit %.15g, isSingular %s, theta %s\n", REMLcrit(fit), isSingular(fit),
              paste(sprintf("%.15g", getME(fit, "theta")), collapse = " ")))
  cat("vcov of fixef:\n"); print(V, digits = 15)

  emm <- emmeans(fit, ~model, lmer.df = "asymptotic")
  pr <- pairs(emm, reverse = FALSE)
  adj <- list()
  for (method in c("none", "bonferroni", "holm", "tukey")) {
    s <- as.data.frame(summary(pr, adjust = method))
    cat(sprintf("\n-- emmeans pairs, adjust = %s\n", method))
    print(s, digits = 15)
    adj[[method]] <- s
  }
  s <- adj$none
  # pairs(reverse = FALSE) lists level i - level j for i < j, in this order:
  idx <- which(upper.tri(diag(K)), arr.ind = TRUE)
  idx <- idx[order(idx[, "row"], idx[, "col"]), , drop = FALSE]
  stopifnot(nrow(idx) == nrow(s))
  contrasts <- lapply(seq_len(nrow(s)), function(r) {
    i <- idx[r, "row"]; j <- idx[r, "col"]
    # sanity check: estimate equals the difference of fixed effects in that order
    stopifnot(abs(s$estimate[r] - (fe[[models[i]]] - fe[[models[j]]])) < 1e-10)
    list(label = as.character(s$contrast[r]), model_a = models[i], model_b = models[j],
         estimate = s$estimate[r], se = s$SE[r], z = s$z.ratio[r],
         p_none = s$p.value[r], p_bonferroni = adj$bonferroni$p.value[r],
         p_holm = adj$holm$p.value[r], p_tukey = adj$tukey$p.value[r])
  })
  result$lmm[[spec]] <- list(
    formula = paste(deparse(formulas[[spec]]), collapse = ""),
    variance = variance, theta = unname(getME(fit, "theta")), sigma = sigma(fit),
    models = models, fixef = as.list(fe), vcov = unname(V),
    reml_criterion = REMLcrit(fit), singular = isSingular(fit),
    contrasts = contrasts
  )
}
if (timing) result$timing_seconds <- timings

sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"), json_path)
message("wrote ", json_path, " and ", txt_path)
