# R reference values for the logistic mixed model and GEE at 100 models (tests only; R is never a
# runtime or CI dependency).
#
# Usage (from the repository root; how the committed r_output/glmm_k100_binary.* were made, in
# 29 minutes: 20 of Newton steps, 8 of glmer):
#   EVALBARS_R_START=tests/data/glmm_k100_start.json EVALBARS_R_OPTIMIZER=nlminbwrap \
#     Rscript tests/reference/make_r_glmm_k100_reference.R tests/data/glmm_k100.csv.gz glmm_k100
# Without EVALBARS_R_START glmer starts from its own start (see below: it did not finish here).
#
# The board (100 models x 500 questions, 5% of the cells missing) is written by
# make_glmm_k100_board.py. Writes tests/reference/r_output/<name>_binary.json (every number, 15
# significant digits) and <name>_binary.txt (the console output, with the timings).
#
#   glmm_tight  glmer(correct ~ 0 + model + (1|category) + (1|category:question),
#         family = binomial, nAGQ = 1) with PIRLS to tolPwrss = 1e-13 (1e-12 if that fails),
#         from the Newton steps' point (EVALBARS_R_START) or its own start (bobyqa, rhoend 1e-10,
#         by default): lme4's optimum of the exact Laplace objective (its default control,
#         Nelder-Mead over 102 parameters in stage 2, stops far from it). fixef; vcov(fit) (from
#         its own start lme4's default for a GLMM, 2 solve(Hessian) of the deviance in (theta,
#         beta) by finite differences; from a given start the RX covariance; which one is
#         recorded) and vcov(fit, use.hessian = FALSE) (the RX covariance, theta taken as
#         known); theta (question = category:question, category) and variances; logLik
#         and -2 logLik; the Laplace deviance at the estimates with PIRLS to 1e-13 and from its
#         formula; 2 solve(Hessian) over (theta, beta) for the theta block (cov_theta); the
#         finite-difference gradient; elapsed seconds.
#   gee   geepack::geeglm(correct ~ 0 + model, id = question, family = binomial,
#         corstr = "exchangeable") on rows sorted by question: coefficients, robust vcov, alpha,
#         scale.
#
# No emmeans contrasts and no marginal accuracies here (the smaller fixtures of
# make_r_binary_reference.R check those); the contrast SEs follow from vcov.

suppressPackageStartupMessages({
  library(lme4)
  library(geepack)
  library(jsonlite)
})
options(digits = 15, width = 120)

script_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg))) else "tests/reference"
})
source(file.path(script_dir, "reference_common.R"))
cli <- reference_args("usage: Rscript make_r_glmm_k100_reference.R <long.csv[.gz]> <name>")
outputs <- reference_outputs(script_dir, cli$name, "_binary")
versions <- package_versions(c("lme4", "geepack", "jsonlite"))
cat(sprintf("# %s: %s\n# R %s, lme4 %s, geepack %s\n", cli$name, basename(cli$csv_path),
            versions$r, versions$lme4, versions$geepack))

raw <- read.csv(cli$csv_path, colClasses = c("character", "character", "character", "integer"))
models <- sort(unique(raw$model), method = "radix")  # C-locale order, as Python's sorted()
d <- data.frame(model = factor(raw$model, levels = models), question = factor(raw$question_id),
                category = factor(raw$category), correct = as.numeric(raw$correct))
stopifnot(all(d$correct %in% c(0, 1)), !anyDuplicated(d[c("model", "question")]))
K <- length(models)
cat(sprintf("rows %d, questions %d, models %d, categories %d\n", nrow(d), nlevels(d$question), K,
            nlevels(d$category)))
result <- list(
  name = cli$name, source = list(csv = basename(cli$csv_path)), versions = versions,
  generated = format(Sys.Date()), n_rows = nrow(d), n_questions = nlevels(d$question),
  n_models = K, n_categories = nlevels(d$category), total_correct = sum(d$correct),
  models = models
)

# ---- GEE, exchangeable within question ---------------------------------------------------------
cat("\n## geeglm(correct ~ 0 + model, id = question, family = binomial, corstr = 'exchangeable')\n")
ds <- d[order(d$question, d$model), ]
gee_time <- system.time(g <- geeglm(correct ~ 0 + model, id = question, data = ds,
                                    family = binomial, corstr = "exchangeable"))
b <- coef(g); names(b) <- sub("^model", "", names(b))
Vg <- unname(as.matrix(g$geese$vbeta))
cat(sprintf("geeglm: elapsed %.2f s, alpha %.15g, scale %.15g\n", gee_time[["elapsed"]],
            unname(g$geese$alpha), unname(g$geese$gamma)))
result$gee <- list(coef = as.list(b), se = sqrt(diag(Vg)), vcov = Vg,
                   alpha = unname(g$geese$alpha), scale = unname(g$geese$gamma),
                   n_clusters = nlevels(d$question), elapsed_seconds = gee_time[["elapsed"]])

# Newton's method on glmer's Laplace deviance function from `par` (theta, then beta): the
# gradient by central differences (step 1e-4; with PIRLS to 1e-13 the deviance's rounding is
# ~1e-11, so the gradient is good to ~1e-7), the beta block of the Hessian 2 RX'RX (glmer's
# Schur complement X'WX - X'WZ (Z'WZ + I)^-1 Z'WX at the current modes, the Hessian of the
# deviance in beta with the modes' derivatives of the log-determinant left out) and the theta
# rows by forward differences of the gradient (step 1e-3) at the start. Stops when the largest
# step is below 1e-8 or no longer shrinks: at 100 models the deviance's rounding (~2e-9 here)
# leaves the gradient good to ~1e-5 and the steps at ~1e-6, a hundredth of the 1e-4 the tests
# ask.
newton_on_devfun <- function(form, data, par, n_theta, h = 1e-4, max_iter = 20) {
  devfun <- glmer(form, data = data, family = binomial, nAGQ = 1, devFunOnly = TRUE,
                  control = glmerControl(nAGQ0initStep = FALSE, tolPwrss = 1e-13))
  pp <- environment(devfun)$pp
  n_par <- length(par)
  central_gradient <- function(p) vapply(seq_len(n_par), function(j) {
    e <- replace(numeric(n_par), j, h)
    (devfun(p + e) - devfun(p - e)) / (2 * h)
  }, numeric(1))
  elapsed <- system.time({
    g <- central_gradient(par)
    theta_rows <- vapply(seq_len(n_theta), function(k) {
      e <- replace(numeric(n_par), k, 1e-3)
      (central_gradient(par + e) - g) / 1e-3
    }, numeric(n_par))
    for (it in seq_len(max_iter)) {
      deviance <- devfun(par)  # leaves glmer's decomposition at the modes of `par`
      H <- matrix(0, n_par, n_par)
      H[-seq_len(n_theta), -seq_len(n_theta)] <- 2 * crossprod(pp$RX())
      H[, seq_len(n_theta)] <- theta_rows
      H[seq_len(n_theta), ] <- t(theta_rows)
      step <- -solve(H, g)
      par <- par + step
      g <- central_gradient(par)
      cat(sprintf("Newton %d: deviance before the step %.10f, max |step| %.3g, max |gradient| after %.3g\n",
                  it, deviance, max(abs(step)), max(abs(g))))
      if (max(abs(step)) < 1e-8 || (it > 1 && max(abs(step)) > 0.5 * previous)) break
      previous <- max(abs(step))
    }
  })
  cat(sprintf("Newton: %d steps, elapsed %.1f s, deviance %.12f\n", it, elapsed[["elapsed"]],
              devfun(par)))
  list(par = par, iterations = it, max_abs_step = max(abs(step)), max_abs_gradient = max(abs(g)),
       deviance = devfun(par), elapsed_seconds = elapsed[["elapsed"]])
}

# ---- logistic GLMM, Laplace (nAGQ = 1), driven to the optimum ---------------------------------
form <- correct ~ 0 + model + (1 | category) + (1 | category:question)
# EVALBARS_R_OPTIMIZER=nloptwrap: nlopt's BOBYQA (xtol_abs 1e-10, ftol_abs 1e-11) instead of
# minqa's bobyqa (rhoend 1e-10), which takes hours over 102 parameters on a busy machine;
# =nlminbwrap: PORT's nlminb (rel.tol 1e-13, x.tol 1e-10)
optimizer <- Sys.getenv("EVALBARS_R_OPTIMIZER", "bobyqa")
# EVALBARS_R_START=<json with theta (question, category) and fixef (by model)>: the given fit,
# rounded to 2 decimals (0.005 from it in every coordinate), is where R starts. Over 102
# parameters at 0.6 s per deviance evaluation glmer's own optimisers did not finish from its
# default start (bobyqa 88 min, nloptwrap 75 min), nor from the rounded start (nloptwrap 94 CPU
# min, nlminbwrap 28): the 100 model effects are strongly correlated through the shared questions,
# which a quasi-Newton method learns slowly. So R first takes Newton steps on glmer's own
# Laplace deviance function (devFunOnly = TRUE): central-difference gradients (step 1e-4), the
# model block of the Hessian 2 RX'RX from glmer's own decomposition at each point, and the two
# theta rows by differences of the gradient, once. Then glmer itself starts from where Newton
# stopped (no nAGQ = 0 stage, no finite-difference Hessian) and its optimiser decides where the
# optimum is; the JSON records how far it moved. vcov(fit) is then the RX covariance.
start_file <- Sys.getenv("EVALBARS_R_START", "")
start <- NULL
newton <- NULL
if (nzchar(start_file)) {
  given <- jsonlite::fromJSON(start_file)
  rounded <- c(round(unname(unlist(given$theta)), 2), round(unname(unlist(given$fixef)[models]), 2))
  cat(sprintf("start (rounded to 2 decimals): theta %s, first fixef %s\n",
              paste(rounded[1:2], collapse = " "), paste(rounded[3:5], collapse = " ")))
  newton <- newton_on_devfun(form, d, rounded, n_theta = 2)
  start <- list(theta = newton$par[1:2], fixef = newton$par[-(1:2)])
}
for (tol in c(1e-13, 1e-12)) {
  cat(sprintf("\n## glmer(%s), %s in both stages, tolPwrss = %g\n", deparse(form), optimizer,
              tol))
  control <- if (optimizer == "nlminbwrap") {
    # PORT's quasi-Newton on finite-difference gradients: from a start near the optimum, far
    # fewer deviance evaluations than BOBYQA's quadratic models over 102 parameters
    glmerControl(optimizer = "nlminbwrap", tolPwrss = tol, nAGQ0initStep = is.null(start),
                 calc.derivs = is.null(start),
                 optCtrl = list(eval.max = if (is.null(start)) 1e5 else 2000, iter.max = 1e4,
                                rel.tol = 1e-13, x.tol = 1e-10))
  } else if (optimizer == "nloptwrap") {
    glmerControl(optimizer = "nloptwrap", tolPwrss = tol, nAGQ0initStep = is.null(start),
                 calc.derivs = is.null(start),
                 optCtrl = list(xtol_abs = 1e-10, ftol_abs = 1e-11, xtol_rel = 0, ftol_rel = 0,
                                maxeval = 1e6))
  } else {
    glmerControl(optimizer = "bobyqa", tolPwrss = tol, nAGQ0initStep = is.null(start),
                 calc.derivs = is.null(start), optCtrl = list(rhoend = 1e-10, maxfun = 1e6))
  }
  elapsed <- system.time(
    fit <- tryCatch(glmer(form, data = d, family = binomial, nAGQ = 1, control = control,
                          start = start),
                    error = function(e) { cat("failed:", conditionMessage(e), "\n"); NULL })
  )
  if (!is.null(fit)) break
}
cat(sprintf("glmer: elapsed %.1f s, %d evaluations\n", elapsed[["elapsed"]], fit@optinfo$feval))
print(summary(fit, correlation = FALSE), digits = 12)

theta <- getME(fit, "theta")
stopifnot(identical(sub("\\.\\(Intercept\\)$", "", names(theta)), c("category:question", "category")))
fe <- fixef(fit); names(fe) <- sub("^model", "", names(fe))
stopifnot(identical(names(fe), models))
h <- fit@optinfo$derivs$Hessian
V <- as.matrix(vcov(fit))
V_rx <- as.matrix(suppressWarnings(vcov(fit, use.hessian = FALSE)))
vcov_source <- if (isTRUE(all.equal(V, V_rx, tolerance = 0))) "rx" else "hessian"
opt <- c(unname(theta), unname(fe))
exact <- NA_real_
for (t in c(1e-13, 1e-12, 1e-11)) {
  devfun <- update(fit, devFunOnly = TRUE, control = glmerControl(tolPwrss = t, nAGQ0initStep = FALSE))
  exact <- tryCatch(devfun(opt), error = function(e) NA_real_)
  if (!is.na(exact)) break
}
# the Laplace deviance from its formula (Newton on the spherical modes to a step of 1e-12, sparse
# Cholesky log-determinant), as in make_r_binary_reference.R
laplace_formula <- function(p, tol = 1e-12) {
  Zt <- getME(fit, "Zt"); X <- getME(fit, "X"); y <- getME(fit, "y")
  Lambdat <- getME(fit, "Lambdat"); Lambdat@x <- p[1:2][getME(fit, "Lind")]
  LtZt <- Lambdat %*% Zt
  offset <- drop(X %*% p[-(1:2)])
  u <- rep(0, nrow(Zt))
  system_at <- function(u) {
    mu <- plogis(offset + drop(crossprod(LtZt, u)))
    list(mu = mu, H = tcrossprod(LtZt %*% Diagonal(x = sqrt(mu * (1 - mu)))) + Diagonal(nrow(Zt)))
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
formula_value <- laplace_formula(opt)
cov_full <- if (vcov_source == "hessian") 2 * solve(h) else NULL
cat(sprintf("theta %s\nlogLik %.15g, -2 logLik %.15g, isSingular %s, vcov from %s\n",
            paste(sprintf("%.15g", theta), collapse = " "), as.numeric(logLik(fit)),
            -2 * as.numeric(logLik(fit)), isSingular(fit), vcov_source))
cat(sprintf("Laplace deviance at the estimates: PIRLS to %g %.15g, formula %.15g\n", t, exact,
            formula_value))
if (!is.null(fit@optinfo$derivs)) {
  cat("max |finite-difference gradient|:", max(abs(fit@optinfo$derivs$gradient)), "\n")
}
cat("SE (vcov) of the first 5 models:", sqrt(diag(V))[1:5], "\n")
cat("SE (vcov, use.hessian = FALSE) of the first 5 models:", sqrt(diag(V_rx))[1:5], "\n")
result$glmm_tight <- list(
  formula = paste(deparse(form), collapse = ""), nAGQ = 1, control = switch(optimizer, nloptwrap = "nloptwrap xtol_abs 1e-10 ftol_abs 1e-11",
                   nlminbwrap = "nlminbwrap rel.tol 1e-13 x.tol 1e-10", "bobyqa rhoend 1e-10"),
  start = if (is.null(newton)) NULL else list(rounded_from = basename(start_file)),
  newton = newton, moved_from_newton = if (is.null(newton)) NULL else
    max(abs(c(unname(theta), unname(fe)) - newton$par)),
  tolPwrss = tol, fixef = as.list(fe), vcov = unname(V), vcov_source = vcov_source,
  vcov_rx = unname(V_rx),
  cov_theta = if (is.null(cov_full)) NULL else unname(cov_full[1:2, 1:2]),
  theta = setNames(as.list(unname(theta)), c("question", "category")),
  variance = list(question = theta[[1]]^2, category = theta[[2]]^2),
  loglik = as.numeric(logLik(fit)), laplace_deviance = -2 * as.numeric(logLik(fit)),
  laplace_deviance_exact = exact, exact_tolpwrss = t, laplace_deviance_formula = formula_value,
  singular = isSingular(fit), n_obs = nobs(fit), feval = fit@optinfo$feval,
  messages = as.list(fit@optinfo$conv$lme4$messages),
  optimizer_code = fit@optinfo$conv$opt, optimizer_message = fit@optinfo$message,
  optimizer_warnings = as.list(fit@optinfo$warnings),
  fd_gradient = fit@optinfo$derivs$gradient, elapsed_seconds = elapsed[["elapsed"]]
)

sink()
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"),
           outputs$json)
message("wrote ", outputs$json, " and ", outputs$txt)
