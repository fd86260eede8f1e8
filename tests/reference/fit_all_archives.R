# lme4 reference fits on all 29 mirrored MMLU-Pro archives (unbalanced: models did not all answer
# the same questions), for the general REML path's test and the benchmark. Tests only; R is never a
# runtime or CI dependency.
#
# Usage (from the repository root; the CSV is built from the archives, see README.md, and is never
# committed):
#   Rscript tests/reference/fit_all_archives.R /tmp/mmlu_pro_all_archives.csv mmlu_pro_all_archives \
#     [repeats=3] [key=value ...]
#
# <long.csv> has columns model,question_id,category,correct (0/1), one row per observed
# (model, question). Writes tests/reference/r_output/<name>.json (15 significant digits) and
# <name>.txt (the printed console output). For each of
#   category           correct ~ 0 + model + (1|category)
#   category_question  correct ~ 0 + model + (1|category) + (1|category:question)
# it records the REML variance components, theta, fixef, vcov, REMLcrit and isSingular, and the
# elapsed seconds of `repeats` fits, each timed with system.time() (the first is the cold one).
# key=value arguments other than repeats are stored under "source" (e.g. the SHA-256 of the sorted
# question ids and the total number correct, so that a test can tell it has the data R saw).

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})
options(digits = 15, width = 120)

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "tests/reference"
})
source(file.path(script_dir, "reference_common.R"))
cli <- reference_args("usage: Rscript fit_all_archives.R <long.csv> <name> [key=value ...]")
csv_path <- cli$csv_path
name <- cli$name
extra <- cli$extra
repeats <- if (is.null(extra$repeats)) 3L else as.integer(extra$repeats)
extra$repeats <- NULL
outputs <- reference_outputs(script_dir, name)
versions <- package_versions(c("lme4", "jsonlite"))
cat(sprintf("# %s: %s\n# R %s, lme4 %s\n", name, basename(csv_path), versions$r, versions$lme4))

raw <- read.csv(csv_path, colClasses = c(model = "character", question_id = "character",
                                         category = "character", correct = "integer"))
models <- sort(unique(raw$model), method = "radix")  # C-locale order, as Python's sorted()
d <- data.frame(
  model = factor(raw$model, levels = models),
  question = factor(raw$question_id),
  category = factor(raw$category),
  correct = as.numeric(raw$correct)
)
stopifnot(all(d$correct %in% c(0, 1)), !anyDuplicated(d[c("model", "question")]))
K <- length(models)
n_cells <- nlevels(d$question) * K
cat(sprintf("rows %d, questions %d, models %d, categories %d, cells missing %d of %d (%.4f%%)\n",
            nrow(d), nlevels(d$question), K, nlevels(d$category), n_cells - nrow(d), n_cells,
            100 * (n_cells - nrow(d)) / n_cells))
cat(sprintf("total correct %d\n", sum(raw$correct)))

result <- list(
  name = name,
  source = c(list(csv = basename(csv_path)), extra),
  versions = versions,
  generated = format(Sys.Date()),
  n_rows = nrow(d), n_questions = nlevels(d$question), n_models = K,
  n_categories = nlevels(d$category), complete = nrow(d) == n_cells,
  total_correct = sum(raw$correct),
  models = models,
  lmm = list(),
  timing_seconds = list()
)
formulas <- list(
  category = correct ~ 0 + model + (1 | category),
  category_question = correct ~ 0 + model + (1 | category) + (1 | category:question)
)
for (spec in names(formulas)) {
  cat(sprintf("\n## lmer REML, %s: %s\n", spec, deparse(formulas[[spec]])))
  elapsed <- numeric(repeats)
  for (i in seq_len(repeats)) {
    elapsed[i] <- system.time(fit <- lmer(formulas[[spec]], data = d, REML = TRUE))[["elapsed"]]
  }
  cat(sprintf("system.time(lmer %s) elapsed, %d fits: %s s (first = cold)\n", spec, repeats,
              paste(sprintf("%.3f", elapsed), collapse = ", ")))
  print(summary(fit, correlation = FALSE), digits = 12)
  vc <- as.data.frame(VarCorr(fit))
  variance <- list(
    category = vc$vcov[vc$grp == "category"],
    question = if (spec == "category_question") vc$vcov[vc$grp == "category:question"] else NULL,
    residual = vc$vcov[vc$grp == "Residual"]
  )
  variance <- variance[!vapply(variance, is.null, logical(1))]
  for (comp in names(variance)) cat(sprintf("variance %s %.15g\n", comp, variance[[comp]]))
  fe <- fixef(fit)
  names(fe) <- sub("^model", "", names(fe))
  cat(sprintf("REMLcrit %.15g, isSingular %s, theta %s\n", REMLcrit(fit), isSingular(fit),
              paste(sprintf("%.15g", getME(fit, "theta")), collapse = " ")))
  cat("fixef:\n"); print(fe, digits = 15)
  result$lmm[[spec]] <- list(
    formula = paste(deparse(formulas[[spec]]), collapse = ""),
    variance = variance, theta = unname(getME(fit, "theta")), sigma = sigma(fit),
    models = models, fixef = as.list(fe), vcov = unname(as.matrix(vcov(fit))),
    reml_criterion = REMLcrit(fit), singular = isSingular(fit)
  )
  result$timing_seconds[[spec]] <- elapsed
}

sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"),
           outputs$json)
message("wrote ", outputs$json)
