"""Time each pass of the DuckDB engine over a large Parquet pool, with its peak memory.

    nice -n 10 .venv/bin/python bench/engine_passes.py --rows 100000000

Generates (once) a pool of ``--rows`` items in ``--path`` (id int64, score double, prediction
int8: score the logit of a uniform drawn from h(1, id), rounded to 1e-6 so scores tie;
prediction 1 where h(2, id)/2⁶⁴ < expit(score − 4), ≈ 3 %), then times the passes the designs
need: fingerprint and validation, a 1,000-bin histogram, the exact quantile keys of geometric
rank strata, per-stratum counts and prediction sums, a per-stratum prefix of k items in hash
order, and fetching 1,000 items by id. Peak memory: the process's resident set, sampled every
20 ms during each pass (DuckDB runs in the process). Results: bench/out/engine_passes.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from assay.engines import DuckDBEngine, geometric_bounds
from assay.engines.hashing import hash_sql

try:
    import psutil
except ImportError:     # psutil is optional: then the peak is getrusage's high-water mark
    psutil = None

OUT = Path(__file__).resolve().parent / "out" / "engine_passes.md"


class PeakRSS:
    """Highest resident set size of this process while the block runs: sampled every 20 ms
    with psutil, else getrusage's lifetime high-water mark (an upper bound)."""

    def __init__(self, every: float = 0.02) -> None:
        self.every, self.peak, self._stop = every, 0, threading.Event()
        self._proc = psutil.Process() if psutil else None

    def _rss(self) -> int:
        if self._proc is not None:
            return self._proc.memory_info().rss
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            self._stop.wait(self.every)

    def __enter__(self) -> "PeakRSS":
        self.peak = self._rss()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())


def generate(path: Path, rows: int, console: Console) -> float:
    need = rows * 16            # ~13 bytes a row in Parquet; keep a margin
    free = shutil.disk_usage(path.parent).free
    if free < 3 * need:
        raise SystemExit(f"{path.parent}: {free / 2**30:.1f} GiB free, want {3 * need / 2**30:.1f}"
                         f" GiB for {rows:,} rows: use --rows 10000000")
    u1 = f"(({hash_sql(1, 'id::UBIGINT')}) >> 11)::DOUBLE / 9007199254740992.0"
    u2 = f"(({hash_sql(2, 'id::UBIGINT')}) >> 11)::DOUBLE / 9007199254740992.0"
    sql = (f"COPY (SELECT id, score, CAST({u2} < 1 / (1 + exp(4 - score)) AS TINYINT) AS "
           f"prediction FROM (SELECT id, round(ln((u + 1e-12) / (1 - u + 1e-12)), 6) AS score "
           f"FROM (SELECT range AS id, {u1} AS u FROM range({rows})))) "
           f"TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)")
    t = time.perf_counter()
    with console.status(f"writing {rows:,} rows to {path}"):
        duckdb.connect().execute(sql)
    return time.perf_counter() - t


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu}, {os.cpu_count()} cores, {ram:.0f} GiB RAM, Python "
            f"{platform.python_version()}, DuckDB {duckdb.__version__}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000_000],
                    help="pool size(s); one table each")
    ap.add_argument("--first", type=int, default=256, help="size of the top geometric stratum")
    ap.add_argument("--k", type=int, default=64, help="prefix length per stratum")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    console = Console()
    lines = [
        "# DuckDB engine passes",
        "",
        f"Command: `nice -n 10 .venv/bin/python bench/engine_passes.py --rows "
        f"{' '.join(map(str, args.rows))} --first {args.first} --k {args.k} --seed {args.seed}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {machine()} (shared with other jobs; DuckDB default threads)  ",
        "Pools: generated Parquet in /tmp (id int64, score double rounded to 1e-6, prediction "
        "int8). The machine is shared: wall-clock times are inflated by about load/cores; CPU "
        "seconds (user + system of this process) are not.",
        "",
    ]
    for rows in args.rows:
        lines += bench_size(rows, args, console)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    console.print(f"wrote {args.out}")


def bench_size(rows: int, args: argparse.Namespace, console: Console) -> list[str]:
    path = Path(f"/tmp/assay_pool_{rows}.parquet")
    gen = None if path.exists() else generate(path, rows, console)

    eng = DuckDBEngine(str(path))
    results: list[tuple[str, float, float, int, str]] = []
    load = os.getloadavg()[0]
    state: dict = {}

    def describe() -> str:
        info = eng.describe()
        state["n"] = info.rows
        return f"{info.rows:,} rows, {info.positives:,} predicted positive, fp {info.fingerprint}"

    def histogram() -> str:
        counts, _ = eng.score_histogram(1000)
        return f"1,000 bins, fullest {counts.max():,}"

    def quantiles() -> str:
        state["bounds"] = geometric_bounds(state["n"], args.first)
        state["edges"] = eng.rank_edges(state["bounds"])
        return f"{len(state['edges'])} edges ({len(state['edges']) + 1} geometric strata, s={args.first})"

    def counts() -> str:
        seg = eng.segment_counts(state["edges"])
        state["sizes"] = seg.sizes
        ok = np.array_equal(seg.sizes, np.diff(state["bounds"]))
        return f"sizes match the rank bounds: {ok}; positives {seg.positives.sum():,}"

    def prefix() -> str:
        k = np.full(len(state["sizes"]), args.k)
        df = eng.stratum_prefix(state["edges"], k, args.seed, sizes=state["sizes"])
        state["prefix"] = df
        return f"{len(df):,} items ({args.k} per stratum)"

    def fetch() -> str:
        ids = state["prefix"][["id"]].head(1000)
        got = eng.fetch(ids)
        return f"{len(got):,} rows"

    passes = [("fingerprint + validation", describe), ("histogram, 1,000 bins", histogram),
              ("exact quantile edges (geometric strata)", quantiles),
              ("per-stratum counts + prediction sums", counts),
              (f"per-stratum hash-order prefix, k={args.k}", prefix),
              ("fetch 1,000 items by id", fetch)]
    cols = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*cols, console=console) as progress:
        task = progress.add_task("engine passes", total=len(passes))
        for name, fn in passes:
            progress.update(task, description=name)
            with PeakRSS() as mem:
                t, c = time.perf_counter(), cpu_seconds()
                note = fn()
                dt, dc = time.perf_counter() - t, cpu_seconds() - c
            results.append((name, dt, dc, mem.peak, note))
            console.log(f"{name}: {dt:.2f} s ({dc:.2f} CPU s), peak {mem.peak / 2**30:.2f} GiB "
                        f"— {note}")
            progress.advance(task)

    n = state["n"]
    size = path.stat().st_size
    lines = [
        f"## {n:,} rows",
        "",
        f"{size / 2**30:.2f} GiB Parquet ({path})" + (f", written in {gen:.1f} s" if gen else "")
        + f"; load average {load:.1f} on {os.cpu_count()} cores when the passes began.",
        "",
        "| pass | wall s | CPU s | M rows/wall s | ns CPU/row | peak RSS (GiB) | result |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, dt, dc, peak, note in results:
        lines.append(f"| {name} | {dt:.2f} | {dc:.2f} | {n / dt / 1e6:.0f} | {dc / n * 1e9:.1f} | "
                     f"{peak / 2**30:.2f} | {note} |")
    setup, setup_cpu = (sum(r[i] for r in results[:5]) for i in (1, 2))
    peak = max(r[3] for r in results)
    lines += ["", f"Set-up of a stratified design (the first five passes): {setup:.1f} s wall, "
              f"{setup_cpu:.1f} CPU s; peak RSS {peak / 2**30:.2f} GiB.", ""]
    return lines


if __name__ == "__main__":
    main()
