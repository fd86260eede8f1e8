# Shared by the R reference scripts (tests only): their command line, output files and versions.
#
# Each script finds this file beside itself and sources it:
#   script_dir <- local({ ... })   # the folder of the running script
#   source(file.path(script_dir, "reference_common.R"))

# The command line `<long.csv> <name> [key=value ...]`: list(csv_path, name, extra), with each
# value a number where it reads as one. Keys named in `options` are returned in `extra` too; the
# script takes them out.
reference_args <- function(usage) {
  args <- commandArgs(trailingOnly = TRUE)
  if (length(args) < 2) stop(usage)
  extra <- list()
  for (kv in args[-(1:2)]) {
    parts <- strsplit(kv, "=", fixed = TRUE)[[1]]
    value <- paste(parts[-1], collapse = "=")
    number <- suppressWarnings(as.numeric(value))
    extra[[parts[1]]] <- if (is.na(number)) value else number
  }
  list(csv_path = args[1], name = args[2], extra = extra)
}

# r_output/<name><suffix>.txt and .json beside the script; the console is copied into the .txt.
reference_outputs <- function(script_dir, name, suffix = "") {
  out_dir <- file.path(script_dir, "r_output")
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  paths <- list(txt = file.path(out_dir, paste0(name, suffix, ".txt")),
                json = file.path(out_dir, paste0(name, suffix, ".json")))
  sink(paths$txt, split = TRUE)
  paths
}

# list(r = "4.2.2", <package> = "<version>", ...) for the packages given.
package_versions <- function(packages) {
  c(list(r = paste(R.version$major, R.version$minor, sep = ".")),
    setNames(lapply(packages, function(p) as.character(packageVersion(p))), packages))
}
