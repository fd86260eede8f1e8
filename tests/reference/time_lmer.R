# Time lme4's two REML fits (the speed we must beat). Not a test; prints elapsed seconds.
# Usage: Rscript tests/reference/time_lmer.R <long.csv> [repeats=5]
# Reports the first (cold) fit and the median of `repeats` further fits, each via system.time().
suppressPackageStartupMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
repeats <- if (length(args) > 1) as.integer(args[2]) else 5L
raw <- read.csv(args[1], colClasses = c("character", "character", "character", "integer"))
d <- data.frame(model = factor(raw$model), question = factor(raw$question_id),
                category = factor(raw$category), correct = as.numeric(raw$correct))
cat(sprintf("%s: %d rows, %d questions, %d models; R %s, lme4 %s\n", basename(args[1]), nrow(d),
            nlevels(d$question), nlevels(d$model), getRversion(), packageVersion("lme4")))
formulas <- list(
  category = correct ~ 0 + model + (1 | category),
  category_question = correct ~ 0 + model + (1 | category) + (1 | category:question)
)
for (spec in names(formulas)) {
  cold <- system.time(lmer(formulas[[spec]], data = d))[["elapsed"]]
  warm <- replicate(repeats, system.time(lmer(formulas[[spec]], data = d))[["elapsed"]])
  cat(sprintf("lmer %-17s cold %.3f s, median of %d %.3f s (min %.3f, max %.3f)\n",
              spec, cold, repeats, median(warm), min(warm), max(warm)))
}
