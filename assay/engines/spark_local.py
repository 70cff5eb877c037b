"""A local Spark session for ``assay evaluate POOL --engine spark`` (docs/engines.md).

A program or notebook passes its own ``SparkSession`` to :class:`~assay.engines.spark.
SparkEngine` and the engine leaves it as it is. The command line has no session of its own, so
on ``--engine spark`` (and only then) it starts one in local mode — ``local[*]``, or the
master in ``ASSAY_SPARK_MASTER``; driver memory ``ASSAY_SPARK_MEMORY`` (default 2g); no UI, no
console progress, one shuffle partition per core, log level FATAL — and stops it when the run
ends. A missing pyspark or Java is one line naming what to install, not a traceback.

>>> import os
>>> missing_java({"PATH": "/nonexistent"}) is not None
True
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from assay.errors import AssayInputError

OPTION = "--engine spark"


def missing_java(env: Mapping[str, str] | None = None) -> str | None:
    """Why Java cannot be started (None when a ``java`` is on PATH or under JAVA_HOME)."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return None
    if shutil.which("java", path=env.get("PATH", "")):
        return None
    return ("Java was not found (no java on PATH" +
            (f", none under JAVA_HOME={home}" if home else ", JAVA_HOME unset") + ")")


def local_session() -> Any:
    """A local SparkSession (module docstring); :class:`AssayInputError` when pyspark or Java
    is missing or the JVM does not start."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise AssayInputError(OPTION, "pyspark is not installed",
                              expected="pip install 'assay[spark]' (pyspark 3.5+) and "
                                       "Java 17+") from None
    why = missing_java()
    if why:
        raise AssayInputError(OPTION, why, expected="Java 17+ (e.g. apt-get install "
                                                    "default-jre-headless)")
    master = os.environ.get("ASSAY_SPARK_MASTER", "local[*]")
    try:
        spark = (SparkSession.builder.master(master).appName("assay-evaluate")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", str(max(1, os.cpu_count() or 1)))
                 .config("spark.driver.memory", os.environ.get("ASSAY_SPARK_MEMORY", "2g"))
                 .getOrCreate())
    except Exception as exc:  # noqa: BLE001 - the JVM fails in many ways; one line
        detail = " ".join(str(exc).split())[:200]
        raise AssayInputError(OPTION, f"Spark did not start: {detail}",
                              expected="Java 17+ and a working pyspark") from None
    # our own session: Spark's log stays quiet (its code generator logs a whole stack trace
    # at ERROR when a generated method grows past the JVM's 64 KiB limit — the hash's long
    # expressions do — and then runs the same plan interpreted); failures still raise
    spark.sparkContext.setLogLevel("FATAL")
    return spark


def active_session() -> Any:
    """The process's active SparkSession, if any (None without pyspark)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


@contextmanager
def spark_pool(spec: str, id_columns: Sequence[str] | None = None) -> Iterator[Any]:
    """A :class:`~assay.engines.spark.SparkEngine` over the Parquet file, glob or folder
    ``spec``: in the process's active session when there is one (used as it is, left
    running: a program that calls the CLI's entry point in-process), else in a local session
    started here and stopped on exit."""
    spark = active_session()
    owned = spark is None
    if owned:
        spark = local_session()
    try:
        from assay.engines.spark import SparkEngine
        yield SparkEngine(spark, spec, id_columns=id_columns)
    finally:
        if owned:
            spark.stop()


__all__ = ["active_session", "local_session", "missing_java", "spark_pool"]
