"""Unit tests of evalbars.readings."""
