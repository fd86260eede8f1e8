"""Unit tests of evalbars.studies."""
