"""The per-document library path used by the CLI: stratify → allocate_by_rule → draw → assess →
allocate_by_rule adjudications → draw them → estimate, repeated on one fixed collection."""
import numpy as np
import pytest

from assay.stratified import (NOT_ADJUDICATED, allocate_by_rule, allocate_adjudication, build_counts,
                              draw_adjudication, draw_sample, estimate, stratify_by_runs)


@pytest.mark.slow
def test_document_level_pipeline_simulation():
    """20,000 documents, two runs, 4% relevant (bottom stratum ≈ 1%), θ = .04, φ = .10;
    1,500 assessments, 300 adjudications, 400 seeded repetitions of the whole pipeline.
    Claims: corrected yield unbiased (within 3 MC SEs); corrected recall 95% CIs cover in
    0.95 ± 0.0327 (3 binomial SDs at 400) for both runs (measured 0.940 / 0.928); naive recall CIs cover in under 5%
    (measured 0 / 0). With 2% relevance, 800 assessments and 200 adjudications (≈2–3 relevant
    documents expected in the bottom sample) it measured 0.87–0.89: the sparse-bottom
    limitation in docs/stratified.md.
    The claims above are the delta-method (logit) interval's; the default interval of
    ``estimate`` is now the small-count Jeffreys one (issue 11), asserted to cover at least
    0.95 − 0.0327 (conservative: measured 0.988 / 0.990)."""
    rng = np.random.default_rng(99)
    D = 20000
    docs = [f"d{i}" for i in range(D)]
    rel = rng.random(D) < 0.04
    A = rng.random(D) < np.where(rel, 0.6, 0.01)
    B = rng.random(D) < np.where(rel, 0.4, 0.005)
    rel |= (A & B & (rng.random(D) < 0.8))
    fal = np.where(rel, rng.random(D) > 0.1, rng.random(D) < 0.04).astype(int)
    fal[rng.random(D) < 0.01] = -1
    st = stratify_by_runs(docs, {"A": {docs[i] for i in np.flatnonzero(A)},
                                 "B": {docs[i] for i in np.flatnonzero(B)}})
    true_recall = np.array([(A & rel & (fal >= 0)).sum(), (B & rel & (fal >= 0)).sum()])
    true_recall = true_recall / (rel & (fal >= 0)).sum()
    true_yield = (rel & (fal >= 0)).sum()
    n_l = allocate_by_rule(st.sizes, 1500, "legal", bottom=st.bottom, bottom_share=0.7)
    index = {d: i for i, d in enumerate(docs)}
    pat_of_stratum = st.patterns
    reps = 400
    cover, cover_naive, yields = np.zeros((reps, 2)), np.zeros((reps, 2)), np.zeros(reps)
    cover_jeffreys = np.zeros((reps, 2))
    for b in range(reps):
        s = draw_sample(docs, st, n_l, rng)
        idx = np.array([index[d] for d in s.docnos])
        sidx = np.array([st.names.index(x) for x in s.strata])
        f = fal[idx]
        sc1 = build_counts(st.sizes, pat_of_stratum, sidx, sidx, f, run_ids=("A", "B"),
                           strata=st.names)
        alloc = allocate_adjudication(sc1, 300, run=0)
        cell = np.where(f == 1, 2, np.where(f == 0, 1, 0))
        pick = draw_adjudication(sidx, cell, alloc, rng)
        true = np.full(len(idx), NOT_ADJUDICATED)
        true[pick] = rel[idx[pick]].astype(int)
        sc = build_counts(st.sizes, pat_of_stratum, sidx, sidx, f, true, run_ids=("A", "B"),
                          strata=st.names)
        ds, nv = estimate(sc, method="logit"), estimate(sc.naive(), method="logit")
        jf = estimate(sc)
        yields[b] = ds.yield_.estimate
        for k, run in enumerate(("A", "B")):
            iv, nvv = ds.runs[run]["recall"], nv.runs[run]["recall"]
            cover[b, k] = iv.ci_low <= true_recall[k] <= iv.ci_high
            j = jf.runs[run]["recall"]
            cover_jeffreys[b, k] = j.ci_low <= true_recall[k] <= j.ci_high
            cover_naive[b, k] = nvv.ci_low <= true_recall[k] <= nvv.ci_high
    assert abs(yields.mean() - true_yield) <= 3 * yields.std() / np.sqrt(reps)
    assert np.all(np.abs(cover.mean(axis=0) - 0.95) <= 0.0327), cover.mean(axis=0)
    assert np.all(cover_jeffreys.mean(axis=0) >= 0.95 - 0.0327), cover_jeffreys.mean(axis=0)
    assert np.all(cover_naive.mean(axis=0) < 0.05), cover_naive.mean(axis=0)
