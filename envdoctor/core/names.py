"""Distribution names: how pip compares them, and which ones provide ``import triton``.

A module of its own so that a check module can name them without loading the typed stack
(``envdoctor list`` imports every check module). ``_interpreter_query`` keeps its own copy of
:func:`canonical`: it runs in another interpreter, with the standard library only.
"""

from __future__ import annotations

import re

# Distributions that provide `import triton`: PyPI's, the PyTorch nightly/ROCm/XPU builds, the
# Windows fork. torch pins one of them in Requires-Dist; two installed at once overwrite each
# other's files (B-catalog: "pytorch-triton + triton conflict").
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu", "triton-windows", "triton-nightly")


def canonical(name: str) -> str:
    """A distribution's name as pip compares it: runs of ``-``, ``_`` and ``.`` made one ``-``,
    lower case (PEP 503's normalisation, what ``packaging.utils.canonicalize_name`` returns).
    Written out here rather than imported: ``packaging.utils`` loads ``packaging.tags`` and
    ``logging``, which ``envdoctor list`` and ``triage`` need not pay for."""
    return _SEPARATORS.sub("-", name).lower()


_SEPARATORS = re.compile(r"[-_.]+")
