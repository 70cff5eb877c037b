"""Spark engine: not built yet (issue 14, "Spark is an extra"). It will be constructed from the
user's existing ``SparkSession`` without changing its configuration, compute the hash of
:mod:`assay.engines.hashing` with Spark SQL's 64-bit arithmetic (``bigint`` multiplication
wraps in non-ANSI mode; with ``spark.sql.ansi.enabled`` it raises, so the products go through
``decimal(38,0)`` masked to 64 bits, as DuckDB's go through UHUGEINT), and pass the shipped test
vectors (tests/engines/hash_vectors.csv)."""
from __future__ import annotations

from typing import Any


class SparkEngine:
    """Placeholder: raises until the Spark engine is written."""

    name = "spark"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("the Spark engine is not written yet (issue 14); use "
                                  "DuckDBEngine or MemoryEngine")


__all__ = ["SparkEngine"]
