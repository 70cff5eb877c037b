"""``assay evaluate`` end to end on the DuckDB engine (or Spark local, ``--engine spark``) over
large Parquet pools: wall and CPU time and peak resident memory of the whole command.

    nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows 10000000 100000000
    nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows 10000000 --designs auto \
        --engine spark --out bench/out/engine_evaluate_spark.md
    nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows 100000000 --designs auto \
        --engines duckdb,spark --out bench/out/engine_evaluate_spark_1e8.md

``--engines duckdb,spark`` runs each command on every engine named, one after the other (never
at the same time), and adds a side-by-side table: each engine's figures and the ratio of each
to the first engine's, with whether the estimates are identical (same seed, same items).

Pools are the generated ones of ``bench/engine_passes.py`` (written there if missing:
/tmp/assay_pool_<rows>.parquet). A gold file /tmp/assay_gold_<rows>.parquet (id, label) is
written next to each: label 1 where h(3, id)/2⁶⁴ < expit(score − 3), so the truth is known
(computed by DuckDB outside the timed command). Each command,

    assay evaluate POOL --engine duckdb --labels GOLD --design D --budget B --seed S --json OUT

runs as a child process: its CPU seconds are the kernel's (``os.wait4``, DuckDB's threads
included), its peak RSS (with its children's: Spark's JVM) is sampled every 20 ms (psutil).
Results: bench/out/engine_evaluate.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import psutil
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_passes import generate, machine  # noqa: E402

from assay.engines.hashing import hash_sql  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "engine_evaluate.md"


U3 = f"(({hash_sql(3, 'id::UBIGINT')}) >> 11)::DOUBLE / 9007199254740992.0"
LABEL = f"CAST({U3} < 1 / (1 + exp(3 - score)) AS TINYINT)"     # the gold label of a row


def agreement(a: object, b: object) -> str:
    """``identical``, or every text field equal and the numbers within a relative difference
    (OASIS's prior and importance's Σsd are sums each engine adds in its own order), or
    ``differ``."""
    worst = 0.0

    def walk(x: object, y: object) -> bool:
        nonlocal worst
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(walk(x[k], y[k]) for k in x)
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(walk(u, v) for u, v in zip(x, y))
        if isinstance(x, float) and isinstance(y, float):
            worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1e-300))
            return True
        return x == y
    if not walk(a, b):
        return "differ"
    return "identical" if worst == 0.0 else f"equal to {worst:.0e} (relative)"


def gold_file(pool: Path, rows: int, console: Console) -> Path:
    gold = Path(f"/tmp/assay_gold_{rows}.parquet")
    if not gold.exists():
        t = time.perf_counter()
        with console.status(f"writing {gold}"):
            duckdb.connect().execute(
                f"COPY (SELECT id, {LABEL} AS label FROM read_parquet('{pool}')) TO '{gold}' "
                f"(FORMAT parquet, ROW_GROUP_SIZE 1000000)")
        console.print(f"wrote {gold} in {time.perf_counter() - t:.1f} s")
    return gold


def truth(pool: Path, gold: Path) -> dict[str, float]:
    """The true measures, from the pool and the gold file's definition (``LABEL``) in one
    scan: a join of the two files on id needs a hash table of every row (10^9 rows: more
    memory than this machine has)."""
    tp, p, y = duckdb.connect().execute(
        f"SELECT sum(prediction * {LABEL}), sum(prediction), sum({LABEL}) FROM "
        f"read_parquet('{pool}')").fetchone()
    return {"precision": tp / p, "recall": tp / y, "f1": 2 * tp / (p + y)}


def run(cmd: list[str]) -> tuple[float, float, float, int]:
    """(wall s, user s, system s, peak RSS bytes) of a child process (user s with the CPU of
    its own children as last sampled: Spark's JVM). The peak is the child's
    resident set sampled every 20 ms (psutil): Linux's ``ru_maxrss`` of a child carries the
    parent's high-water mark across fork + exec, and this parent has run DuckDB queries."""
    env = {**os.environ, "ASSAY_PROGRESS": "1"}
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    peak, kid_cpu, stop = [0], {}, threading.Event()

    def sample() -> None:
        p = psutil.Process(proc.pid)
        while not stop.wait(0.02):
            try:
                rss, kids = p.memory_info().rss, p.children(recursive=True)
            except psutil.Error:
                return
            for c in kids:              # Spark: the JVM too (a child gone meanwhile: skipped)
                try:
                    rss += c.memory_info().rss
                    t = c.cpu_times()   # the JVM's CPU, never reaped by the child, is missing
                    kid_cpu[c.pid] = t.user + t.system     # from wait4's: last seen here
                except psutil.Error:
                    continue
            peak[0] = max(peak[0], rss)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, ru = os.wait4(proc.pid, 0)
    stop.set()
    th.join()
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}")
    return wall, ru.ru_utime + sum(kid_cpu.values()), ru.ru_stime, peak[0]


def split_times(pool: Path, gold: Path, design: str, budget: int, seed: int,
                engine: str = "duckdb") -> dict:
    """In this process: set-up (the design's passes and its first hash-order sample: the
    construction and the first draw) against the cost of the next item (``draw``, its store key
    and ``update``, amortised over the other draws; the label lookups and the annotator's time
    excluded). Labels are looked up from the gold file as the run does it, for the items
    fetched so far, and timed apart (``gold s``); an adaptive design's later batches (their
    planning, and any pass they make) count in the next-item cost."""
    from assay.designs.settings import settings_from_options
    from assay.engines.run import GoldLabels, engine_design
    eng, stop = _engine(engine, pool)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        des = engine_design(eng, settings_from_options(design, None), budget, seed)
        first = des.draw()
        t1, c1 = time.perf_counter(), time.process_time()
        src, labels, spent = GoldLabels(str(gold), ["id"]), {}, [0.0]

        def label(i: int) -> int:
            if i not in labels:
                t = time.perf_counter()
                items = des.sampler.items
                rows = [j for j in range(len(items)) if j not in labels]   # as the run: a file
                rows += [] if i in rows else [i]
                labels.update(zip(rows, src.values(items.iloc[rows][["id"]], []).tolist()))
                spent[0] += time.perf_counter() - t
            return labels[i]

        t2 = time.perf_counter()
        des.update(first, label(first.index))
        n = 1
        while n < budget and not des.exhausted():
            d = des.draw()
            des.sampler.key(d.index)
            des.update(d, label(d.index))
            n += 1
        t3 = time.perf_counter()
    finally:
        stop()
    return {"setup": t1 - t0, "setup_cpu": c1 - c0, "gold": spent[0],
            "next_us": 1e6 * (t3 - t2 - spent[0]) / max(n - 1, 1),
            "passes": des.sampler.passes, "rank_passes": getattr(des, "rank_passes", 0)}


def split_row(pool: Path, engine: str, design: str, s: dict) -> str:
    return (f"| {pool.stat().st_size / 2**30:.2f} GiB | {engine} | {design} | {s['setup']:.1f} | "
            f"{s['setup_cpu']:.1f} | {s['gold']:.1f} | {s['next_us']:.0f} | {s['passes']} | "
            f"{s['rank_passes']} |")


def _engine(name: str, pool: Path) -> tuple[object, object]:
    """The engine over ``pool`` and a function that releases it (Spark: a local session as
    the command line makes it, stopped after)."""
    if name == "spark":
        from assay.engines.spark_local import spark_pool
        ctx = spark_pool(str(pool))
        return ctx.__enter__(), lambda: ctx.__exit__(None, None, None)
    from assay.engines import DuckDBEngine
    return DuckDBEngine(str(pool)), lambda: None


def side_by_side(engines: list[str], runs: dict, splits: dict) -> list[str]:
    """One row per (rows, design, engine): the end-to-end and split figures, each with its
    ratio to the first engine's, and whether the estimates equal the first engine's."""
    base = engines[0]
    out = ["", f"Side by side (ratio = engine / {base}; estimates compared field by field: "
           "estimate, interval, every metric):", "",
           "| rows | design | engine | wall s | CPU s | peak RSS GiB | set-up s | next item µs | "
           f"wall ratio | CPU ratio | memory ratio | set-up ratio | next-item ratio | "
           f"estimates against {base}'s |",
           "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for (rows, design), by in runs.items():
        b, bs = by.get(base), splits.get((rows, design), {}).get(base)
        for eng in engines:
            r, sp = by.get(eng), splits.get((rows, design), {}).get(eng)
            if r is None:
                continue

            def ratio(x: float | None, y: float | None) -> str:
                return "—" if x is None or not y else f"{x / y:.2f}"
            same = "—" if b is None else agreement(r["estimates"], b["estimates"])
            out.append(
                f"| {rows:,} | {design} | {eng} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                f"{r['peak'] / 2**30:.2f} | {sp['setup'] if sp else float('nan'):.1f} | "
                f"{sp['next_us'] if sp else float('nan'):.0f} | "
                f"{ratio(r['wall'], b and b['wall'])} | {ratio(r['cpu'], b and b['cpu'])} | "
                f"{ratio(r['peak'], b and b['peak'])} | "
                f"{ratio(sp and sp['setup'], bs and bs['setup'])} | "
                f"{ratio(sp and sp['next_us'], bs and bs['next_us'])} | {same} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100_000_000])
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--designs", nargs="+", default=["auto", "stratified", "passive",
                                                       "importance"])
    ap.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb",
                    help="spark: a local session started by the command (local[*])")
    ap.add_argument("--engines", default=None,
                    help="comma-separated engines run one after the other (e.g. duckdb,spark), "
                         "with a side-by-side table of ratios to the first; overrides --engine")
    ap.add_argument("--split-only", action="store_true",
                    help="only the in-process set-up / next-item table")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    engines = args.engines.split(",") if args.engines else [args.engine]
    if any(e not in ("duckdb", "spark") for e in engines):
        ap.error(f"--engines: expected names among duckdb,spark, got {args.engines}")
    console = Console(stderr=True)
    assay = str(Path(sys.executable).parent / "assay")
    names = {"duckdb": "DuckDB", "spark": "Spark (local)"}
    eng_arg = f" --engines {args.engines}" if args.engines else f" --engine {args.engine}"
    lines = [
        f"# `assay evaluate` on the {' and '.join(names[e] for e in engines)} "
        f"engine{'s' if len(engines) > 1 else ''}",
        "",
        f"Command: `nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows "
        f"{' '.join(map(str, args.rows))} --budget {args.budget} --designs "
        f"{' '.join(args.designs)} --seed {args.seed}{eng_arg}"
        f"{' --split-only' if args.split_only else ''}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {machine()} (shared with other jobs; wall clock inflated by about "
        "load/cores, CPU seconds are not)  ",
        f"Each row: one `assay evaluate POOL --engine E --labels GOLD --design D "
        "--budget "
        f"{args.budget} --seed {args.seed} --store S --json OUT` in a fresh process and a fresh "
        "label store (every label new): set-up passes, the hash-order sample, gold labels "
        "looked up for the drawn items, estimates, outputs. Engines run one after the other, "
        "never at the same time. CPU = user + system of the child "
        "(DuckDB's threads included; Spark: the JVM's CPU as last sampled); peak RSS = the "
        "child's resident set with its children's (the JVM) sampled every 20 ms.",
        "",
        "| rows | Parquet GiB | engine | design | load | wall s | CPU s | ns CPU/row | "
        "peak RSS GiB | F1 estimate [95% CI] | true F1 | precision est. / true | "
        "recall est. / true |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    runs: dict = {}
    for rows in args.rows:
        pool = Path(f"/tmp/assay_pool_{rows}.parquet")
        if not pool.exists():
            t = time.perf_counter()
            generate(pool, rows, console)
            console.print(f"generated {pool} in {time.perf_counter() - t:.1f} s")
        gold = gold_file(pool, rows, console)
        true = truth(pool, gold)
        for design in ([] if args.split_only else args.designs):
            for engine in engines:
                with tempfile.TemporaryDirectory() as tmp:
                    out = Path(tmp) / "out.json"
                    cmd = [assay, "evaluate", str(pool), "--engine", engine, "--labels",
                           str(gold), "--design", design, "--budget", str(args.budget),
                           "--seed", str(args.seed), "--store", str(Path(tmp) / "s.db"),
                           "--json", str(out)]
                    load = os.getloadavg()[0]
                    wall, user, system, peak = run(cmd)
                    doc = json.loads(out.read_text())
                e = doc["estimates"]
                runs.setdefault((rows, design), {})[engine] = {
                    "wall": wall, "cpu": user + system, "peak": peak, "estimates": e}
                f = e["f1"]
                row = (f"| {rows:,} | {pool.stat().st_size / 2**30:.2f} | {engine} | {design} | "
                       f"{load:.1f} | {wall:.1f} | {user + system:.1f} | "
                       f"{1e9 * (user + system) / rows:.0f} | "
                       f"{peak / 2**30:.2f} | {f['estimate']:.4f} [{f['ci_low']:.4f}, "
                       f"{f['ci_high']:.4f}] | {true['f1']:.4f} | "
                       f"{e['precision']['estimate']:.4f} / {true['precision']:.4f} | "
                       f"{e['recall']['estimate']:.4f} / {true['recall']:.4f} |")
                console.print(row)
                lines.append(row)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text("\n".join(lines) + "\n")
    lines += ["", "Set-up against next-item cost (in one process, `split_times`): set-up = the "
              "design's passes and its first hash-order sample (construction and first draw); "
              "gold = the label lookups (the items fetched, as the run does it); next "
              "item = `draw()`, its store key and `update`, amortised over the other draws "
              "(an adaptive design's later batches and their passes included). Load before: "
              f"{os.getloadavg()[0]:.1f}.", "",
              "| pool | engine | design | set-up s | set-up CPU s (this process's threads; "
              "not the JVM's) | gold s | next item µs | prefix passes | rank passes |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    splits: dict = {}
    for rows in args.rows:
        pool, gold = Path(f"/tmp/assay_pool_{rows}.parquet"), Path(f"/tmp/assay_gold_{rows}.parquet")
        for design in args.designs:
            for engine in engines:
                sp = split_times(pool, gold, design, args.budget, args.seed, engine)
                splits.setdefault((rows, design), {})[engine] = sp
                row = split_row(pool, engine, design, sp)
                console.print(f"{rows:,}: {row}")
                lines.append(row.replace("| ", f"| {rows:,} rows, ", 1))
                args.out.write_text("\n".join(lines) + "\n")
    if len(engines) > 1 and runs:
        lines += side_by_side(engines, runs, splits)
        args.out.write_text("\n".join(lines) + "\n")
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
