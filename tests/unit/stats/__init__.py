"""Unit tests of evalbars.stats."""
