"""CPU and wall time of one ``assay.service.flags.check`` call on a store like the end state of
``bench/service_load.py --labels 10000 --annotators 50``: 10,000 human labels of 50 annotators
on 5,000 items (two each, 90% agreement, so nobody is flagged), campaign annotator
``consensus``; 50 warm-up calls, then 500 calls over the 50 annotators. The code measured is
whatever ``assay`` imports, so two commits compare side by side from two worktrees:

    PYTHONPATH=/tmp/wt_before nice -n 10 .venv/bin/python bench/flag_check.py
    PYTHONPATH=/tmp/wt_after nice -n 10 .venv/bin/python bench/flag_check.py
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import assay
from assay.labels import schema
from assay.labels.store import Judgment, LabelStore
from assay.ondemand import OnDemandCampaign
from assay.service import flags, migrate


def main(calls: int = 500) -> None:
    store = LabelStore(Path(tempfile.mkdtemp(prefix="assay-flag-check-")) / "m.db")
    migrate.upgrade(store.engine)
    row = OnDemandCampaign.create(store, "c", annotator="consensus").row
    rng = np.random.default_rng(0)
    js = []
    for i in range(5000):
        a, b = rng.choice(50, 2, replace=False)
        v = int(rng.integers(0, 2))
        js += [Judgment(f"it{i:06d}", f"a{a}", v),
               Judgment(f"it{i:06d}", f"a{b}", v if rng.random() < 0.9 else 1 - v)]
    store.record("c", js)
    for k in range(50):
        flags.check(store, row, f"a{k}")
    wall, cpu = time.perf_counter(), time.process_time()
    for k in range(calls):
        assert not flags.check(store, row, f"a{k % 50}")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{Path(assay.__file__).parents[1]} (label store schema v{schema.SCHEMA_VERSION}): "
          f"flags.check {wall / calls * 1e3:.2f} ms wall, {cpu / calls * 1e3:.2f} ms CPU "
          f"per call ({calls} calls)")


if __name__ == "__main__":
    main()
