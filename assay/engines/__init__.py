"""Engines: what the statistical core asks of a pool, on whatever holds it (docs/engines.md).

``MemoryEngine`` (numpy/pandas, the reference) is imported here; ``DuckDBEngine`` loads DuckDB
only when first used (``from assay.engines import DuckDBEngine``), so a missing duckdb gives a
clear ImportError only to those who ask for it.
"""
from __future__ import annotations

from typing import Any

from assay.engines.base import Engine, OrderKeys, PoolInfo, SegmentCounts, geometric_bounds
from assay.engines.hashing import HASH_SPEC, hash64
from assay.engines.manifest import RunManifest
from assay.engines.memory import MemoryEngine


def __getattr__(name: str) -> Any:
    if name == "DuckDBEngine":
        from assay.engines.duck import DuckDBEngine
        return DuckDBEngine
    if name == "SparkEngine":
        from assay.engines.spark import SparkEngine
        return SparkEngine
    raise AttributeError(f"module 'assay.engines' has no attribute {name!r}")


__all__ = ["DuckDBEngine", "Engine", "HASH_SPEC", "MemoryEngine", "OrderKeys", "PoolInfo",
           "RunManifest", "SegmentCounts", "SparkEngine", "geometric_bounds", "hash64"]
