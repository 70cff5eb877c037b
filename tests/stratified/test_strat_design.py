"""Stratification by run-return pattern, allocation, and stratified SRS without replacement."""
import numpy as np
import pytest

from assay.stratified import allocate_by_rule, draw_sample, stratify_by_labels, stratify_by_runs


def _toy():
    docs = [f"d{i}" for i in range(20)]
    runs = {"A": {"d0", "d1", "d2", "d3"}, "B": {"d2", "d3", "d4"}, "C": {"d3", "d5"}}
    return docs, runs


def test_one_stratum_per_pattern_bottom_last():
    docs, runs = _toy()
    st = stratify_by_runs(docs, runs)
    assert st.run_ids == ("A", "B", "C")
    # present patterns: 111 (d3), 110 (d2), 100 (d0, d1), 010 (d4), 001 (d5), 000 (rest)
    assert st.names == ("111", "110", "100", "010", "001", "000")
    assert st.sizes.tolist() == [1, 1, 2, 1, 1, 14]
    assert st.names[st.bottom] == "000"
    assert st.patterns[st.names.index("110")].tolist() == [True, True, False]
    assert st.names[st.codes[docs.index("d4")]] == "010"


def test_user_strata():
    st = stratify_by_labels(["a", "b", "c"], ["x", "y", "x"])
    assert st.names == ("x", "y") and st.sizes.tolist() == [2, 1] and st.patterns is None


def test_allocations():
    sizes = np.array([100, 300, 600, 99000])
    prop = allocate_by_rule(sizes, 1000, "proportional")
    assert prop.sum() == 1000 and np.all(prop >= 2)
    ney = allocate_by_rule(sizes, 1000, "neyman", prior=[0.9, 0.5, 0.3, 0.001])
    w = sizes * np.sqrt(np.array([0.9, 0.5, 0.3, 0.001]) * (1 - np.array([0.9, 0.5, 0.3, 0.001])))
    assert ney.sum() == 1000
    assert np.allclose(ney, 1000 * w / w.sum(), atol=1.01)
    legal = allocate_by_rule(sizes, 1000, "legal", bottom=3, bottom_share=0.4)
    assert legal.sum() == 1000 and legal[3] <= 400
    rate = legal / sizes
    assert rate[0] > rate[1] > rate[2] > rate[3]          # small strata sampled at higher rates
    capped = allocate_by_rule(np.array([5, 3, 1000]), 500, "proportional")
    assert capped.tolist()[:2] == [5, 3] or capped[0] <= 5
    assert np.all(capped <= [5, 3, 1000]) and capped.sum() == 500
    with pytest.raises(ValueError):
        allocate_by_rule(sizes, 5, "proportional")                 # below the minimum of 2 per stratum
    with pytest.raises(ValueError):
        allocate_by_rule(sizes, 10, "nope")


def test_sampling_reproducible_without_replacement():
    docs = [f"d{i}" for i in range(1000)]
    runs = {"A": set(docs[:100]), "B": set(docs[50:200])}
    st = stratify_by_runs(docs, runs)
    n = allocate_by_rule(st.sizes, 120, "legal", bottom=st.bottom)
    s1 = draw_sample(docs, st, n, np.random.default_rng(7))
    s2 = draw_sample(docs, st, n, np.random.default_rng(7))
    s3 = draw_sample(docs, st, n, np.random.default_rng(8))
    assert s1.docnos == s2.docnos and s1.docnos != s3.docnos
    assert len(set(s1.docnos)) == len(s1.docnos) == 120
    for d, s, p in zip(s1.docnos, s1.strata, s1.inclusion_probability):
        l = st.names.index(s)
        assert st.codes[docs.index(d)] == l
        assert p == pytest.approx(n[l] / st.sizes[l])
    with pytest.raises(TypeError):
        draw_sample(docs, st, n, 7)


def test_inclusion_frequencies_match_probabilities():
    """2,000 seeded draws: each document's inclusion frequency is within 4 binomial SDs of
    n_l/N_l (a family of 60 documents, so 4 SD keeps the family-wise false alarm below 0.4%)."""
    docs = [f"d{i}" for i in range(60)]
    st = stratify_by_runs(docs, {"A": set(docs[:10])})
    n = np.array([3, 5])
    rng = np.random.default_rng(11)
    reps = 2000
    hits = np.zeros(60)
    for _ in range(reps):
        s = draw_sample(docs, st, n, rng)
        hits[[int(d[1:]) for d in s.docnos]] += 1
    p = np.where(np.arange(60) < 10, 3 / 10, 5 / 50)
    sd = np.sqrt(p * (1 - p) / reps)
    assert np.all(np.abs(hits / reps - p) <= 4 * sd)


def test_legal_cap_yields_when_other_strata_are_exhausted():
    sizes = np.array([30, 40, 50, 10000])
    n = allocate_by_rule(sizes, 600, "legal", bottom=3, bottom_share=0.5)
    assert n.sum() == 600 and n[:3].tolist() == [30, 40, 50] and n[3] == 480
