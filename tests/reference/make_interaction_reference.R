# R reference for the model x category interaction test (tests only; R is never a runtime or
# CI dependency). Used by tests/unit/readings/test_category_pairwise.py through the committed JSON.
#
# Usage (from the repository root):
#   Rscript tests/reference/make_interaction_reference.R <long.csv> <name> [key=value ...]
#
# <long.csv> has columns model,question_id,category,correct (0/1), every model scored on every
# question. Writes
#   tests/reference/r_output/interaction/<name>.json  the numbers below, 15 significant digits
#   tests/reference/r_output/interaction/<name>.txt   the printed R console output
# (a subfolder, so that r_results.py, which reads r_output/*.json, does not pick them up).
#
# The test: is the model gap the same in every category? Category enters as a FIXED effect in
# both fits (so (1|category) is not identifiable and the question effect (1|question) is the
# nested (1|category:question), question ids being unique across categories):
#   full     correct ~ model * category + (1|question)
#   reduced  correct ~ model + category + (1|question)
# both by maximum likelihood (REML = FALSE: the fixed effects differ, so REML criteria are not
# comparable), compared by anova(reduced, full): Chisq on (C - 1)(K - 1) df.
# Why a fixed interaction rather than a (1|category:model) random effect: the question asked is
# whether the gap differs between THESE categories (the benchmark's fixed set), not the variance
# of gaps over a population of categories; a variance test would also sit on the boundary
# (chi-square mixture), and 14 categories estimate a variance poorly.
# Also printed: the split-plot F test of the same term, anova(lm(correct ~ question + model *
# category)) with the model:category term against the residual (= model x question within
# category), which is exact under sphericity.

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})
options(digits = 15, width = 120)

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript make_interaction_reference.R <long.csv> <name> [key=value ...]")
path <- args[[1]]
name <- args[[2]]
extra <- list()
for (kv in args[-(1:2)]) {
  parts <- strsplit(kv, "=", fixed = TRUE)[[1]]
  extra[[parts[[1]]]] <- paste(parts[-1], collapse = "=")
}
out_dir <- file.path("tests", "reference", "r_output", "interaction")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
sink(file.path(out_dir, paste0(name, ".txt")), split = TRUE)

d <- read.csv(path, colClasses = c(model = "character", question_id = "character",
                                   category = "character", correct = "numeric"))
d$model <- factor(d$model, levels = sort(unique(d$model), method = "radix"))
d$category <- factor(d$category, levels = sort(unique(d$category), method = "radix"))
d$question <- factor(d$question_id)
cat("rows", nrow(d), "questions", nlevels(d$question), "models", nlevels(d$model),
    "categories", nlevels(d$category), "\n")

full <- lmer(correct ~ model * category + (1 | question), data = d, REML = FALSE)
reduced <- lmer(correct ~ model + category + (1 | question), data = d, REML = FALSE)
lrt <- anova(reduced, full)
print(lrt)
vc_full <- as.data.frame(VarCorr(full))
vc_reduced <- as.data.frame(VarCorr(reduced))
print(vc_full)
print(vc_reduced)

split_plot <- anova(lm(correct ~ question + model * category, data = d))
print(split_plot)
row <- "model:category"

result <- list(
  name = name,
  generated = format(Sys.time(), "%Y-%m-%d"),
  versions = list(R = paste(R.version$major, R.version$minor, sep = "."),
                  lme4 = as.character(packageVersion("lme4")),
                  jsonlite = as.character(packageVersion("jsonlite"))),
  source = extra,
  n_questions = nlevels(d$question),
  n_models = nlevels(d$model),
  n_categories = nlevels(d$category),
  lrt = list(chisq = lrt$Chisq[[2]], df = lrt$Df[[2]], p = lrt[["Pr(>Chisq)"]][[2]],
             loglik_full = as.numeric(logLik(full)), loglik_reduced = as.numeric(logLik(reduced)),
             singular_full = isSingular(full), singular_reduced = isSingular(reduced),
             question_variance_full = vc_full$vcov[[1]],
             residual_variance_full = vc_full$vcov[[2]]),
  split_plot_f = list(f = split_plot[row, "F value"], df1 = split_plot[row, "Df"],
                      df2 = split_plot["Residuals", "Df"], p = split_plot[row, "Pr(>F)"])
)
sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = 15, pretty = TRUE),
           file.path(out_dir, paste0(name, ".json")))
