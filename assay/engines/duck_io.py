"""The DuckDB engine's helpers beside the engine: the watcher that reports a query's progress,
opening a pool named on the command line, and reading a gold file's labels for given items.
(All of assay's SQL for DuckDB lives in :mod:`assay.engines.duck`, its mixins and here.)
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import numpy as np
import pandas as pd

from assay.engines.hashing import quote
from assay.errors import AssayInputError


class _Watch:
    """Reports a query's progress (DuckDB's ``query_progress``, polled every 0.2 s from a
    thread) to ``report(what, fraction)``, and ``report(what, None)`` when it ends."""

    def __init__(self, con: Any, report: Callable[[str, float | None], None], what: str) -> None:
        self.con, self.report, self.what = con, report, what
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                f = float(self.con.query_progress())
            except Exception:  # noqa: BLE001 - progress is best effort
                return
            if f >= 0:
                self.report(self.what, min(f, 100.0) / 100.0)

    def __enter__(self) -> "_Watch":
        self.report(self.what, 0.0)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.report(self.what, None)


def open_pool(spec: str, id_columns: Sequence[str] | None = None) -> Any:
    """The DuckDB engine of a pool named on the command line: a Parquet file or glob
    (``pairs/*.parquet``), or a table of a DuckDB database file as ``FILE.duckdb:TABLE``
    (opened read-only)."""
    from assay.engines.duck import DuckDBEngine
    db, sep, table = spec.rpartition(":")
    if sep and db.lower().endswith((".duckdb", ".db", ".ddb")) and table:
        if not Path(db).exists():
            raise AssayInputError(db, "file not found", expected="a DuckDB database file")
        try:
            con = duckdb.connect(db, read_only=True)
        except duckdb.Error as exc:
            raise AssayInputError(db, "cannot be opened: " + " ".join(str(exc).split())
                                  ) from None
        return DuckDBEngine(table, connection=con, id_columns=id_columns)
    return DuckDBEngine(spec, id_columns=id_columns)


def gold_lookup(path: str, ids: pd.DataFrame, label: str = "label",
                connection: Any = None) -> np.ndarray:
    """The ``label`` of each row of ``ids`` in a gold file (Parquet or CSV/TSV, read by
    DuckDB where it lies), −1 where the file has none; ids are compared as text (as the label
    store keys them). Several labels of one item (an annotator column): their majority, −1 on
    a tie."""
    con = connection if connection is not None else duckdb.connect()
    src = "'" + str(path).replace("'", "''") + "'"
    reader = (f"read_parquet({src})" if str(path).lower().endswith((".parquet", ".pq"))
              else f"read_csv({src}, all_varchar = true)")
    cols = list(ids.columns)
    try:
        have = {str(r[0]) for r in con.execute(f"DESCRIBE SELECT * FROM {reader}").fetchall()}
    except duckdb.Error as exc:
        raise AssayInputError(str(path), "cannot be read: " + " ".join(str(exc).split())
                              ) from None
    for c in cols + [label]:
        if c not in have:
            raise AssayInputError(str(path), f"missing column '{c}'",
                                  expected=f"the pool's id columns and '{label}'")
    want = ids.astype(str).reset_index(drop=True)
    want["__w"] = np.arange(len(want), dtype=np.int64)
    name = f"__assay_gold_{id(want)}"
    con.register(name, want)
    try:
        on = " AND ".join(f"CAST(g.{quote(c)} AS VARCHAR) = w.{quote(c)}" for c in cols)
        rows = con.execute(f"SELECT w.__w, sum(CASE WHEN TRY_CAST(g.{quote(label)} AS INTEGER) = 1 "
                           f"THEN 1 ELSE -1 END) FROM {name} w JOIN {reader} g ON {on} "
                           f"WHERE TRY_CAST(g.{quote(label)} AS INTEGER) IN (0, 1) "
                           f"GROUP BY w.__w").fetchall()
    finally:
        con.unregister(name)
    out = np.full(len(want), -1, dtype=np.int64)
    for w, vote in rows:
        out[int(w)] = 1 if vote > 0 else (0 if vote < 0 else -1)
    return out


__all__ = ["gold_lookup", "open_pool"]
