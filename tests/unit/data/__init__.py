"""Unit tests of evalbars.data."""
