# R reference for the Bradley-Terry fit of battles (tests only; R is never a runtime or CI
# dependency). Used by tests/unit/stats/test_bradley_terry.py through the committed JSON.
#
# Usage (from the repository root):
#   Rscript tests/reference/make_r_bradley_terry_reference.R <battles.csv> <name>
#
# <battles.csv> has columns model_a, model_b, winner (model_a, model_b or tie) and optionally
# prompt_id and judge. Writes
#   tests/reference/r_output/battles/<name>.json  the numbers below, 15 significant digits
#   tests/reference/r_output/battles/<name>.txt   the printed R console output
# (a subfolder, so that r_results.py, which reads r_output/*.json, does not pick them up).
#
# Ties count half a win (y = 1/2). The reference model is the first in C-locale order; the
# coefficients are log-strengths relative to it.
#   1. BradleyTerry2::BTm on the pairs' counts, cbind(wins + ties/2, losses + ties/2): the
#      estimates and their model-based covariance (BTm warns about the non-integer counts that
#      the half ties make; the likelihood is the same).
#   2. glm(y ~ 0 + X, binomial) battle by battle (X the +1/-1 design without the reference):
#      the same estimates; sandwich::vcovHC(type = "HC0") (per battle) and
#      sandwich::vcovCL(cluster = prompt_id or judge, type = "HC0", cadjust = TRUE), which is
#      CR1 with the factor G/(G-1).
#   3. The clustered covariances written out by hand from the score contributions:
#      U_g = sum over battles of prompt g of (y - p) x, meat = G/(G-1) sum_g U_g U_g',
#      bread = (X' diag(p(1-p)) X)^-1, V = bread meat bread.

suppressPackageStartupMessages({
  library(BradleyTerry2)
  library(sandwich)
  library(jsonlite)
})
options(digits = 15, width = 120)

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript make_r_bradley_terry_reference.R <battles.csv> <name>")
path <- args[[1]]
name <- args[[2]]
out_dir <- file.path("tests", "reference", "r_output", "battles")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
sink(file.path(out_dir, paste0(name, ".txt")), split = TRUE)

d <- read.csv(path, colClasses = "character")
models <- sort(unique(c(d$model_a, d$model_b)), method = "radix")
reference <- models[1]
y <- ifelse(d$winner == "model_a", 1, ifelse(d$winner == "model_b", 0, 0.5))
cat("battles:", nrow(d), " models:", length(models), " ties:", sum(y == 0.5),
    " reference:", reference, "\n")

# 1. BradleyTerry2 on the pairs' counts.
pairs <- data.frame(a = factor(d$model_a, levels = models),
                    b = factor(d$model_b, levels = models), win1 = y, win2 = 1 - y)
counts <- aggregate(cbind(win1, win2) ~ a + b, data = pairs, FUN = sum)
counts$a <- factor(counts$a, levels = models)
counts$b <- factor(counts$b, levels = models)
tight <- glm.control(epsilon = 1e-14, maxit = 100)  # past glm's default 1e-8 relative deviance
bt <- suppressWarnings(BTm(cbind(win1, win2), a, b, data = counts, refcat = reference,
                           control = tight))
print(summary(bt))
btm_coef <- coef(bt)
names(btm_coef) <- sub("^\\.\\.", "", names(btm_coef))
btm_vcov <- vcov(bt)
dimnames(btm_vcov) <- list(names(btm_coef), names(btm_coef))

# 2. glm battle by battle and the sandwich package.
others <- models[-1]
X <- matrix(0, nrow(d), length(others), dimnames = list(NULL, others))
X[cbind(seq_len(nrow(d)), match(d$model_a, others))[!is.na(match(d$model_a, others)), ,
                                                     drop = FALSE]] <- 1
X[cbind(seq_len(nrow(d)), match(d$model_b, others))[!is.na(match(d$model_b, others)), ,
                                                     drop = FALSE]] <- -1
fit <- suppressWarnings(glm(y ~ 0 + X, family = binomial, control = tight))
glm_coef <- coef(fit)
names(glm_coef) <- others
print(cbind(btm = btm_coef[others], glm = glm_coef))
loglik <- sum(y * log(fitted(fit)) + (1 - y) * log(1 - fitted(fit)))
cat("log-likelihood (ties half):", format(loglik, digits = 15), "\n")

named <- function(v) { dimnames(v) <- list(others, others); v }
result <- list(
  name = name,
  source = path,
  models = models,
  reference = reference,
  battles = nrow(d),
  ties = sum(y == 0.5),
  btm = list(coef = as.list(btm_coef[others]), vcov = unname(btm_vcov[others, others])),
  glm = list(coef = as.list(glm_coef), loglik = loglik),
  vcov = list(model = unname(named(vcov(fit))), hc0 = unname(named(vcovHC(fit, type = "HC0"))))
)

# 3. Clustered, by sandwich::vcovCL and by hand from the score contributions.
p <- fitted(fit)
bread <- solve(crossprod(X * sqrt(p * (1 - p))))
for (column in intersect(c("prompt_id", "judge"), names(d))) {
  cluster <- d[[column]]
  by_package <- vcovCL(fit, cluster = cluster, type = "HC0", cadjust = TRUE)
  U <- rowsum((y - p) * X, cluster)
  G <- nrow(U)
  by_hand <- bread %*% (G / (G - 1) * crossprod(U)) %*% bread
  cat("clustered by", column, "(G =", G, "): max |vcovCL - by hand| =",
      format(max(abs(by_package - by_hand)), digits = 3), "\n")
  print(sqrt(diag(by_package)))
  result$vcov[[paste0("cr1_", column)]] <- unname(named(by_package))
  result$vcov[[paste0("cr1_", column, "_by_hand")]] <- unname(named(by_hand))
  result$clusters[[column]] <- G
}
result$versions <- list(
  r = paste(R.version$major, R.version$minor, sep = "."),
  BradleyTerry2 = as.character(packageVersion("BradleyTerry2")),
  sandwich = as.character(packageVersion("sandwich")),
  jsonlite = as.character(packageVersion("jsonlite"))
)
result$date <- format(Sys.Date())
sink()
writeLines(toJSON(result, digits = 15, auto_unbox = TRUE, pretty = TRUE),
           file.path(out_dir, paste0(name, ".json")))
