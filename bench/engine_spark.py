"""DuckDB and Spark local side by side on one Parquet pool: each engine pass, a stratified
design's set-up and its next-item cost, and the peak memory of the process and its children.

    nice -n 10 .venv/bin/python bench/engine_spark.py --rows 10000000

Generates (once) the pool of bench/engine_passes.py (id int64, score the rounded logit of a
uniform from h(1, id), ≈ 3 % predicted positive) in ``--dir``, then on each engine: describe
(validation and fingerprint), a 10,000-bin histogram (CSF), the exact quantile keys of 64
geometric strata, their counts, a 64-item prefix per stratum; then a stratified design
(``engine_design``, CSF, Neyman, budget 1,000): set-up = construction and first draw, next
item = the other 999 draws' time / 999 (labels are a function of the key: no label I/O). The
same seed must draw the same items on both (checked). Peak memory: resident set of this
process plus its children (the JVM), sampled every 50 ms from /proc. Spark: a session made
here, ``local[2]``, 4 shuffle partitions, UI off, driver memory 4g.
Results: bench/out/engine_spark.md.
"""
from __future__ import annotations

import argparse
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from assay.designs.settings import settings_from_options
from assay.engines import DuckDBEngine, OrderKeys, geometric_bounds
from assay.engines.run import engine_design

OUT = Path(__file__).resolve().parent / "out" / "engine_spark.md"


def _tree_rss(pid: int) -> int:
    """RSS (bytes) of ``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            ppid, pages = int(parts[1]), int(parts[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
        rss[int(d)] = pages * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += children.get(p, [])
    return total


class Peak:
    def __init__(self) -> None:
        self.peak, self._stop = 0, threading.Event()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            self._stop.wait(0.05)

    def __enter__(self) -> "Peak":
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def generate(path: Path, rows: int) -> None:
    from engine_passes import generate as gen   # the same pool as engine_passes.py
    from rich.console import Console
    gen(path, rows, Console())


def run(engine, first: int, k: int, seed: int) -> tuple[list[tuple[str, float]], float, list]:
    """(pass, seconds) rows, peak bytes, the design's first 1,000 draws' item ids."""
    times: list[tuple[str, float]] = []
    with Peak() as peak:
        def timed(name, f):
            t = time.perf_counter()
            out = f()
            times.append((name, time.perf_counter() - t))
            return out
        info = timed("describe (validate, fingerprint)", engine.describe)
        timed("score histogram, 10,000 bins", lambda: engine.score_histogram(10_000))
        edges = timed(f"quantile keys, {first} geometric strata",
                      lambda: engine.rank_edges(geometric_bounds(info.rows, first)))
        counts = timed("stratum counts", lambda: engine.segment_counts(edges))
        timed(f"prefix, {k} items a stratum",
              lambda: engine.stratum_prefix(edges, np.full(len(edges) + 1, k), seed,
                                            sizes=counts.sizes))
        t = time.perf_counter()
        des = engine_design(engine, settings_from_options("stratified", None), 1000, seed)
        d = des.draw()
        times.append(("stratified design set-up (strata, allocation, first draw)",
                      time.perf_counter() - t))
        draws = [d]
        t = time.perf_counter()
        for _ in range(999):
            draws.append(des.draw())
        times.append(("next item (mean of 999 draws), µs", (time.perf_counter() - t) / 999 * 1e6))
        items = des.sampler.items
        ids = [int(items["id"].iat[x.index]) for x in draws]
    return times, peak.peak, ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/assay_bench"))
    ap.add_argument("--first", type=int, default=64)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"pool_{args.rows}.parquet"
    if not path.exists():
        generate(path, args.rows)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    duck = DuckDBEngine(str(path))
    d_start = time.perf_counter() - t
    d_times, d_peak, d_ids = run(duck, args.first, args.k, args.seed)
    from pyspark.sql import SparkSession
    t = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("assay-bench")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    from assay.engines.spark import SparkEngine
    eng = SparkEngine(spark, str(path))
    s_start = time.perf_counter() - t
    s_times, s_peak, s_ids = run(eng, args.first, args.k, args.seed)
    version = spark.version
    spark.stop()
    load1 = os.getloadavg()[0]
    same = d_ids == s_ids
    lines = ["# DuckDB and Spark local on one Parquet pool", "",
             f"`nice -n 10 .venv/bin/python bench/engine_spark.py --rows {args.rows}` — "
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores shared "
             f"(load average {load0:.1f} at the start, {load1:.1f} at the end), Spark "
             f"{version} local[2]. Pool: {args.rows:,} rows, {path.stat().st_size / 2**20:.0f} "
             "MiB of Parquet (bench/engine_passes.py's).", "",
             f"Engine start: DuckDB {d_start:.2f} s; Spark session (JVM) and engine "
             f"{s_start:.1f} s.", "",
             "| pass | DuckDB (s) | Spark (s) | Spark / DuckDB |", "|---|---:|---:|---:|"]
    for (name, a), (_, b) in zip(d_times, s_times):
        lines.append(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.1f} |")
    lines += ["", f"Peak resident memory (process and children): DuckDB "
                  f"{d_peak / 2**30:.2f} GiB, Spark {s_peak / 2**30:.2f} GiB (the JVM, driver "
                  "memory 4g, and this process).", "",
              f"The same 1,000 items in the same order on both engines: {same}."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
