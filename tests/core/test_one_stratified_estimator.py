"""Double sampling is the two-phase case of the core's stratified estimator: on a one-phase
sample (every assessed document's label taken as known), the TREC estimator of seed 004 and the
design-based F_α of the ER designs give the same recall, precision and F1 and the same standard
errors — both are :func:`assay.core.totals.two_phase_total`."""
from __future__ import annotations

import numpy as np
import pytest

from assay.core.double_sampling import build_counts
from assay.core.measures import f_measures
from assay.core.totals import StratifiedSample
from assay.core.two_phase import estimate_arrays
from assay.stratified import draw_sample, stratify_by_runs


@pytest.mark.parametrize("seed", [3, 17])
def test_trec_and_er_estimators_agree_on_a_one_phase_sample(seed):
    rng = np.random.default_rng(seed)
    n = 4000
    docs = [f"d{i}" for i in range(n)]
    rel = rng.random(n) < 0.04
    ret = {"A": rng.random(n) < np.where(rel, 0.7, 0.03),
           "B": rng.random(n) < np.where(rel, 0.4, 0.01)}
    st = stratify_by_runs(docs, {r: {docs[i] for i in np.flatnonzero(m)} for r, m in ret.items()})
    alloc = np.minimum(st.sizes, [40, 60, 60, 200][:st.count])
    s = draw_sample(docs, st, alloc, rng)
    idx = np.array([int(d[1:]) for d in s.docnos])
    h = np.array([st.stratum_names.index(x) for x in s.strata])
    label = rel[idx].astype(int)
    trec = estimate_arrays(build_counts(st.sizes, st.patterns, h, h, label, run_ids=("A", "B")))
    sample = StratifiedSample(stratum=h, sizes=st.sizes)
    preds = np.stack([ret["A"][idx], ret["B"][idx]], axis=1).astype(int)
    for measure, alpha in (("recall", 0.0), ("precision", 1.0), ("f1", 0.5)):
        er = f_measures(sample, label, preds, alpha, interval="delta")
        for k in range(2):
            assert er[k].estimate == pytest.approx(trec[measure][k], rel=1e-12)
            assert er[k].std_error ** 2 == pytest.approx(trec[f"{measure}_var"][k], rel=1e-9)
