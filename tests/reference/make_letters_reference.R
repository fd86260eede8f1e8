# Compact letter displays by multcompView::multcompLetters (tests only; R is never a runtime or
# CI dependency).
#
# Usage (from the repository root):
#   Rscript tests/reference/make_letters_reference.R [pairwise.csv]
#
# Writes tests/reference/r_output/letters/letters.json (and the console in letters.txt):
#   synthetic: seeded cases drawn here (set.seed(2004)): K systems (3 to 14) with normal scores
#              of spread `spread` and a common SE, two-sided z p-values of every pair, Holm-adjusted
#              (p.adjust); for each case the pairs (a, b, p_holm) and multcompLetters' letters at
#              threshold 0.05 (letters in the order of the systems, best first; `reversed = FALSE`).
#   subsample: when pairwise.csv is given (results/tables/pairwise.csv of a default run: the six
#              models of the default 1,497-question subsample), its p_holm column's letters, and
#              the separated pairs (p_holm < 0.05) as "a|b" strings; the p-values themselves, data
#              derived from MMLU-Pro, are not stored.
# multcompLetters orders its letters by the order of the names it is given (the systems sorted by
# score, best first), so its "a" goes to the best system, as evalbars' does.

suppressPackageStartupMessages({
  library(multcompView)
  library(jsonlite)
})

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  dirname(normalizePath(sub("^--file=", "", file_arg)))
})
source(file.path(script_dir, "reference_common.R"))
args <- commandArgs(trailingOnly = TRUE)
out_dir <- file.path(script_dir, "r_output", "letters")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
sink(file.path(out_dir, "letters.txt"), split = TRUE)

# Letters of the systems `models` (best first) from the pairs (a, b) and their p-values.
# multcompLetters splits the names at "-", so systems are named s1, s2, ... for it.
cld <- function(models, a, b, p) {
  code <- setNames(paste0("s", seq_along(models)), models)
  names(p) <- paste(code[a], code[b], sep = "-")
  letters <- multcompLetters(p, threshold = 0.05, reversed = FALSE)$Letters
  unname(letters[code[models]])
}

set.seed(2004)
cases <- list()
for (case in 1:40) {
  k <- sample(3:14, 1)
  spread <- runif(1, 0.5, 6)
  scores <- sort(rnorm(k, 0, spread), decreasing = TRUE)
  models <- sprintf("m%02d", seq_len(k))
  pairs <- t(combn(k, 2))
  z <- (scores[pairs[, 1]] - scores[pairs[, 2]]) / sqrt(2)
  p_holm <- p.adjust(2 * pnorm(-abs(z)), method = "holm")
  a <- models[pairs[, 1]]
  b <- models[pairs[, 2]]
  letters <- cld(models, a, b, p_holm)
  cat(sprintf("case %d, K = %d: %s\n", case, k, paste(letters, collapse = " ")))
  cases[[case]] <- list(models = models, model_a = a, model_b = b, p_holm = signif(p_holm, 15),
                        letters = letters,
                        letters_count = length(unique(unlist(strsplit(letters, "")))))
}
result <- list(versions = package_versions(c("multcompView", "jsonlite")),
               generated = format(Sys.time(), "%Y-%m-%d"), threshold = 0.05, synthetic = cases)

if (length(args) >= 1) {
  pw <- read.csv(args[1], stringsAsFactors = FALSE)
  models <- unique(c(pw$model_a, pw$model_b))  # the table's accuracy order, best first
  letters <- cld(models, pw$model_a, pw$model_b, pw$p_holm)
  print(data.frame(model = models, letters = letters))
  separated <- paste(pw$model_a, pw$model_b, sep = "|")[pw$p_holm < 0.05]
  result$subsample <- list(source = basename(args[1]), models = models, letters = letters,
                           letters_count = length(unique(unlist(strsplit(letters, "")))),
                           separated = separated)
}
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           file.path(out_dir, "letters.json"))
sink()
