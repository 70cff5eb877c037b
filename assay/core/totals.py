"""Estimated population totals and their variances from weighted draws, vectorised over columns.

Every estimator of assay is a function of totals: a measure F_α = Y/X is a ratio of the totals of
y_i = ℓ_i ŷ_i and x_i = αŷ_i + (1 − α)ℓ_i, and its variance is the variance of the total of a
linearised variable. ``values`` may be a vector (one system) or an (n draws × m systems) matrix:
one call then gives m totals and m variances.

* :class:`WithReplacementSample` — Hansen–Hurwitz: Ŷ = (1/T) Σ_t v_t / q_t,
  Var̂(Ŷ) = s²(v/q) / T (Hansen & Hurwitz 1943; Särndal, Swensson & Wretman 1992, §2.9); with
  the draws' items (``ordered``), Raj's ordered estimator over them: e_t = L_{t−1} +
  1[i_t new]·v_t/q_t, L_{t−1} the sum of v over the items labelled before draw t,
  Ŷ = ē (Raj 1956, JASA 51: 269–284, for draws with replacement), with Hansen–Hurwitz's
  variance (:meth:`WithReplacementSample.total`).
* :class:`StratifiedSample` — stratified expansion of simple random samples without
  replacement: Ŷ = Σ_h N_h ȳ_h, Var̂(Ŷ) = Σ_h N_h² (1 − n_h/N_h) s_h² / n_h (Cochran 1977,
  eq. 5.6). A stratum not yet sampled contributes nothing; one with one draw no variance.
* :class:`DistinctStratifiedSample` — draws with replacement made uniformly within strata
  (OASIS): the stratified expansion of their distinct items; a repeat draw adds nothing.
* :func:`sample_of` — the estimation view of a run's :class:`~assay.core.types.Draws`: which
  of these follows from the draws' ``kind`` and whether stratum sizes come with them, not from
  the design that made them.

>>> import numpy as np
>>> s = StratifiedSample(stratum=np.array([0, 0, 1, 1]), sizes=np.array([10, 20]))
>>> s.total(np.array([1.0, 0.0, 1.0, 1.0]))
(25.0, 20.0)
>>> t, v = s.total(np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]))
>>> t.tolist(), v.tolist()
([25.0, 10.0], [20.0, 0.0])
>>> WithReplacementSample(q=np.array([0.5, 0.25])).total(np.array([1.0, 1.0]))
(3.0, 1.0)
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from assay.core.types import Draws, Kind

Total = tuple[Any, Any]   # (float, float) for a vector of values, (m,) arrays for a matrix


class Sample(ABC):
    """The estimation view of a run's draws: totals of per-draw values and their variances."""

    @abstractmethod
    def total(self, values: np.ndarray) -> Total:
        """Design-unbiased estimate of Σ_i v_i over the pool and an estimate of its variance
        (per column when ``values`` is a matrix)."""


def _out(total: np.ndarray, var: np.ndarray, vector: bool) -> Total:
    return (float(total[0]), float(var[0])) if vector else (total, var)


def _columns(values: np.ndarray) -> tuple[np.ndarray, bool]:
    v = np.asarray(values, dtype=np.float64)
    return (v[:, None], True) if v.ndim == 1 else (v, False)


@dataclass(frozen=True)
class WithReplacementSample(Sample):
    """Draws with replacement, draw t having selection probability q_t (Σ over pool = 1).

    Where each draw is a stratum, then an item uniformly within it (OASIS), ``stratum``,
    ``item`` and the strata's ``sizes`` come with it: they do not change the estimate, only
    the count rule of its interval (:func:`assay.core.measures.f_measures`)."""

    q: np.ndarray
    stratum: np.ndarray | None = None
    item: np.ndarray | None = None
    sizes: np.ndarray | None = None
    ordered: bool = False

    @cached_property
    def _distinct(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(distinct items, index of each one's first draw, each draw's distinct item, draws
        per distinct item): one sort, shared by the interval's rules."""
        uniq, first, inverse, times = np.unique(np.asarray(self.item), return_index=True,
                                                return_inverse=True, return_counts=True)
        return uniq, first, inverse.reshape(-1), times

    @cached_property
    def _labelled_per_stratum(self) -> np.ndarray:
        """n_h: distinct items labelled in each stratum."""
        _, first, _, _ = self._distinct
        return np.bincount(np.asarray(self.stratum, dtype=np.int64)[first],
                           minlength=np.asarray(self.sizes).shape[0])

    def census_draws(self) -> np.ndarray | None:
        """Where every item of every stratum is labelled, the mask of each item's first draw
        (the pool, known exactly); otherwise None.

        >>> WithReplacementSample(np.full(3, 0.5), np.array([0, 0, 0]), np.array([1, 2, 1]),
        ...                       np.array([2])).census_draws().tolist()
        [True, True, False]
        """
        if self.stratum is None or self.item is None or self.sizes is None:
            return None
        if not np.array_equal(self._labelled_per_stratum, np.asarray(self.sizes)):
            return None
        _, first, _, _ = self._distinct
        mask = np.zeros(np.asarray(self.item).shape[0], dtype=bool)
        mask[first] = True
        return mask

    def distinct_strata(self) -> tuple["StratifiedSample", np.ndarray] | None:
        """The distinct items as a stratified sample of their strata (each stratum's items
        drawn uniformly, so its distinct ones are a simple random sample of it given their
        number) and the index of each one's first draw; None without strata.

        >>> s = WithReplacementSample(np.full(3, 0.1), np.array([0, 0, 1]), np.array([5, 5, 7]),
        ...                           np.array([4, 1]))
        >>> sub, first = s.distinct_strata(); sub.counts().tolist(), first.tolist()
        ([1, 1], [0, 2])
        """
        if self.stratum is None or self.item is None or self.sizes is None:
            return None
        _, first, _, _ = self._distinct
        return (StratifiedSample(stratum=np.asarray(self.stratum, dtype=np.int64)[first],
                                 sizes=np.asarray(self.sizes)), first)

    def labelled_share(self) -> np.ndarray | None:
        """Per draw, 1/(its item's draws) × (1 − f_h), f_h the share of its stratum's items
        labelled (distinct): what one labelled item counts towards the failures that move the
        estimate (each distinct item once; nothing in a stratum labelled in full); None
        without strata.

        >>> s = WithReplacementSample(np.full(3, 0.1), np.array([0, 0, 1]), np.array([5, 5, 7]),
        ...                           np.array([4, 1]))
        >>> s.labelled_share().tolist()
        [0.375, 0.375, 0.0]
        """
        if self.stratum is None or self.item is None or self.sizes is None:
            return None
        stratum = np.asarray(self.stratum, dtype=np.int64)
        _, _, inverse, times = self._distinct
        size = np.asarray(self.sizes, dtype=np.float64)
        n_h = self._labelled_per_stratum.astype(np.float64)
        free = np.where(n_h < size, 1.0 - n_h / np.where(size > 0, size, 1.0), 0.0)
        return free[stratum] / times[inverse]

    def terms(self, values: np.ndarray) -> np.ndarray:
        """The per-draw unbiased terms whose mean is the total: v_t/q_t (Hansen–Hurwitz), or
        with ``ordered`` and the draws' items Raj's e_t = L_{t−1} + 1[i_t new]·v_t/q_t (module
        docstring). Each e_t is unbiased given the draws before it, whatever rule chose q_t
        from them (adaptive designs: OASIS): E[1[i new] v_i/q_i | past] is the sum of v over
        the items not labelled yet, and L_{t−1} is known. So ē is unbiased and the e_t are
        uncorrelated, as the terms of Hansen–Hurwitz are; an item drawn again adds nothing new,
        and the labelled part, once large, is known without error (the estimate of a stratum
        labelled almost in full no longer carries the spread of its draws' weights).

        >>> s = WithReplacementSample(np.array([0.5, 0.5, 0.25]), item=np.array([3, 3, 7]),
        ...                           ordered=True)
        >>> s.terms(np.array([1.0, 1.0, 1.0]))[:, 0].tolist()
        [2.0, 1.0, 5.0]
        """
        v, _ = _columns(values)
        return self._terms(v, v / np.asarray(self.q, dtype=np.float64)[:, None])

    def _terms(self, v: np.ndarray, hh: np.ndarray) -> np.ndarray:
        """:meth:`terms` from the values as columns and their Hansen–Hurwitz terms v/q."""
        if not self.ordered or self.item is None or v.shape[0] == 0:
            return hh
        _, first, _, _ = self._distinct
        new = np.zeros((v.shape[0], 1), dtype=bool)
        new[first] = True
        nv = np.where(new, v, 0.0)
        return (np.cumsum(nv, axis=0) - nv) + np.where(new, hh, 0.0)

    def total(self, values: np.ndarray) -> Total:
        """The mean of :meth:`terms` (Raj's ordered estimator when ``ordered``), with
        Hansen–Hurwitz's variance s²(v/q)/T in either case: an estimate of the Hansen–Hurwitz
        estimator's variance, which was at least Raj's in 55 of 64 measure-cells at 1,000
        labels and within 1.1% of it in 8 more (the last: abt_buy's importance precision, a
        census in 198 of 200 runs, s.d. 0.0008 against 0.0024), so the interval errs on the
        wide side. Raj's own s²(e)/T is unbiased on average
        (tests/core/test_raj_ordered.py) but more variable, and it falls with the estimate in
        the runs that drew few of a rare kind: on those 22 cells of bench/adversarial.py
        at 1,000 labels (importance and OASIS, seeds 1000–1199) the recall coverage of the
        delta-rule cells fell 0.943 → 0.926 on average with it (realistic, importance: v̂/V
        0.955, CV 0.57 and corr(R̂, v̂) −0.52, against 1.067, 0.43 and −0.36 for
        Hansen–Hurwitz; BENCHMARKS.md, "Session 20")."""
        v, vector = _columns(values)
        hh = v / np.asarray(self.q, dtype=np.float64)[:, None]
        t = self._terms(v, hh)
        n = t.shape[0]
        if n == 0:
            return _out(np.zeros(t.shape[1]), np.full(t.shape[1], math.inf), vector)
        var = hh.var(axis=0, ddof=1) / n if n > 1 else np.full(t.shape[1], math.inf)
        return _out(t.mean(axis=0), var, vector)


@dataclass(frozen=True)
class StratifiedSample(Sample):
    """Simple random samples without replacement within strata (Cochran 1977, eq. 5.6)."""

    stratum: np.ndarray          # stratum index of each draw
    sizes: np.ndarray            # N_h for every stratum of the design

    def counts(self) -> np.ndarray:
        """n_h: draws per stratum."""
        return np.bincount(self.stratum, minlength=self.sizes.shape[0])

    def partial(self) -> np.ndarray:
        """Per stratum: labelled in part, 0 < n_h < N_h."""
        n_h = self.counts()
        return (n_h > 0) & (n_h < np.asarray(self.sizes))

    def complete(self) -> np.ndarray:
        """Per stratum: labelled in full (a census of it), 0 < N_h ≤ n_h; with
        :meth:`partial`, the strata drawn at all.

        >>> StratifiedSample(np.array([0, 0, 1]), np.array([2, 5, 3])).complete().tolist()
        [True, False, False]
        """
        sizes = np.asarray(self.sizes)
        return (sizes > 0) & (self.counts() >= sizes)

    def draw_weights(self) -> np.ndarray:
        """N_h/n_h of each draw's stratum: the expansion weight (0 for a stratum not drawn).

        >>> StratifiedSample(np.array([0, 0, 1]), np.array([4, 9])).draw_weights().tolist()
        [2.0, 2.0, 9.0]
        """
        sizes = np.asarray(self.sizes, dtype=np.float64)
        n_h = self.counts().astype(np.float64)
        return np.divide(sizes, n_h, out=np.zeros_like(sizes), where=n_h > 0)[self.stratum]

    def unlabelled_share(self) -> np.ndarray:
        """1 − f_h per stratum, f_h = n_h/N_h: the finite-population correction (0 where a
        stratum is labelled in full, or empty).

        >>> StratifiedSample(np.array([0, 0, 1]), np.array([4, 1])).unlabelled_share().tolist()
        [0.5, 0.0]
        """
        size = np.asarray(self.sizes, dtype=np.float64)
        counts = self.counts()
        return np.where(counts < size, 1.0 - counts / np.where(size > 0, size, 1.0), 0.0)

    def total(self, values: np.ndarray) -> Total:
        """The one-phase, one-cell case of :func:`two_phase_total`."""
        v, vector = _columns(values)
        k, m = self.sizes.shape[0], v.shape[1]
        n_h = self.counts().astype(np.float64)
        s1, s2 = np.zeros((m, k)), np.zeros((m, k))
        for j in range(m):       # bincount per column: exact, ordered sums
            s1[j] = np.bincount(self.stratum, weights=v[:, j], minlength=k)
            s2[j] = np.bincount(self.stratum, weights=v[:, j] * v[:, j], minlength=k)
        cell = n_h[:, None]
        seen = (n_h > 0).astype(float)[:, None]
        total, var = two_phase_total(self.sizes, n_h, seen, _div(s1, n_h)[..., None],
                                     _div(s2, n_h)[..., None], np.zeros((m, k, 1)), cell, cell)
        return _out(total, var, vector)


@dataclass(frozen=True)
class DistinctStratifiedSample(StratifiedSample):
    """Draws with replacement, each a stratum then an item uniformly within it (OASIS), seen as
    the stratified sample of their distinct items (Cochran 1977, eq. 5.6, with the
    finite-population correction).

    Within a stratum every draw is uniform and independent of the past, so the distinct items
    a stratum's draws reach, given their number n_h, are a simple random sample without
    replacement of it (Doob's optional skipping: a predictable choice of when to draw from a
    stratum leaves its sequence of items i.i.d. uniform), provided the number of a stratum's
    draws does not depend on its own labels: the design sees to that (OASIS's ``cross_fit``).
    How often an item was drawn again says nothing more about the pool. ``stratum`` holds each
    draw's stratum, with every repeat of an item moved to an extra last stratum of size 0 that
    no formula counts: build it with :meth:`of`.

    >>> s = DistinctStratifiedSample.of(np.array([3, 3, 5, 7]), np.array([0, 0, 0, 1]),
    ...                                 np.array([4, 2]))
    >>> s.counts().tolist(), s.total(np.array([1.0, 1.0, 0.0, 1.0]))[0]
    ([2, 1, 0], 4.0)
    """

    @classmethod
    def of(cls, item: np.ndarray, stratum: np.ndarray, sizes: np.ndarray
           ) -> "DistinctStratifiedSample":
        """The view of draws of ``item`` from ``stratum`` (strata of ``sizes``)."""
        item = np.asarray(item)
        first = np.zeros(item.shape[0], dtype=bool)
        first[np.unique(item, return_index=True)[1]] = True
        sizes = np.asarray(sizes, dtype=np.int64)
        return cls(stratum=np.where(first, np.asarray(stratum, dtype=np.int64), sizes.shape[0]),
                   sizes=np.append(sizes, 0))

    def counts(self) -> np.ndarray:
        """n_h: distinct items per stratum (0 for the repeats' stratum)."""
        n_h = np.bincount(self.stratum, minlength=self.sizes.shape[0])
        n_h[-1] = 0
        return n_h


def _div(a: Any, b: Any) -> np.ndarray:
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    out = np.zeros(a.shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


def two_phase_total(sizes: np.ndarray, first: np.ndarray, weight: np.ndarray,
                    mean: np.ndarray, meansq: np.ndarray, within: np.ndarray,
                    first_cell: np.ndarray, second_cell: np.ndarray) -> Total:
    """Double sampling for stratification (Cochran 1977, ch. 12), with finite-population
    correction for the first phase — the one stratified estimator of assay.

    In stratum l of M_l items, N'_l are drawn in the first phase and split into cells c
    (weights w_lc = N'_lc/N'_l); the value v is known for n_lc of the N'_lc items of each cell
    (the second phase). Then Ŷ = Σ_l M_l Σ_c w_lc v̄_lc and

        Var̂(Ŷ) = Σ_l M_l² [ S²_l (1/N'_l − 1/M_l) + Σ_c w_lc s²_lc (N'_lc/n_lc − 1) / N'_l ],

    S²_l = (Σ_c w_lc m²_lc − (Σ_c w_lc v̄_lc)²)·N'_l/(N'_l − 1) the stratum variance from the
    cells' second-phase means of v (``mean``) and v² (``meansq``), s²_lc (``within``) the
    within-cell variance. With one cell and every first-phase item in the second phase it is the
    stratified expansion estimator (Cochran 1977, eq. 5.6): :class:`StratifiedSample`. Arrays
    have shape (..., L, C) (``sizes`` (L,), ``first`` (..., L)); returns (..., ) totals and
    variances.

    >>> import numpy as np
    >>> one = np.ones((2, 1))
    >>> t, v = two_phase_total(np.array([10, 20]), np.array([2, 2]), one,
    ...                        np.array([[0.5], [1.0]]), np.array([[0.5], [1.0]]),
    ...                        np.zeros((2, 1)), np.array([[2], [2]]), np.array([[2], [2]]))
    >>> float(t), float(v)
    (25.0, 20.0)
    """
    M = np.asarray(sizes, float)
    n1 = np.asarray(first, float)
    w = np.asarray(weight, float)
    eu = (w * mean).sum(axis=-1)
    eu2 = (w * meansq).sum(axis=-1)
    s2 = np.maximum(eu2 - eu ** 2, 0.0) * _div(n1, n1 - 1)
    first_term = s2 * (_div(1.0, n1) - 1.0 / np.where(M > 0, M, 1))
    ratio = np.maximum(_div(first_cell, second_cell) - 1.0, 0.0)
    extra = _div((w * within * ratio).sum(axis=-1), n1)
    var = ((M ** 2) * (np.maximum(first_term, 0.0) + extra)).sum(axis=-1)
    return (M * eu).sum(axis=-1), var


def sample_of(draws: Draws, sizes: np.ndarray | None = None,
              within: np.ndarray | None = None) -> Sample:
    """The estimation view of ``draws``: Raj's ordered estimator over the distinct items of draws
    with replacement (:meth:`WithReplacementSample.terms`; Hansen–Hurwitz without item ids),
    stratified expansion (strata of ``sizes``) for inclusion probabilities; selection draws
    that come with stratum sizes (made uniformly within those strata, with each stratum's count
    free of its own labels: OASIS with ``cross_fit``) are the stratified sample of their
    distinct items (:class:`DistinctStratifiedSample`); other selection draws made uniformly
    within strata of sizes ``within`` (OASIS) keep their strata for the interval's count rule.

    >>> import numpy as np
    >>> d = Draws.from_records([(0, 0.5, 0), (3, 0.5, 0)], kind=Kind.INCLUSION)
    >>> sample_of(d, np.array([4])).total(np.array([1.0, 0.0]))
    (2.0, 2.0)
    """
    if draws.kind == Kind.SELECTION:
        if sizes is not None:
            return DistinctStratifiedSample.of(draws.item, draws.stratum, sizes)
        if within is not None:
            return WithReplacementSample(draws.probability, draws.stratum, draws.item,
                                         np.asarray(within), ordered=True)
        return WithReplacementSample(q=draws.probability, item=draws.item, ordered=True)
    if sizes is None:
        raise ValueError("inclusion-probability draws need the stratum sizes")
    return StratifiedSample(stratum=draws.stratum, sizes=np.asarray(sizes))


def unseen_positive_bound(sample: StratifiedSample, labels: np.ndarray,
                          confidence: float = 0.95) -> dict[str, float]:
    """What a design-based interval assumes: strata sampled in part with no positive labelled
    are taken to hold none. Returns how many such strata and unlabelled items there are, and a
    one-sided upper bound on the positives they could hold (per stratum the Clopper–Pearson
    bound 1 − (1 − c)^(1/n_h) on its rate, summed: conservative).

    >>> import numpy as np
    >>> s = StratifiedSample(stratum=np.array([0, 1]), sizes=np.array([1, 100]))
    >>> unseen_positive_bound(s, np.array([1, 0]))["unseen_strata"]
    1
    """
    k = sample.sizes.shape[0]
    n_h = np.bincount(sample.stratum, minlength=k)
    pos_h = np.bincount(sample.stratum, weights=np.asarray(labels, dtype=float), minlength=k)
    partial = (n_h > 0) & (n_h < sample.sizes) & (pos_h == 0)
    rest = (sample.sizes - n_h)[partial].astype(float)
    bound = float(np.sum(rest * (1.0 - (1.0 - confidence) ** (1.0 / n_h[partial]))))
    return {"unseen_strata": int(partial.sum()), "unseen_items": float(rest.sum()),
            "unseen_positive_bound": bound}


__all__ = ["DistinctStratifiedSample", "Sample", "StratifiedSample", "WithReplacementSample", "sample_of", "two_phase_total",
           "unseen_positive_bound"]
