"""Unit tests of evalbars.render."""
