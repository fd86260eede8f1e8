"""Unit tests of evalbars.jobs."""
