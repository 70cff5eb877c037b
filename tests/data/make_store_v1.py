"""Write ``store_v1.db``: a label store at schema version 1 (no annotator index) with the
service's tables, as the code of commit a782065 wrote it. Run from a worktree of that commit:

    cd /tmp && PYTHONPATH=/tmp/wt_s12_base /work/main/.venv/bin/python \\
        /work/main/tests/data/make_store_v1.py /work/main/tests/data/store_v1.db

Contents (fixed; timestamps and password hashes aside): the service's tables at Alembic
revision 0008; users root (admin), ann1, ann2, ann3 (annotators); campaign ``kb`` (dataset
``kb``, annotator ``consensus``, k = 3) with items q00-q29 queued; ann1 answers all 30 (0 on
q00-q14, 1 on the rest), ann2 1 on all 30, ann3 1 on q00-q14 (the third vote those items
need): ann1 disagrees with the majority on 15 of 30 compared labels, which the flag rule
flags; plus dataset ``other``: annotator ``gold`` 20 judged items (o00-o19, value i mod 2),
3 skipped (s0-s2), and a passive run (budget 10, seed 1) with its draws.
"""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pandas as pd

from assay.evaluation import evaluate
from assay.labels.schema import SCHEMA_VERSION
from assay.labels.store import Judgment, LabelStore, Status
from assay.ondemand import OnDemandCampaign
from assay.service import auth, migrate, queue


def main(out: Path) -> None:
    assert SCHEMA_VERSION == 1, "run this from a worktree of a782065 (schema version 1)"
    out.unlink(missing_ok=True)
    store = LabelStore(out)
    migrate.upgrade(store.engine)
    camp = OnDemandCampaign.create(store, "kb", annotator="consensus", seed=3)
    queue.set_settings(store, "kb", queue.Settings(k=3))
    auth.add_user(store.engine, "root", "admin", "correct horse battery")
    for a in ("ann1", "ann2", "ann3"):
        auth.add_user(store.engine, a, "annotator", "correct horse battery")
    items = [f"q{i:02d}" for i in range(30)]
    queue.enqueue(store, "kb", items, 3)
    for i, item in enumerate(items):
        queue.vote(store, camp.row, "ann1", item, 0 if i < 15 else 1)
    for item in items:
        queue.vote(store, camp.row, "ann2", item, 1)
    for item in items[:15]:
        queue.vote(store, camp.row, "ann3", item, 1)
    store.record("other", [Judgment(f"o{i:02d}", "gold", i % 2) for i in range(20)]
                 + [Judgment(f"s{i}", "gold", None, Status.SKIPPED) for i in range(3)])
    pool = pd.DataFrame({"id": [f"o{i:02d}" for i in range(20)], "prediction": [1, 0] * 10})
    evaluate(pool, {f"o{i:02d}": i % 2 for i in range(20)}, design="passive", budget=10,
             seed=1, store=store, dataset="other", annotator="gold")
    store.engine.dispose()
    con = sqlite3.connect(out)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("VACUUM")
    con.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
