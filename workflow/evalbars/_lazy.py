"""Lazy imports of heavy dependencies (pandas, scipy submodules).

Every Snakemake job is a fresh interpreter, and most jobs use a fraction of the
package: a simulation setting needs numpy only, yet importing pandas and
scipy.stats costs about a second per job on a small machine. Modules therefore
bind those dependencies with :func:`load`, which returns the module at once and
executes it on first attribute access, the pattern of the Scientific Python
ecosystem's SPEC 1 (lazy loading) and of the ``importlib`` documentation's
"Implementing lazy imports" recipe.

References
----------
.. [1] Scientific Python SPEC 1, "Lazy Loading of Submodules and Functions",
   https://scientific-python.org/specs/spec-0001/
.. [2] Python documentation, ``importlib.util.LazyLoader``.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["load"]


def load(name: str) -> ModuleType:
    """Module ``name``, imported now if it already is, else on first attribute access.

    A missing module raises :class:`ModuleNotFoundError` here, at import time of
    the caller, not later. Parent packages are imported at once (``"scipy.special"``
    imports ``scipy``, which is light); only ``name`` itself is deferred.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        # What a normal import does, so `from scipy import special` finds this module.
        setattr(sys.modules[parent], child, module)
    return module
