# R reference values for the run-to-run variance components (tests only; R is never a runtime
# or CI dependency).
#
# Usage (from the repository root):
#   Rscript tests/reference/make_r_run_variance_reference.R tests/data/synthetic_runs.csv synthetic_runs
#
# Reads the long CSV (model,question_id,run,sample,score; written by
# make_run_variance_fixtures.py) and, for each model (design), writes to
# tests/reference/r_output/run_variance/<name>.json (and the console to .txt):
#   lmer    lme4 REML fit of score ~ 1 + (1 | question_id) + (1 | run) with nloptwrap's
#           tolerances tightened (lmer_control): variances {question, run, residual}, theta,
#           sigma, fixef (intercept), REMLcrit, singular; and the same fit with lme4's default
#           control (lmer_default) to show how far the defaults stop from the optimum.
#   anova   anova(lm(score ~ factor(question_id) + factor(run))): sums of squares, df and mean
#           squares of question, run and residuals (sequential; equal to the balanced ANOVA
#           table when the design is balanced), and the cell counts (balanced or not).
#   counts  questions, runs, samples.
# The subfolder keeps these files out of r_results.R_RESULTS (which reads r_output/*.json).

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else getwd()
})
source(file.path(script_dir, "reference_common.R"))
args <- reference_args("usage: make_r_run_variance_reference.R <long.csv> <name>")
out_dir <- file.path(script_dir, "r_output", "run_variance")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
paths <- list(txt = file.path(out_dir, paste0(args$name, ".txt")),
              json = file.path(out_dir, paste0(args$name, ".json")))
sink(paths$txt, split = TRUE)

data <- read.csv(args$csv_path, stringsAsFactors = FALSE)
data$question_id <- factor(data$question_id)
data$run <- factor(data$run)
tight <- lmerControl(optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 1e-12))

fit_summary <- function(fit) {
  vc <- as.data.frame(VarCorr(fit))
  variance <- setNames(as.list(vc$vcov), ifelse(is.na(vc$var1), "residual", vc$grp))
  list(
    variance = list(question = variance[["question_id"]], run = variance[["run"]],
                    residual = variance[["residual"]]),
    theta = unname(getME(fit, "theta")),
    sigma = sigma(fit),
    fixef = unname(fixef(fit)[1]),
    reml_criterion = unname(REMLcrit(fit)),
    singular = isSingular(fit)
  )
}

designs <- list()
for (model in unique(data$model)) {
  d <- droplevels(data[data$model == model, ])
  cat("==== ", model, " ====\n", sep = "")
  fit <- lmer(score ~ 1 + (1 | question_id) + (1 | run), data = d, REML = TRUE, control = tight)
  print(summary(fit))
  default_fit <- suppressMessages(lmer(score ~ 1 + (1 | question_id) + (1 | run), data = d,
                                       REML = TRUE))
  table <- anova(lm(score ~ question_id + run, data = d))
  print(table)
  cells <- table(d$question_id, d$run)
  designs[[model]] <- list(
    counts = list(questions = nlevels(d$question_id), runs = nlevels(d$run), samples = nrow(d),
                  balanced = length(unique(as.vector(cells))) == 1),
    lmer = fit_summary(fit),
    lmer_default = fit_summary(default_fit),
    anova = list(
      sum_sq = setNames(as.list(table[["Sum Sq"]]), c("question", "run", "residual")),
      df = setNames(as.list(table[["Df"]]), c("question", "run", "residual")),
      mean_sq = setNames(as.list(table[["Mean Sq"]]), c("question", "run", "residual"))
    )
  )
}

result <- list(
  name = args$name,
  designs = designs,
  lmer_control = tight$optCtrl,
  versions = package_versions(c("lme4", "jsonlite")),
  generated = format(Sys.time(), "%Y-%m-%d")
)
sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = 15, pretty = TRUE), paths$json)
