"""A measurement tool, not a feature: run ``assay.evaluate`` on the adversarial bench's path and
keep, per run, the stratified sample each design-based estimate of ``assay.core.measures.
f_measures`` was computed from (strata of the draws, stratum sizes, labels, predictions, the
prior) and the estimates printed. Other interval constructions can then be tried on the same
runs offline, in seconds, against the intervals of the code that made them (session 22:
``bench/zero_fn_prototype.py``; the counts interval was chosen this way).

    .venv/bin/python bench/capture_samples.py non_monotone 2000 1000 1200 stratified [DIR]

writes DIR/cap_<world>_<design>_<budget>_<s0>_<s1>.pkl (DIR default /tmp/assay_samples).
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT.parent)]

import adversarial as adv  # noqa: E402
import assay  # noqa: E402
import assay.core.measures as measures  # noqa: E402
from assay.core.totals import StratifiedSample  # noqa: E402

ORIGINAL = measures.f_measures
CAPTURED: list[dict] = []


def _capture(sample, labels, predictions, alpha, confidence=0.95, measure=None, *args, **kwargs):
    out = ORIGINAL(sample, labels, predictions, alpha, confidence, measure, *args, **kwargs)
    if isinstance(sample, StratifiedSample):
        prior = kwargs.get("prior")
        CAPTURED.append(dict(alpha=alpha, stratum=np.asarray(sample.stratum),
                             sizes=np.asarray(sample.sizes), labels=np.asarray(labels),
                             pred=np.asarray(predictions),
                             prior=None if prior is None else np.asarray(prior)))
    return out


def main() -> None:
    name, budget, s0, s1, design = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                    int(sys.argv[4]), sys.argv[5])
    out = Path(sys.argv[6] if len(sys.argv) > 6 else "/tmp/assay_samples")
    out.mkdir(parents=True, exist_ok=True)
    measures.f_measures = _capture
    adv._fast_history()
    w, pool, gold = adv._world(name, 11)
    rows = []
    for s in range(s0, s1):
        CAPTURED.clear()
        res = assay.evaluate(pool, gold, design=design, budget=budget, seed=s, dataset=name)
        caps = {c["alpha"]: c for c in CAPTURED}     # the last call per measure
        rows.append(dict(seed=s, caps=caps, ests={m: res.estimates[m]
                                                  for m in ("precision", "recall", "f1")}))
    path = out / f"cap_{name}_{design}_{budget}_{s0}_{s1}.pkl"
    with open(path, "wb") as fh:
        pickle.dump(dict(world=w.frame, rows=rows), fh)
    print(path)


if __name__ == "__main__":
    main()
