"""Assumption-free intervals for stratified, two-phase samples (``assay stratified estimate``;
issue 11, must-have 3): what the labels allow, exactly, whatever the estimator's approximation.

Notation of :mod:`assay.core.two_phase`: stratum l holds M_l documents, of which a first-phase
SRS of n_l = Σ_cg N'_lcg is assessed; within each cell c (the assessed label), an SRS of
n_lc documents is adjudicated (their true label known), of which n_lcg return the run-pattern g
and y_lcg are relevant. Let P be a property of a document (relevant and returned by run A: a
true positive; assessable, not relevant and returned by A: a false positive; relevant and not
returned by A: a false negative; relevant: the yield).

* **Second phase.** Given the n_lcg adjudicated documents of pattern g, they are an SRS of the
  N'_lcg assessed ones of that pattern and cell, so the count of P among those N'_lcg lies in
  the exact hypergeometric bounds [K⁻, K⁺] of :mod:`assay.core.bounds` at error a (a cell
  adjudicated in full gives its count; one never adjudicated, [0, N'_lcg]).
* **First phase.** The assessed documents are an SRS of n_l from M_l, so with X_l the count of
  P among them, X_l ∈ [Σ_cg K⁻_lcg, Σ_cg K⁺_lcg], the stratum's count lies in
  [hypergeometric_lower(M_l, n_l, Σ K⁻), hypergeometric_upper(M_l, n_l, Σ K⁺)] (monotone in x,
  so the outer bound of X is the safe one). Where the documents of each run-pattern are known
  per stratum (``pattern_sizes`` M_lg: the run-pattern strata of ``assay stratified design``,
  where M_lg = M_l for the stratum's own pattern), a property confined to patterns A takes the
  same bounds within the sub-population Σ_{g∈A} M_lg and its n_lA assessed documents (given
  n_lA, an SRS of it); otherwise every one of the M_l − n_l unassessed documents may hold P.

Each measure is monotone in the counts: recall TP/(TP + FN), precision TP/(TP + FP), F1
2TP/(2TP + FP + FN) increase with TP and decrease with FP and FN; so its interval is
[f(TP⁻, FP⁺, FN⁺), f(TP⁺, FP⁻, FN⁻)], and with each side's error (1 − c)/2 split evenly over
that side's non-trivial bounds (Bonferroni), each side fails with probability ≤ (1 − c)/2 —
coverage ≥ c with no normal, posterior-shape or model approximation. The assessor's labels
enter only where the sample says they are the truth: every document of a naive sample (the
assessments taken as correct). A cell with no adjudication, which the estimator fills from the
assessments (:func:`assay.core.double_sampling.build_counts`; the report's notes name it, and
``SampleCounts.filled`` records it), is bounded by [0, N'_lcg] here: what its documents hold is
unknown. Unassessable documents are taken as the sample shows them, as the estimator does.

>>> import numpy as np
>>> from assay.core.double_sampling import build_counts
>>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]),
...                   run_ids=("A",))
>>> b = run_bounds(sc, 0.95, pattern_sizes=pattern_strata_sizes(sc, np.array([0, 1])))
>>> [round(x, 3) for x in b["A"]["recall"]], [round(x, 3) for x in b["A"]["precision"]]
([0.051, 1.0], [0.75, 0.75])
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from assay.core.bounds import count_bounds_each
from assay.core.two_phase import RUN_MEASURES, SampleCounts

__all__ = ["count_bounds", "pattern_strata_sizes", "primary_assumes", "run_bounds",
           "topics_bounds", "unadjudicated", "yield_bounds"]


def primary_assumes(double_sampling: bool, method: str = "jeffreys",
                    unadjudicated: tuple[int, int] = (0, 0)) -> str:
    """What the primary interval of ``assay stratified estimate`` assumes (issue 11,
    must-have 3), beside the assumption-free one of this module; ``unadjudicated`` = (cells,
    documents) of :func:`unadjudicated`, named when there are any.

    >>> primary_assumes(False, "wald")
    'the assessments are correct (nothing here corrects assessor error); the normal (delta-method) approximation of the interval'
    >>> "the assessments of the 61 document(s) in the 2 cell(s)" in primary_assumes(
    ...     True, "wald", (2, 61))
    True
    """
    how = ("Jeffreys' small-count approximation of the interval (checked by simulation: "
           "bench/double_sampling.py)" if method == "jeffreys" else
           "the normal (delta-method) approximation of the interval")
    if not double_sampling:
        return f"the assessments are correct (nothing here corrects assessor error); {how}"
    cells, docs = unadjudicated
    if cells:
        return ("double sampling: the adjudications are correct, each stratum's adjudicated "
                "documents of an assessed label stand for all its documents of that label, and "
                f"the assessments of the {docs:,} document(s) in the {cells} cell(s) with no "
                f"adjudication are correct (see notes; the assumption-free interval does not "
                f"take them so); {how}")
    return ("double sampling: the adjudications are correct, and each stratum's adjudicated "
            "documents of an assessed label stand for all its documents of that label (a cell "
            f"with none takes its assessments as correct: see notes); {how}")


def unadjudicated(sc: SampleCounts) -> tuple[int, int]:
    """(cells, documents): the stratum × assessed-label cells with no adjudication, which the
    estimator fills from the assessments (``SampleCounts.filled``), and their documents.

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> z = np.array([0, 0, 1, 1])
    >>> unadjudicated(build_counts([10, 90], np.array([[True], [False]]), z, z,
    ...                            np.array([1, 0, 0, 1]), true=np.array([1, -2, 0, 1])))
    (1, 1)
    """
    if sc.filled is None:
        return 0, 0
    filled = np.asarray(sc.filled, bool)
    return int(filled.sum()), int(np.asarray(sc.first).sum(axis=-1)[filled].sum())


def pattern_strata_sizes(sc: SampleCounts, stratum_pattern: np.ndarray) -> np.ndarray:
    """M_lg for run-pattern strata: stratum l holds only the pattern ``stratum_pattern[l]``
    (an index into ``sc.patterns``'s rows; every stratum has an assessed document, so its
    pattern is among them).

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
    ...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]))
    >>> pattern_strata_sizes(sc, np.array([0, 1])).tolist()
    [[4, 0], [0, 96]]
    """
    M = np.asarray(sc.population, np.int64)
    G = np.asarray(sc.patterns).shape[0]
    sp = np.asarray(stratum_pattern, np.int64)
    return np.where(sp[:, None] == np.arange(G)[None, :], M[:, None], 0)


def _partial(n: np.ndarray, size: np.ndarray) -> np.ndarray:
    return (n > 0) & (n < size)


def count_bounds(sc: SampleCounts, cells: np.ndarray, groups: np.ndarray, relevant: bool,
                 pattern_sizes: np.ndarray | None = None) -> tuple[int, Callable]:
    """The bounds on the count of a property in the collection (module docstring): the
    property is ``relevant`` (or assessable and not relevant) among cells ``cells`` (C,) and
    run-patterns ``groups`` (G,) (boolean masks); ``pattern_sizes`` (L, G), M_lg where known.
    Returns (k, at): k the non-trivial bounds it takes, and ``at(a)`` → (low, high) with each
    at error a.

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
    ...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]))
    >>> k, at = count_bounds(sc, np.ones(3, bool), np.array([True, True]), True)
    >>> k, at(0.025)
    (1, (3.0, 59.0))
    """
    first = np.asarray(sc.first, np.int64)
    second = np.asarray(sc.second, np.int64)
    rel = np.asarray(sc.relevant, np.int64)
    if sc.filled is not None:             # filled from the assessments: nothing adjudicated
        blank = np.asarray(sc.filled, bool)[..., None]
        second, rel = np.where(blank, 0, second), np.where(blank, 0, rel)
    x = rel if relevant else second - rel
    keep = np.asarray(cells, bool)[:, None] & np.asarray(groups, bool)[None, :]
    x = np.where(keep, x, 0)
    N2, n2 = np.where(keep, first, 0), np.where(keep, second, 0)
    if pattern_sizes is None:
        M = np.asarray(sc.population, np.int64)
        n1 = first.sum(axis=(1, 2))
    else:
        M = np.asarray(pattern_sizes, np.int64)[:, np.asarray(groups, bool)].sum(axis=1)
        n1 = first[:, :, np.asarray(groups, bool)].sum(axis=(1, 2))
    k = int(_partial(n2, N2).sum() + _partial(n1, M).sum())

    def at(a: float) -> tuple[float, float]:
        lo2, hi2 = count_bounds_each(N2, n2, x, x, a)                # second phase, per cell
        lo1, hi1 = count_bounds_each(M, n1, lo2.sum(axis=(1, 2)), hi2.sum(axis=(1, 2)), a)
        return float(lo1.sum()), float(hi1.sum())
    return k, at


def _f(tp: float, fp: float, fn: float, alpha: float, empty: float) -> float:
    """F_α = TP / (α(TP + FP) + (1 − α)(TP + FN)); 0/0 gives ``empty``."""
    den = alpha * (tp + fp) + (1.0 - alpha) * (tp + fn)
    return min(max(tp / den, 0.0), 1.0) if den > 0 else empty


def run_bounds(sc: SampleCounts, confidence: float = 0.95, error_share: float = 1.0,
               pattern_sizes: np.ndarray | None = None
               ) -> dict[str, dict[str, tuple[float, float]]]:
    """run id → measure → the assumption-free (low, high) of recall, precision and F1
    (module docstring); ``error_share`` scales each side's error (1 − c)/2 (the share of a
    mean over topics, :func:`topics_bounds`); ``pattern_sizes`` as :func:`count_bounds`.

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
    ...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]),
    ...                   run_ids=("A",))
    >>> [round(x, 3) for x in run_bounds(sc)["A"]["precision"]]   # strata of unknown patterns
    [0.045, 0.985]
    """
    side = (1.0 - confidence) / 2.0 * error_share
    assessable = np.asarray(sc.assessable, bool)
    every = np.ones(len(assessable), bool)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for j, run in enumerate(sc.run_ids):
        mine = np.asarray(sc.patterns, bool)[:, j]
        tp = count_bounds(sc, every, mine, True, pattern_sizes)
        fp = count_bounds(sc, assessable, mine, False, pattern_sizes)
        fn = count_bounds(sc, every, ~mine, True, pattern_sizes)
        res = {}
        for m, alpha in RUN_MEASURES.items():
            used = [tp] + ([fp] if alpha > 0 else []) + ([fn] if alpha < 1 else [])
            a = side / max(sum(k for k, _ in used), 1)
            t = tp[1](a)
            p = fp[1](a) if alpha > 0 else (0.0, 0.0)
            n = fn[1](a) if alpha < 1 else (0.0, 0.0)
            res[m] = (_f(t[0], p[1], n[1], alpha, 0.0), _f(t[1], p[0], n[0], alpha, 1.0))
        out[run] = res
    return out


def yield_bounds(sc: SampleCounts, confidence: float = 0.95, error_share: float = 1.0
                 ) -> tuple[float, float]:
    """The assumption-free bounds on the yield (the relevant documents of the collection).

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
    ...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]))
    >>> yield_bounds(sc)
    (3.0, 59.0)
    """
    every = np.ones(len(sc.assessable), bool)
    k, at = count_bounds(sc, every, np.ones(np.asarray(sc.patterns).shape[0], bool), True)
    return at((1.0 - confidence) / 2.0 * error_share / max(k, 1))


def topics_bounds(topics: list[SampleCounts], confidence: float = 0.95,
                  pattern_sizes: list[np.ndarray | None] | None = None
                  ) -> dict[str, dict[str, tuple[float, float]]]:
    """The assumption-free interval of each run's mean over topics: every topic's bounds at
    error (1 − c)/(2T) per side, averaged (all T hold together with probability ≥ c per side,
    and the mean is monotone in each topic's measure). Runs missing from a topic are left out.

    >>> import numpy as np
    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([4, 96], np.array([[True], [False]]), np.array([0] * 4 + [1] * 4),
    ...                   np.array([0] * 4 + [1] * 4), np.array([1, 1, 1, 0, 0, 0, 0, 0]),
    ...                   run_ids=("A",))
    >>> ps = pattern_strata_sizes(sc, np.array([0, 1]))
    >>> topics_bounds([sc, sc], pattern_sizes=[ps, ps])["A"]["precision"]
    (0.75, 0.75)
    """
    sizes = pattern_sizes or [None] * len(topics)
    per = [run_bounds(sc, confidence, 1.0 / len(topics), ps) for sc, ps in zip(topics, sizes)]
    runs = set.intersection(*(set(p) for p in per))
    return {r: {m: (float(np.mean([p[r][m][0] for p in per])),
                    float(np.mean([p[r][m][1] for p in per]))) for m in RUN_MEASURES}
            for r in sorted(runs)}
