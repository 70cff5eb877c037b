"""The engines' shared fixtures: one local Spark session for every Spark test of a process."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local Spark session (one core, one shuffle partition, no UI; the JVM's quick C1
    compiler and no whole-stage code generation: the tests' pools are tiny, so compiling
    costs more than it saves), stopped at the end.
    pyspark and Java are test dependencies (the ``test`` extra, .ci/run): missing, the Spark
    tests fail with this message rather than skip."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        pytest.fail("pyspark is not installed: pip install -e '.[test]' (or '.[spark]'); "
                    "the Spark engine's tests need it and Java 17+")
    session = (SparkSession.builder.master("local[1]").appName("assay-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.default.parallelism", "1")
               .config("spark.driver.memory", "1g")
               .config("spark.driver.extraJavaOptions",
                       "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .config("spark.sql.codegen.wholeStage", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
