"""assay: label-efficient, unbiased evaluation with honest confidence intervals.

``assay.evaluate`` and ``assay.load_pool`` are loaded on first use, so that light commands
(``scorer2``) start fast.
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["EvaluationResult", "Pool", "evaluate", "load_pool"]

_LAZY = {"evaluate": "assay.evaluation", "EvaluationResult": "assay.evaluation",
         "load_pool": "assay.formats.pool", "Pool": "assay.formats.pool"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
