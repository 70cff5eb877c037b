"""``assay evaluate`` end to end on the DuckDB engine (or Spark local, ``--engine spark``) over
large Parquet pools: wall and CPU time and peak resident memory of the whole command.

    nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows 10000000 100000000
    nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows 10000000 --designs auto \
        --engine spark --out bench/out/engine_evaluate_spark.md

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


def gold_file(pool: Path, rows: int, console: Console) -> Path:
    gold = Path(f"/tmp/assay_gold_{rows}.parquet")
    if not gold.exists():
        u3 = f"(({hash_sql(3, 'id::UBIGINT')}) >> 11)::DOUBLE / 9007199254740992.0"
        with console.status(f"writing {gold}"):
            duckdb.connect().execute(
                f"COPY (SELECT id, CAST({u3} < 1 / (1 + exp(3 - score)) AS TINYINT) AS label "
                f"FROM read_parquet('{pool}')) TO '{gold}' (FORMAT parquet, "
                f"ROW_GROUP_SIZE 1000000)")
    return gold


def truth(pool: Path, gold: Path) -> dict[str, float]:
    tp, p, y = duckdb.connect().execute(
        f"SELECT sum(p.prediction * g.label), sum(p.prediction), sum(g.label) FROM "
        f"read_parquet('{pool}') p JOIN read_parquet('{gold}') g USING (id)").fetchone()
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
                engine: str = "duckdb") -> str:
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
    return (f"| {pool.stat().st_size / 2**30:.2f} GiB | {engine} | {design} | {t1 - t0:.1f} | "
            f"{c1 - c0:.1f} | "
            f"{spent[0]:.1f} | {1e6 * (t3 - t2 - spent[0]) / max(n - 1, 1):.0f} | "
            f"{des.sampler.passes} | {getattr(des, 'rank_passes', 0)} |")


def _engine(name: str, pool: Path) -> tuple[object, object]:
    """The engine over ``pool`` and a function that releases it (Spark: a local session as
    the command line makes it, stopped after)."""
    if name == "spark":
        from assay.engines.spark_local import spark_pool
        ctx = spark_pool(str(pool))
        return ctx.__enter__(), lambda: ctx.__exit__(None, None, None)
    from assay.engines import DuckDBEngine
    return DuckDBEngine(str(pool)), lambda: None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100_000_000])
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--designs", nargs="+", default=["auto", "stratified", "passive",
                                                       "importance"])
    ap.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb",
                    help="spark: a local session started by the command (local[*])")
    ap.add_argument("--split-only", action="store_true",
                    help="only the in-process set-up / next-item table")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    console = Console(stderr=True)
    assay = str(Path(sys.executable).parent / "assay")
    lines = [
        f"# `assay evaluate` on the {'Spark (local)' if args.engine == 'spark' else 'DuckDB'} "
        "engine",
        "",
        f"Command: `nice -n 10 .venv/bin/python bench/engine_evaluate.py --rows "
        f"{' '.join(map(str, args.rows))} --budget {args.budget} --designs "
        f"{' '.join(args.designs)} --seed {args.seed} --engine {args.engine}"
        f"{' --split-only' if args.split_only else ''}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {machine()} (shared with other jobs; wall clock inflated by about "
        "load/cores, CPU seconds are not)  ",
        f"Each row: one `assay evaluate POOL --engine {args.engine} --labels GOLD --design D "
        "--budget "
        f"{args.budget} --seed {args.seed} --store S --json OUT` in a fresh process and a fresh "
        "label store (every label new): set-up passes, the hash-order sample, gold labels "
        "looked up for the drawn items, estimates, outputs. CPU = user + system of the child "
        "(DuckDB's threads included); peak RSS = the child's resident set sampled every 20 ms.",
        "",
        "| rows | Parquet GiB | design | load | wall s | CPU s | ns CPU/row | peak RSS GiB | "
        "F1 estimate [95% CI] | true F1 | precision est. / true | recall est. / true |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for rows in args.rows:
        pool = Path(f"/tmp/assay_pool_{rows}.parquet")
        if not pool.exists():
            generate(pool, rows, console)
        gold = gold_file(pool, rows, console)
        true = truth(pool, gold)
        for design in ([] if args.split_only else args.designs):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "out.json"
                cmd = [assay, "evaluate", str(pool), "--engine", args.engine, "--labels",
                       str(gold), "--design", design, "--budget", str(args.budget), "--seed",
                       str(args.seed), "--store", str(Path(tmp) / "s.db"), "--json", str(out)]
                load = os.getloadavg()[0]
                wall, user, system, peak = run(cmd)
                doc = json.loads(out.read_text())
            e = doc["estimates"]
            f = e["f1"]
            row = (f"| {rows:,} | {pool.stat().st_size / 2**30:.2f} | {design} | {load:.1f} | "
                   f"{wall:.1f} | {user + system:.1f} | {1e9 * (user + system) / rows:.0f} | "
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
    for rows in args.rows:
        pool, gold = Path(f"/tmp/assay_pool_{rows}.parquet"), Path(f"/tmp/assay_gold_{rows}.parquet")
        for design in args.designs:
            row = split_times(pool, gold, design, args.budget, args.seed, args.engine)
            console.print(f"{rows:,}: {row}")
            lines.append(row.replace("| ", f"| {rows:,} rows, ", 1))
            args.out.write_text("\n".join(lines) + "\n")
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
