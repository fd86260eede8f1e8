"""evalbars: which ranking claims do item-level benchmark data support?"""

__version__ = "0.1.0"
