"""Unit tests of evalbars.cli."""
