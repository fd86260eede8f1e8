"""stats.logistic."""
