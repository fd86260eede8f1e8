# R reference values for the logistic mixed model and GEE (tests only; R is never a runtime or CI
# dependency).
#
# Usage (from the repository root):
#   Rscript tests/reference/make_r_binary_reference.R <long.csv> <name> [key=value ...]
#
# <long.csv> has columns model,question_id,category,correct (0/1) and optionally epoch (several 0/1
# samples per model x question; one row per sample). Writes
#   tests/reference/r_output/<name>_binary.json  every number below, 15 significant digits
#   tests/reference/r_output/<name>_binary.txt   the printed R console output (same numbers)
# Extra key=value arguments are stored verbatim under "source" in the JSON (for real data: the
# question-id SHA-256 and the total number correct, which this script checks against the data).
# EVALBARS_R_TIMING=1 times the glmer fit with system.time() ("timing_seconds"); with
# EVALBARS_R_TIMING_REPEATS=n it refits n more times and also reports their median.
#
# Statistics (models are factor levels in C-locale sorted order; pairs are (level i, level j),
# i < j, labelled as emmeans labels them):
#   glmm  glmer(correct ~ 0 + model + (1|category) + (1|category:question), family = binomial,
#         nAGQ = 1): the Laplace fit with lme4's default control. fixef; vcov (lme4's default:
#         from the finite-difference Hessian of the deviance in (theta, beta) when that is usable,
#         else from RX; which one is recorded) and the RX-based vcov; theta (lme4 order:
#         category:question, category; on the logit scale theta is the standard deviation),
#         variances, logLik, -2 logLik (the Laplace objective as lme4 reports it), deviance()
#         (lme4's GLMM deviance: the sum of squared deviance residuals at the conditional modes),
#         devcomp, isSingular, optimiser messages and evaluations, the finite-difference gradient
#         and Hessian lme4 computed at its optimum.
#         laplace_deviance_exact: lme4's own stage-2 deviance function at these estimates with
#         PIRLS run to tolPwrss = 1e-13 (or the first of 1e-12, 1e-11 that does not fail:
#         exact_tolpwrss). With the default tolPwrss = 1e-7, lme4 returns the
#         Laplace deviance with the Cholesky factor of the second-to-last PIRLS iterate, which
#         is off by up to ~1e-5 relative; the reported logLik carries that error.
#         laplace_deviance_formula: the Laplace deviance at these estimates computed here from
#         its formula (own Newton iterations to a step of 1e-12, sparse Cholesky
#         log-determinant), free of lme4's PIRLS error: the exact value to rounding.
#         Small data also get that deviance function at two fixed points away from the optimum
#         (with exact and with default PIRLS, and from the formula); the synthetic fixtures (no question_ids_sha256
#         given) also the conditional modes (ranef).
#         emmeans(fit, ~ model): pairwise log odds ratios, SE, z, p (none/bonferroni/holm).
#         Marginal (population-averaged) accuracy p_k = int plogis(beta_k + s z) dnorm(z) dz,
#         s^2 = sum(theta^2), by integrate(); differences p_a - p_b with delta-method SEs whose
#         gradients come from numDeriv::jacobian (Richardson), once with the full covariance of
#         (theta, beta), 2 solve(Hessian) (when lme4's Hessian is usable), and once with theta
#         held fixed (vcov(fit) only).
#         With epochs, also the same model on binomial counts cbind(successes, failures) per cell:
#         the same estimates; its logLik differs by sum(lchoose(trials, successes)).
#   glmm_tight  the same, refitted from the default estimates (no stage-1 fit) with tolPwrss =
#         1e-13 (1e-12 if that fails) and bobyqa (rhoend = 1e-10): lme4's optimum of the exact
#         Laplace objective, which the default control misses by up to ~1e-2 relative in the
#         estimates. Skipped with EVALBARS_R_TIGHT=0.
#   gee   geepack::geeglm(correct ~ 0 + model, id = question, family = binomial,
#         corstr = "exchangeable") on rows sorted by question: coefficients, robust (sandwich)
#         vcov and SEs, the exchangeable correlation alpha and scale; pairwise log odds ratios
#         and accuracy differences plogis(b_a) - plogis(b_b) (delta method), both with
#         p (none/bonferroni/holm), computed here by hand from the robust vcov.

suppressPackageStartupMessages({
  library(lme4)
  library(emmeans)
  library(geepack)
  library(numDeriv)
  library(jsonlite)
})
options(digits = 15, width = 120)

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "tests/reference"
})
source(file.path(script_dir, "reference_common.R"))
cli <- reference_args("usage: Rscript make_r_binary_reference.R <long.csv> <name> [key=value ...]")
csv_path <- cli$csv_path
name <- cli$name
extra <- cli$extra
timing <- Sys.getenv("EVALBARS_R_TIMING") == "1"
repeats <- as.integer(Sys.getenv("EVALBARS_R_TIMING_REPEATS", "0"))
outputs <- reference_outputs(script_dir, name, "_binary")
json_path <- outputs$json
txt_path <- outputs$txt
versions <- package_versions(c("lme4", "emmeans", "geepack", "numDeriv", "jsonlite"))
cat(sprintf("# %s: %s\n# R %s, lme4 %s, emmeans %s, geepack %s, numDeriv %s\n", name,
            basename(csv_path), versions$r, versions$lme4, versions$emmeans, versions$geepack,
            versions$numDeriv))

header <- names(read.csv(csv_path, nrows = 1))
classes <- c(model = "character", question_id = "character", category = "character",
             correct = "integer", epoch = "integer")[header]
raw <- read.csv(csv_path, colClasses = classes)
has_epochs <- "epoch" %in% header
models <- sort(unique(raw$model), method = "radix")  # C-locale order, as Python's sorted()
d <- data.frame(
  model = factor(raw$model, levels = models),
  question = factor(raw$question_id),
  category = factor(raw$category),
  correct = as.numeric(raw$correct)
)
if (has_epochs) d$epoch <- raw$epoch
stopifnot(all(d$correct %in% c(0, 1)),
          !anyDuplicated(d[intersect(c("model", "question", "epoch"), names(d))]))
if (!is.null(extra$total_correct)) stopifnot(sum(d$correct) == extra$total_correct)
K <- length(models)
cells <- unique(d[c("model", "question")])
cat(sprintf("rows %d, cells %d, questions %d, models %d, categories %d, epochs %s\n",
            nrow(d), nrow(cells), nlevels(d$question), K, nlevels(d$category), has_epochs))
cat("models (level order):", paste(models, collapse = ", "), "\n")
print(tapply(d$correct, d$model, mean))

result <- list(
  name = name,
  source = c(list(csv = basename(csv_path)), extra),
  versions = versions,
  generated = format(Sys.Date()),
  n_rows = nrow(d), n_cells = nrow(cells), n_questions = nlevels(d$question), n_models = K,
  n_categories = nlevels(d$category), epochs = has_epochs, total_correct = sum(d$correct),
  models = models,
  accuracy = as.list(tapply(d$correct, d$model, mean))
)
small <- nrow(d) <= 20000

# ---- logistic GLMM, Laplace (nAGQ = 1) -------------------------------------------------------
form <- correct ~ 0 + model + (1 | category) + (1 | category:question)
idx <- which(upper.tri(diag(K)), arr.ind = TRUE)
idx <- idx[order(idx[, "row"], idx[, "col"]), , drop = FALSE]  # pairs (i, j), i < j, emmeans order

pair_table <- function(est, V, J) {
  lapply(seq_len(nrow(idx)), function(r) {
    i <- idx[r, "row"]; j <- idx[r, "col"]
    g <- J[i, ] - J[j, ]
    se <- sqrt(drop(t(g) %*% V %*% g))
    list(model_a = models[i], model_b = models[j], estimate = est[[i]] - est[[j]], se = se,
         z = (est[[i]] - est[[j]]) / se)
  })
}
with_p <- function(rows) {
  p <- vapply(rows, function(x) 2 * pnorm(-abs(x$z)), numeric(1))
  bonf <- p.adjust(p, "bonferroni"); holm <- p.adjust(p, "holm")
  for (r in seq_along(rows)) {
    rows[[r]]$p_none <- p[r]; rows[[r]]$p_bonferroni <- bonf[r]; rows[[r]]$p_holm <- holm[r]
  }
  rows
}
# marginal accuracy by adaptive quadrature; delta-method gradients by numDeriv (Richardson)
marginal_accuracy <- function(par) {
  sd_total <- sqrt(sum(par[1:2]^2))
  vapply(par[-(1:2)], function(b) {
    integrate(function(z) plogis(b + sd_total * z) * dnorm(z), -Inf, Inf,
              rel.tol = 1e-13, abs.tol = 0)$value
  }, numeric(1))
}
# lme4's stage-2 deviance function at p with PIRLS run to a relative change of 1e-13 (lme4's
# default tolPwrss = 1e-7 leaves the Cholesky factor one PIRLS iterate behind the modes, which
# moves the objective by up to ~1e-5 relative; 1e-14 fails in step halving, and on large data so
# can 1e-13, hence the fallbacks); nAGQ0initStep = FALSE skips the stage-1 fit that update()
# would otherwise redo. Its PIRLS starts from the fit's modes.
exact_tolerances <- c(1e-13, 1e-12, 1e-11)
exact_deviance <- function(fit, p) {
  for (tol in exact_tolerances) {
    devfun <- update(fit, devFunOnly = TRUE,
                     control = glmerControl(tolPwrss = tol, nAGQ0initStep = FALSE))
    value <- tryCatch(devfun(p), error = function(e) NA_real_)
    if (!is.na(value)) return(structure(value, tolPwrss = tol))
  }
  stop("PIRLS failed at every tolerance")
}

# The Laplace deviance from its formula, independently of lme4's PIRLS: Newton's method on the
# penalised deviance in the spherical modes u until the largest step is below 1e-12, then
#   D = -2 loglik(y | u) + |u|^2 + log det(Lambda' Z' W Z Lambda + I),
# with W and the (sparse Cholesky) log-determinant at the final modes. Unlike lme4's deviance
# function it carries no PIRLS lag, so it is exact to rounding.
laplace_formula <- function(fit, p, tol = 1e-12) {
  Zt <- getME(fit, "Zt"); X <- getME(fit, "X"); y <- getME(fit, "y")  # one 0/1 sample per row
  Lambdat <- getME(fit, "Lambdat"); Lambdat@x <- p[1:2][getME(fit, "Lind")]
  LtZt <- Lambdat %*% Zt
  offset <- drop(X %*% p[-(1:2)])
  q <- nrow(Zt)
  u <- rep(0, q)
  system_at <- function(u) {
    mu <- plogis(offset + drop(crossprod(LtZt, u)))
    list(mu = mu, H = tcrossprod(LtZt %*% Diagonal(x = sqrt(mu * (1 - mu)))) +
           Diagonal(q))
  }
  for (it in 1:200) {
    s <- system_at(u)
    step <- drop(solve(s$H, drop(LtZt %*% (y - s$mu)) - u))
    u <- u + step
    if (max(abs(step)) < tol) break
  }
  s <- system_at(u)
  -2 * sum(dbinom(y, 1, s$mu, log = TRUE)) + sum(u^2) +
    as.numeric(determinant(s$H, logarithm = TRUE)$modulus)
}

summarise_glmer <- function(fit, label) {
  theta <- getME(fit, "theta")
  theta_names <- sub("\\.\\(Intercept\\)$", "", names(theta))
  stopifnot(identical(theta_names, c("category:question", "category")))
  fe <- fixef(fit)
  names(fe) <- sub("^model", "", names(fe))
  stopifnot(identical(names(fe), models))
  h <- fit@optinfo$derivs$Hessian
  V_rx <- as.matrix(suppressWarnings(vcov(fit, use.hessian = FALSE)))  # warns that they differ
  V <- as.matrix(vcov(fit))
  # which one vcov() returned: lme4 falls back to RX when the Hessian is singular or not
  # positive definite (see lme4:::vcov.merMod)
  vcov_source <- if (isTRUE(all.equal(V, V_rx, tolerance = 0))) "rx" else "hessian"
  cmp <- getME(fit, "devcomp")$cmp
  opt <- c(unname(theta), unname(fe))
  exact <- exact_deviance(fit, opt)
  formula_value <- laplace_formula(fit, opt)
  cat(sprintf("\n-- %s: theta %s\n", label, paste(sprintf("%.15g", theta), collapse = " ")))
  cat(sprintf("fixef %s\n", paste(sprintf("%.15g", fe), collapse = " ")))
  cat(sprintf("logLik %.15g, -2 logLik %.15g, deviance() %.15g, isSingular %s, vcov from %s\n",
              as.numeric(logLik(fit)), -2 * as.numeric(logLik(fit)), deviance(fit),
              isSingular(fit), vcov_source))
  cat(sprintf("Laplace deviance at these estimates: lme4 with PIRLS to %g %.15g, formula %.15g\n",
              attr(exact, "tolPwrss"), exact, formula_value))
  cat("finite-difference gradient at the optimum (theta, beta):",
      sprintf("%.6g", fit@optinfo$derivs$gradient), "\n")
  cat("vcov of fixef:\n"); print(V, digits = 15)
  out <- list(
    formula = paste(deparse(form), collapse = ""), nAGQ = 1, models = models,
    control = label, fixef = as.list(fe), vcov = unname(V), vcov_source = vcov_source,
    vcov_rx = unname(V_rx),
    theta = setNames(as.list(unname(theta)), c("question", "category")),
    variance = list(question = theta[[1]]^2, category = theta[[2]]^2),
    loglik = as.numeric(logLik(fit)), laplace_deviance = -2 * as.numeric(logLik(fit)),
    laplace_deviance_exact = as.numeric(exact), exact_tolpwrss = attr(exact, "tolPwrss"),
    laplace_deviance_formula = formula_value,
    deviance = deviance(fit), devcomp = as.list(cmp[c("ldL2", "ussq", "drsum", "dev")]),
    singular = isSingular(fit), n_obs = nobs(fit),
    optimizer = fit@optinfo$optimizer, feval = fit@optinfo$feval,
    messages = as.list(fit@optinfo$conv$lme4$messages),
    fd_gradient = fit@optinfo$derivs$gradient, fd_hessian = unname(h)
  )
  if (small) {
    # the objective at two fixed points away from the optimum, lme4 default and exact PIRLS;
    # a fresh deviance function for each point, because PIRLS starts from the modes the last
    # call left behind and a different start leaves a different (if small) PIRLS error
    default_devfun <- function(p) {
      update(fit, devFunOnly = TRUE, control = glmerControl(nAGQ0initStep = FALSE))(p)
    }
    points <- list(opt * c(1.25, 0.8, rep(1, K)) + c(0.05, 0.05, seq(-0.2, 0.2, length.out = K)),
                   c(0.5, 0.3, rep(0, K)))
    out$devfun_checks <- lapply(points, function(p) {
      value <- as.numeric(exact_deviance(fit, p))
      cat(sprintf("devfun(%s) = %.15g\n", paste(sprintf("%.6g", p), collapse = ", "), value))
      list(theta = p[1:2], beta = p[-(1:2)], laplace_deviance = value,
           laplace_deviance_lme4_default = default_devfun(p),
           laplace_deviance_formula = laplace_formula(fit, p))
    })
  }
  if (small && is.null(extra$question_ids_sha256)) {
    # per-question modes only for the synthetic fixtures: for real data they would be data
    # derived from the archives, which the repository never holds
    re <- ranef(fit)
    out$ranef <- list(
      question = list(level = sub("^[^:]*:", "", rownames(re[["category:question"]])),
                      value = re[["category:question"]][[1]]),
      category = list(level = rownames(re$category), value = re$category[[1]])
    )
  }

  # pairwise log odds ratios on the logit scale
  pr <- pairs(emmeans(fit, ~model), reverse = FALSE)
  adj <- list()
  for (method in c("none", "bonferroni", "holm")) {
    adj[[method]] <- as.data.frame(summary(pr, adjust = method))
  }
  cat("-- emmeans pairs (log odds ratios), adjust = holm\n")
  print(adj$holm, digits = 15)
  s <- adj$none
  stopifnot(nrow(idx) == nrow(s))
  out$contrasts <- lapply(seq_len(nrow(s)), function(r) {
    i <- idx[r, "row"]; j <- idx[r, "col"]
    stopifnot(abs(s$estimate[r] - (fe[[i]] - fe[[j]])) < 1e-10)
    list(label = as.character(s$contrast[r]), model_a = models[i], model_b = models[j],
         estimate = s$estimate[r], se = s$SE[r], z = s$z.ratio[r], p_none = s$p.value[r],
         p_bonferroni = adj$bonferroni$p.value[r], p_holm = adj$holm$p.value[r])
  })

  p_hat <- marginal_accuracy(opt)
  names(p_hat) <- models
  J <- jacobian(marginal_accuracy, opt, method = "Richardson")
  cat("-- marginal accuracy (integrate)\n"); print(p_hat, digits = 15)
  out$marginal_accuracy <- as.list(p_hat)
  out$marginal_jacobian <- unname(J)
  # theta held fixed: only the fixed-effect block of the covariance
  V_fixed_theta <- matrix(0, K + 2, K + 2); V_fixed_theta[-(1:2), -(1:2)] <- V
  out$marginal_contrasts_fixed_theta <- with_p(pair_table(p_hat, V_fixed_theta, J))
  if (vcov_source == "hessian") {
    out$marginal_contrasts <- with_p(pair_table(p_hat, 2 * solve(h), J))
    cat("-- marginal accuracy differences, full (theta, beta) covariance\n")
    print(do.call(rbind, lapply(out$marginal_contrasts, as.data.frame)), digits = 12)
  }
  out
}

cat(sprintf("\n## glmer(%s, family = binomial, nAGQ = 1), lme4's default control\n",
            deparse(form)))
elapsed <- system.time(fit <- glmer(form, data = d, family = binomial, nAGQ = 1))
timings <- list()
if (timing) {
  cat(sprintf("system.time(glmer): elapsed %.3f s (user %.3f, system %.3f)\n",
              elapsed[["elapsed"]], elapsed[["user.self"]], elapsed[["sys.self"]]))
  timings$glmer <- elapsed[["elapsed"]]
  if (repeats > 0) {
    more <- replicate(repeats, system.time(glmer(form, data = d, family = binomial,
                                                 nAGQ = 1))[["elapsed"]])
    cat(sprintf("glmer refits: median of %d %.3f s (min %.3f, max %.3f)\n", repeats,
                median(more), min(more), max(more)))
    timings$glmer_repeats <- more
    timings$glmer_median <- median(more)
  }
}
print(summary(fit), digits = 12)
glmm <- summarise_glmer(fit, "default")
result$glmm <- glmm  # (completed below; assigned here to fix its place in the JSON)

# The same fit driven to the optimum of the exact objective: PIRLS to 1e-13 (1e-12 if that fails
# in step halving, as it can on large data), bobyqa with rhoend 1e-10, started at the default
# estimates without the stage-1 (nAGQ = 0) fit. lme4's default (tolPwrss 1e-7, Nelder-Mead
# FtolAbs 1e-5 in stage 2) stops up to ~1e-2 relative away from it. EVALBARS_R_TIGHT=0 skips it.
if (Sys.getenv("EVALBARS_R_TIGHT", "1") == "1") {
  for (tol in c(1e-13, 1e-12)) {
    cat(sprintf("\n## glmer refit with tight control: tolPwrss = %g, bobyqa rhoend = 1e-10\n", tol))
    tight_control <- glmerControl(optimizer = "bobyqa", tolPwrss = tol, nAGQ0initStep = FALSE,
                                  optCtrl = list(rhoend = 1e-10, maxfun = 1e5))
    tight_time <- system.time(
      fit_tight <- tryCatch(
        glmer(form, data = d, family = binomial, nAGQ = 1, control = tight_control,
              start = list(theta = getME(fit, "theta"), fixef = fixef(fit))),
        error = function(e) { cat("failed:", conditionMessage(e), "\n"); NULL })
    )
    if (!is.null(fit_tight)) break
  }
  if (timing) timings$glmer_tight_from_default <- tight_time[["elapsed"]]
  result$glmm_tight <- summarise_glmer(fit_tight, "tight")
  result$glmm_tight$tolPwrss <- tol
}

if (has_epochs) {
  cat("\n## the same model on binomial counts per cell: cbind(successes, failures)\n")
  agg <- aggregate(correct ~ model + question + category, data = d,
                   FUN = function(x) c(successes = sum(x), trials = length(x)))
  agg <- data.frame(agg[c("model", "question", "category")], successes = agg$correct[, "successes"],
                    trials = agg$correct[, "trials"])
  fit_b <- glmer(cbind(successes, trials - successes) ~ 0 + model + (1 | category) +
                   (1 | category:question), data = agg, family = binomial, nAGQ = 1)
  fe_b <- fixef(fit_b); names(fe_b) <- sub("^model", "", names(fe_b))
  print(summary(fit_b), digits = 12)
  lchoose_sum <- sum(lchoose(agg$trials, agg$successes))
  cat(sprintf("binomial logLik %.15g, sum lchoose %.15g, trials per cell: %s\n",
              as.numeric(logLik(fit_b)), lchoose_sum,
              paste(names(table(agg$trials)), table(agg$trials), sep = ":", collapse = " ")))
  glmm$binomial_counts <- list(
    fixef = as.list(fe_b), theta = setNames(as.list(unname(getME(fit_b, "theta"))),
                                            c("question", "category")),
    loglik = as.numeric(logLik(fit_b)), lchoose_sum = lchoose_sum,
    n_cells = nrow(agg), trials_table = as.list(table(agg$trials))
  )
}
result$glmm <- glmm

# ---- GEE, exchangeable within question ---------------------------------------------------------
cat("\n## geeglm(correct ~ 0 + model, id = question, family = binomial, corstr = 'exchangeable')\n")
order_keys <- if (has_epochs) list(d$question, d$model, d$epoch) else list(d$question, d$model)
ds <- d[do.call(order, order_keys), ]
gee_time <- system.time(g <- geeglm(correct ~ 0 + model, id = question, data = ds,
                                    family = binomial, corstr = "exchangeable"))
if (timing) timings$geeglm <- gee_time[["elapsed"]]
print(summary(g))
b <- coef(g); names(b) <- sub("^model", "", names(b))
Vg <- unname(as.matrix(g$geese$vbeta))
acc <- plogis(b)
Jg <- diag(acc * (1 - acc), K)
gee <- list(
  coef = as.list(b), se = sqrt(diag(Vg)), vcov = Vg, alpha = unname(g$geese$alpha),
  scale = unname(g$geese$gamma), accuracy = as.list(acc),
  n_clusters = length(unique(ds$question)),
  contrasts = with_p(pair_table(b, Vg, diag(K))),
  accuracy_contrasts = with_p(pair_table(acc, Vg, Jg))
)
cat(sprintf("alpha %.15g, scale %.15g\n", gee$alpha, gee$scale))
result$gee <- gee
if (timing) result$timing_seconds <- timings

sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"), json_path)
message("wrote ", json_path, " and ", txt_path)
