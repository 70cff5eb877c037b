"""Write tests/data/store_v0_1_0.db with release 0.1.0 (a script, run once; see README.md).

    cd /tmp && PYTHONPATH=/tmp/assay-base /work/main/.venv/bin/python \\
        /work/main/tests/data/make_store_v0_1_0.py

1. ``assay evaluate`` (the command line) on the restaurant pool: dataset ``restaurant``, budget
   120, seed 5 (default design: auto);
2. ``assay.evaluate`` on the same pool with a label function that skips (returns None) every
   item whose key's CRC-32 is divisible by 3: dataset ``skips``, budget 40, seed 5, so the store
   also holds skips (label -1).
"""
from __future__ import annotations

import sqlite3
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden import cases
from golden.record import launcher, provenance

STORE = Path(__file__).resolve().parent / "store_v0_1_0.db"


def main() -> None:
    import assay
    print(provenance())
    if STORE.exists():
        raise SystemExit(f"{STORE} exists: remove it first")
    pool, gold = cases.er_frames("restaurant")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pool.to_parquet(folder / "restaurant_pool.parquet")
        gold.to_parquet(folder / "restaurant_gold.parquet")
        p = cases.run(launcher("assay", "assay.cli:main") + [
            "evaluate", "restaurant_pool.parquet", "--labels", "restaurant_gold.parquet",
            "--store", str(STORE), "--dataset", "restaurant", "--budget", "120", "--seed", "5"],
            folder)
        print(p.stdout.decode(), p.stderr.decode())
        if p.returncode != 0:
            raise SystemExit(p.returncode)
    truth = {f"{a}\t{b}": int(v) for a, b, v in gold.itertuples(index=False)}

    def label(key: str) -> int | None:
        return None if zlib.crc32(key.encode()) % 3 == 0 else truth[key]

    res = assay.evaluate(pool, label, budget=40, seed=5, store=str(STORE), dataset="skips")
    print("skips:", res.labels_used, "labels,", len(res.draws), "draws")
    con = sqlite3.connect(STORE)
    for row in con.execute("SELECT dataset, COUNT(*), SUM(label = -1) FROM labels "
                           "GROUP BY dataset ORDER BY dataset"):
        print("labels", row)
    for table in ("labels", "runs", "draws"):
        print(table, con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    con.close()


if __name__ == "__main__":
    main()
