# R reference values for the cluster-robust mean (tests only; R is never a runtime or CI
# dependency).
#
# Usage (from the repository root):
#   Rscript tests/reference/make_r_cluster_robust_reference.R
#
# Reads every tests/data/cluster_robust_*.csv (columns question_id,cluster,score,weight; written by
# make_cluster_robust_fixtures.py) and writes
#   tests/reference/r_output/cluster_robust.json  every number below, 15 significant digits
#   tests/reference/r_output/cluster_robust.txt   the printed R console output (same numbers)
#
# For each data set, the intercept-only fits lm(score ~ 1) ("unweighted") and
# lm(score ~ 1, weights = weight) ("weighted"; questions of weight 0 drop out), clustered by
# `cluster`:
#   cr0   clubSandwich vcovCR(type = "CR0") SE; sandwich vcovCL(type = "HC0", cadjust = FALSE) SE.
#   cr1   clubSandwich "CR1" (G/(G-1)) and "CR1S" (Stata: G(N-1)/((G-1)(N-p))) SEs, sandwich
#         vcovCL(type = "HC1") SE (cadjust = TRUE: G/(G-1) times (n-1)/(n-k)); sandwich counts
#         questions of weight 0 in n (so its weighted SEs of cluster_robust_g6 are off by a
#         factor 64/65; clubSandwich drops them); with t(G-1) and the CR1S SE: the
#         two-sided p of H0: mean = 0 (coef_test(test = "naive-t")), and of H0: mean = null (the
#         fixture's `null`, the same fit on score - null), intervals mean -/+ qt(1/2 + level/2, G-1) SE
#         at levels 0.95 and 0.90.
#   cr2   clubSandwich coef_test(vcov = "CR2", test = "Satterthwaite"): SE, df, p (H0: mean = 0 and
#         H0: mean = null); conf_int(vcov = "CR2", test = "Satterthwaite") at 0.95 and 0.90; the
#         t quantiles qt(1/2 + level/2, df). sandwich vcovCL(type = "HC2") SE (its default
#         cadjust = TRUE cancels the sqrt((G-1)/G) sandwich puts on HC2 residuals; then equal to
#         clubSandwich's CR2 without weights; with weights sandwich adjusts by the non-symmetric
#         (I - X_j (X'WX)^-1 X_j' W_j)^(-1/2) and differs: recorded, not a target).
#   hc2   sandwich vcovHC(type = "HC2") SE, only where every cluster is one question.

suppressPackageStartupMessages({
  library(sandwich)
  library(clubSandwich)
  library(jsonlite)
})

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else getwd()
})
source(file.path(script_dir, "reference_common.R"))
paths <- reference_outputs(script_dir, "cluster_robust")
data_dir <- file.path(dirname(script_dir), "data")

# The H0 value of the second p-value per fixture (near each mean, so that p is moderate).
nulls <- c(cluster_robust_g3 = 0.6, cluster_robust_g6 = 0.5, cluster_robust_g14_paired = 0.05,
           cluster_robust_equal = 0.65, cluster_robust_singletons = 0.4, cluster_robust_g2 = 0.7)
levels <- c(0.95, 0.90)

one_fit <- function(data, weighted, null) {
  w <- if (weighted) data$weight else NULL
  fit <- lm(score ~ 1, data = data, weights = w)
  shifted <- data
  shifted$score <- shifted$score - null
  fit_null <- lm(score ~ 1, data = shifted, weights = w)
  kept <- if (weighted) data$weight > 0 else rep(TRUE, nrow(data))
  g <- length(unique(data$cluster[kept]))
  n <- sum(kept)
  est <- unname(coef(fit)[1])
  se_of <- function(v) sqrt(unname(v[1, 1]))

  se_cr0 <- se_of(vcovCR(fit, cluster = data$cluster, type = "CR0"))
  se_cr0_sandwich <- se_of(vcovCL(fit, cluster = ~cluster, type = "HC0", cadjust = FALSE))
  se_cr1 <- se_of(vcovCR(fit, cluster = data$cluster, type = "CR1"))
  se_cr1s <- se_of(vcovCR(fit, cluster = data$cluster, type = "CR1S"))
  se_hc1 <- se_of(vcovCL(fit, cluster = ~cluster, type = "HC1"))
  naive <- coef_test(fit, vcov = "CR1S", cluster = data$cluster, test = "naive-t")
  naive_null <- coef_test(fit_null, vcov = "CR1S", cluster = data$cluster, test = "naive-t")
  cr1 <- list(
    se = se_cr1s, se_clubsandwich_cr1 = se_cr1, se_sandwich_hc1 = se_hc1, df = g - 1,
    p = naive$p_t, p_null = naive_null$p_t,
    t_quantile = setNames(as.list(qt(0.5 + levels / 2, g - 1)), paste0("level_", levels)),
    interval = setNames(lapply(levels, function(l) {
      half <- qt(0.5 + l / 2, g - 1) * se_cr1s
      c(est - half, est + half)
    }), paste0("level_", levels))
  )

  satt <- coef_test(fit, vcov = "CR2", cluster = data$cluster, test = "Satterthwaite")
  satt_null <- coef_test(fit_null, vcov = "CR2", cluster = data$cluster, test = "Satterthwaite")
  print(satt)
  intervals <- lapply(levels, function(l) {
    ci <- conf_int(fit, vcov = "CR2", cluster = data$cluster, test = "Satterthwaite", level = l)
    print(ci)
    c(ci$CI_L, ci$CI_U)
  })
  se_hc2_cl <- se_of(vcovCL(fit, cluster = ~cluster, type = "HC2"))
  cr2 <- list(
    se = satt$SE, df = satt$df_Satt, p = satt$p_Satt, p_null = satt_null$p_Satt,
    t_quantile = setNames(as.list(qt(0.5 + levels / 2, satt$df_Satt)), paste0("level_", levels)),
    interval = setNames(intervals, paste0("level_", levels)),
    se_sandwich_hc2 = se_hc2_cl
  )
  list(
    estimate = est, clusters = g, questions = n, null = null,
    cr0 = list(se = se_cr0, se_sandwich_hc0 = se_cr0_sandwich),
    cr1 = cr1, cr2 = cr2,
    hc2 = if (g == n) list(se = se_of(vcovHC(fit, type = "HC2"))) else NULL
  )
}

files <- sort(Sys.glob(file.path(data_dir, "cluster_robust_*.csv")))
results <- list()
for (path in files) {
  name <- sub("\\.csv$", "", basename(path))
  data <- read.csv(path, colClasses = c(question_id = "character", cluster = "character"))
  cat("\n=====", name, ":", nrow(data), "questions,", length(unique(data$cluster)), "clusters\n")
  entry <- list()
  for (weighted in c(FALSE, TRUE)) {
    kind <- if (weighted) "weighted" else "unweighted"
    cat("\n---", kind, "\n")
    entry[[kind]] <- one_fit(data, weighted, nulls[[name]])
    str(entry[[kind]], digits.d = 15)
  }
  results[[name]] <- entry
}

document <- list(
  versions = package_versions(c("sandwich", "clubSandwich", "jsonlite")),
  date = format(Sys.Date()),
  datasets = results
)
writeLines(toJSON(document, auto_unbox = TRUE, digits = NA, pretty = TRUE), paths$json)
sink()
cat("wrote", paths$json, "and", paths$txt, "\n")
