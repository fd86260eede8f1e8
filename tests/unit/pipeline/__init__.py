"""Unit tests of evalbars.pipeline."""
