"""Peak memory of each pass of ``auto`` on the DuckDB engine, at several pool sizes (issue 14:
is memory flat in the pool's size, and which pass grows it?).

    nice -n 10 .venv/bin/python bench/engine_memory.py --rows 100000000 200000000 400000000

Each size runs in a fresh child process: the run of ``assay evaluate POOL --engine duckdb
--design auto --budget B`` (:func:`assay.engines.run.evaluate_on_engine`, gold labels looked up
from the gold file, no store) with every engine pass wrapped: its wall and CPU seconds, the
process's resident set before it and after it, and its peak (psutil, sampled every 10 ms), and
the rows brought into Python by ``_fetch_keys`` and ``_binned_counts``. Pools and gold files
are those of ``bench/engine_passes.py`` and ``bench/engine_evaluate.py`` (written if missing:
/tmp/assay_pool_<rows>.parquet, /tmp/assay_gold_<rows>.parquet).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

GIB = 2 ** 30
OUT = Path(__file__).resolve().parent / "out" / "engine_memory_s12.md"


class Peak:
    """The process's peak resident set while the block runs (psutil, every 10 ms)."""

    def __init__(self) -> None:
        self.proc, self.stop = psutil.Process(), threading.Event()

    def __enter__(self) -> "Peak":
        self.before = self.peak = self.proc.memory_info().rss
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.wait(0.01):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.after = self.proc.memory_info().rss
        self.peak = max(self.peak, self.after)


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(rows: int, budget: int, seed: int, settings: dict) -> dict:
    """One run in this process with every pass wrapped (module docstring)."""
    import duckdb
    import numpy as np

    import assay.engines.duck as duck
    from assay.engines.run import evaluate_on_engine
    eng = duck.DuckDBEngine(f"/tmp/assay_pool_{rows}.parquet")
    for key, value in settings.items():
        eng.con.execute(f"SET {key} = {value}")
    log: list[dict] = []
    depth = [0]
    fetched = [0]

    def wrap(owner: object, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*a: object, **k: object) -> object:
            depth[0] += 1
            f0 = fetched[0]
            try:
                with Peak() as p:
                    t, c = time.perf_counter(), cpu()
                    out = inner(*a, **k)
                    dt, dc = time.perf_counter() - t, cpu() - c
            finally:
                depth[0] -= 1
            log.append({"pass": label, "depth": depth[0], "wall": dt, "cpu": dc,
                        "before": p.before, "peak": p.peak, "after": p.after,
                        "rows_to_python": fetched[0] - f0})
            return out
        setattr(owner, name, timed)

    fetch_keys = eng._fetch_keys

    def counted(*a: object, **k: object) -> object:
        out = fetch_keys(*a, **k)
        fetched[0] += len(out[0])
        return out
    eng._fetch_keys = counted
    wrap(eng, "describe", "describe (validate, fingerprint)")
    wrap(eng, "_fine_bins", "fine bins (65,536)")
    wrap(eng, "keys_at_ranks", "keys at the grid's ranks")
    wrap(eng, "stratum_prefix", "hash-order prefix")
    wrap(eng, "counts_through", "counts through keys (join on bins)")
    wrap(eng, "ranks_of", "ranks of items")
    wrap(eng, "fetch", "fetch items")
    wrap(duck, "gold_lookup", "gold lookups")
    start = psutil.Process().memory_info().rss
    with Peak() as whole:
        t = time.perf_counter()
        res = evaluate_on_engine(eng, f"/tmp/assay_gold_{rows}.parquet", "auto", budget, seed)
        wall = time.perf_counter() - t
    mem = eng.con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()[0]
    f = res.estimates["f1"]
    return {"rows": rows, "passes": log, "start": start, "peak": whole.peak, "wall": wall,
            "cpu": cpu(), "duckdb_memory_after": int(mem or 0), "settings": settings,
            "duckdb": duckdb.__version__, "threads": eng.con.execute(
                "SELECT current_setting('threads')").fetchone()[0],
            "memory_limit": eng.con.execute(
                "SELECT current_setting('memory_limit')").fetchone()[0],
            "f1": [f.estimate, f.ci_low, f.ci_high], "labels": res.labels_used,
            "estimates": {m: e.estimate for m, e in res.estimates.items()},
            "np": np.__version__}


def table(runs: list[dict]) -> list[str]:
    names = list(dict.fromkeys(p["pass"] for r in runs for p in r["passes"]))
    head = "| pass | " + " | ".join(
        f"{r['rows'] / 1e8:g}×10⁸: peak GiB (Δ over before) · wall s · CPU s · rows fetched"
        for r in runs) + " |"
    lines = [head, "|---|" + "---:|" * len(runs)]
    for name in names:
        cells = []
        for r in runs:
            ps = [p for p in r["passes"] if p["pass"] == name]
            if not ps:
                cells.append("—")
                continue
            peak = max(p["peak"] for p in ps)
            grow = max(p["peak"] - p["before"] for p in ps)
            cells.append(f"{peak / GIB:.2f} (+{grow / GIB:.2f}) · "
                         f"{sum(p['wall'] for p in ps if p['depth'] == 0):.1f} · "
                         f"{sum(p['cpu'] for p in ps if p['depth'] == 0):.1f} · "
                         f"{sum(p['rows_to_python'] for p in ps if p['depth'] == 0):,}"
                         + (f" ({len(ps)} calls)" if len(ps) > 1 else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **whole run** | " + " | ".join(
        f"**{r['peak'] / GIB:.2f}** (start {r['start'] / GIB:.2f}) · {r['wall']:.1f} · "
        f"{r['cpu']:.1f} · F1 {r['f1'][0]:.4f}" for r in runs) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000_000])
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a DuckDB setting for the engine's connection (repeatable)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="append each size's figures here (JSON lines)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--from-json", type=Path, help="only print the table of these JSON lines")
    args = ap.parse_args()
    if args.from_json:
        print("\n".join(table([json.loads(x) for x in args.from_json.read_text().splitlines()])))
        return
    settings = dict(s.split("=", 1) for s in args.set)
    if args.child:
        print(json.dumps(child(args.child, args.budget, args.seed, settings)))
        return
    from rich.console import Console
    from engine_evaluate import gold_file
    from engine_passes import generate, machine
    console = Console()
    runs = []
    for rows in args.rows:
        pool = Path(f"/tmp/assay_pool_{rows}.parquet")
        if not pool.exists():
            console.print(f"generated {pool} in {generate(pool, rows, console):.1f} s")
        gold_file(pool, rows, console)
        load = os.getloadavg()
        cmd = [sys.executable, __file__, "--child", str(rows), "--budget", str(args.budget),
               "--seed", str(args.seed)] + [x for s in args.set for x in ("--set", s)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        run = json.loads(out.strip().splitlines()[-1])
        run["load"] = [load, os.getloadavg()]
        runs.append(run)
        console.print(f"{rows:,}: peak {run['peak'] / GIB:.2f} GiB, {run['wall']:.1f} s, "
                      f"load {load[0]:.1f} → {run['load'][1][0]:.1f}")
        if args.json:
            with args.json.open("a") as fh:
                fh.write(json.dumps(run) + "\n")
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")
    lines = [f"# Peak memory per pass, auto on DuckDB ({when} UTC)", "",
             "Command: `nice -n 10 .venv/bin/python bench/engine_memory.py "
             f"--rows {' '.join(map(str, args.rows))}"
             + "".join(f" --set {s}" for s in args.set) + "`  ",
             f"Machine: {machine()}; load (1, 5, 15 min) before/after each size: "
             + "; ".join(f"{r['rows']:,}: {r['load'][0][0]:.1f}/{r['load'][1][0]:.1f}"
                         for r in runs), ""] + table(runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as fh:
        fh.write("\n".join(lines) + "\n\n")
    console.print("\n".join(lines))


if __name__ == "__main__":
    main()
