"""Many seeded OASIS runs of one pool, side by side: the draws of :func:`assay.evaluation.collect`
on each run alone, bit for bit, at a fraction of the cost.

OASIS is sequential: every draw's instrumental distribution v (seed 002, eq. 12) depends on all
the labels before it, and at 2,000 labels on dblp_acm a run makes 16 draws per label. Alone, a
draw costs ~45 µs, nearly all of it numpy's per-call overhead on arrays of K ≈ 30 numbers. A
simulation repeats the run for R seeds: here the R runs advance together, v of every run still
going is computed in one set of (R, K) array operations (:class:`~assay.designs.oasis_model.VStar`,
whose rows are the one-run values bit for bit), and only what is each run's own stays in a
Python loop: its generator's two calls per draw (a uniform for the stratum, then an integer for
the item, in that order, as :meth:`OasisDesign.draw <assay.designs.oasis.OasisDesign.draw>`),
its set of labelled items and its running sums of eq. 3 (Python floats, as
:meth:`OasisDesign.update <assay.designs.oasis.OasisDesign.update>`). A run stops where the
campaign stops it: at ``min(budget, N)`` distinct labels, or after
:data:`~assay.campaign.MAX_DRAWS_PER_LABEL` draws per label.

Only plain in-memory :class:`~assay.designs.oasis.OasisDesign` runs of the published v* form that
share their pool, strata and settings and have not drawn yet qualify; :func:`collect_many` runs
any other list one design after the other. Each design is left as if it had drawn alone (its
counts, sums, labelled items and floors), so the estimators read it as usual.

>>> import numpy as np
>>> from assay.designs.oasis import OasisDesign
>>> score = np.linspace(-3.0, 3.0, 200); y = (score > 1).astype(int)
>>> runs = [OasisDesign(None, y, score, np.random.default_rng(s)) for s in (0, 1)]
>>> [c.distinct for c in collect_many(runs, y, 20)]
[20, 20]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from assay.core.types import DrawColumns, Kind
from assay.designs.oasis import OasisDesign
from assay.runs import Collected

GRID_BYTES = 1 << 26     # 64 MB: above it, each run's labelled items are kept in a set
_SHARED = ("alpha", "epsilon", "defensive", "decaying_prior", "cross_fit", "n", "f0",
           "v_star_form")
_SHARED_ARRAYS = ("omega", "lam", "gamma1", "gamma0", "v_prior", "phi", "_floor_n", "_sibling",
                  "_sizes")


def _lockstep_ok(designs: Sequence[OasisDesign]) -> bool:
    """True when every design is a fresh in-memory OASIS run on the same pool, strata and
    settings as the first."""
    if not designs:
        return False
    d0 = designs[0]
    for d in designs:
        if type(d) is not OasisDesign or d._items or \
                d.ones.any() or d.zeros.any():
            return False
        if any(getattr(d, a) != getattr(d0, a) for a in _SHARED):
            return False
        if any(not np.array_equal(getattr(d, a), getattr(d0, a)) for a in _SHARED_ARRAYS):
            return False
        if d._predictions is not d0._predictions and \
                not np.array_equal(d._predictions, d0._predictions):
            return False
        if not (np.array_equal(d.strata.order, d0.strata.order)
                and np.array_equal(d.strata.bounds, d0.strata.bounds)):
            return False
    return True


def collect_many(designs: Sequence[OasisDesign], truth: np.ndarray, budget: int
                 ) -> list[Collected]:
    """Each design run to ``budget`` distinct labels from ``truth`` (0/1 per pool item): what
    :func:`assay.evaluation.collect` gives for each alone (module docstring)."""
    from assay.campaign import MAX_DRAWS_PER_LABEL
    from assay.evaluation import collect
    truth = np.asarray(truth)
    if not _lockstep_ok(designs):
        return [collect(d, lambda i: int(truth[i]), budget) for d in designs]
    d0 = designs[0]
    r_all, k_all = len(designs), d0.strata.count
    target = min(max(int(budget), 1), d0.n)
    cap = MAX_DRAWS_PER_LABEL * max(target, 1)
    order, bounds, sizes = d0.strata.order, d0.strata.bounds, d0._sizes
    sizes_f, size_of = sizes.astype(np.float64), sizes.tolist()
    preds = np.asarray(d0._predictions, dtype=np.float64)
    alpha, n, f0, floor_n = d0.alpha, d0.n, d0.f0, d0._floor_n
    ones, zeros = np.zeros((r_all, k_all)), np.zeros((r_all, k_all))
    labelled_k = np.zeros((r_all, k_all))
    live = np.stack([d._live for d in designs]).astype(np.float64)
    any_live = np.array([d._any_live for d in designs], dtype=bool)
    num, psum, tsum = np.zeros(r_all), np.zeros(r_all), np.zeros(r_all)   # eq. 3's sums
    distinct, drawn = np.zeros(r_all, np.int64), np.zeros(r_all, np.int64)
    # the items each run has labelled: a boolean row per run where R × N bytes are few
    grid = np.zeros((r_all, d0.n), dtype=bool) if r_all * d0.n <= GRID_BYTES else None
    seen: list[set[int]] = [] if grid is not None else [set() for _ in designs]
    rngs = [d.rng for d in designs]
    steps: list[tuple[np.ndarray, ...]] = []
    active = np.arange(r_all)
    while active.size:
        runs = active.tolist()
        den = alpha * psum[active] + (1.0 - alpha) * tsum[active]
        f = np.where(den > 0, num[active] / np.where(den > 0, den, 1.0), f0)
        o, z = ones[active], zeros[active]
        if d0.cross_fit:
            o, z = o[:, d0._sibling], z[:, d0._sibling]
        rows = any_live[active]
        v, cum = d0._vstar(o, z, f, live[active] if rows.any() else None, rows)
        u = np.array([rngs[r].random() for r in runs])
        ks = np.minimum((cum <= u[:, None]).sum(axis=1), k_all - 1)
        pos = bounds[ks] + np.array([rngs[r].integers(size_of[k])
                                     for r, k in zip(runs, ks.tolist())], dtype=np.int64)
        items = order[pos].astype(np.int64)
        ell = np.asarray(truth[items]).astype(np.int64)
        probs = v[np.arange(active.size), ks] / sizes_f[ks]
        if grid is not None:
            new = ~grid[active, items]
            grid[active, items] = True
        else:
            new = np.array([it not in seen[r] and not seen[r].add(it)  # type: ignore[func-returns-value]
                            for r, it in zip(runs, items.tolist())], dtype=bool)
        rn, kn = active[new], ks[new]               # OasisDesign.update, for every run at once
        labelled_k[rn, kn] += 1.0
        hit = any_live[rn] & (live[rn, kn] > 0.0) & (labelled_k[rn, kn] >= floor_n[kn])
        if hit.any():
            live[rn[hit], kn[hit]] = 0.0
            any_live[rn[hit]] = live[rn[hit]].any(axis=1)
        one = ell == 1
        ones[active, ks] += one
        zeros[active, ks] += ~one
        w = 1.0 / (n * probs)
        yhat = preds[items]
        num[active] += w * ell * yhat
        psum[active] += w * yhat
        tsum[active] += w * ell
        distinct[active] += new
        drawn[active] += 1
        steps.append((active, items, probs, ks, pos, ell))
        active = active[(distinct[active] < target) & (drawn[active] < cap)]
    cols = _collected(steps, r_all)
    for r, d in enumerate(designs):
        d.ones[:], d.zeros[:], d._labelled[:] = ones[r], zeros[r], labelled_k[r]
        d._num, d._pred, d._true = float(num[r]), float(psum[r]), float(tsum[r])
        d._items = seen[r] if grid is None else set(np.flatnonzero(grid[r]).tolist())
        d._live = live[r].copy()
        d._any_live = bool(any_live[r])
        d._v = None
    return cols


def _collected(steps: list[tuple[np.ndarray, ...]], r_all: int) -> list[Collected]:
    """The step-major records regrouped run by run, in draw order."""
    run, items, probs, ks, pos, ell = (np.concatenate(c) for c in zip(*steps))
    by_run = np.argsort(run, kind="stable")
    cuts = np.searchsorted(run[by_run], np.arange(r_all + 1))
    out = []
    for r in range(r_all):
        sl = by_run[cuts[r]:cuts[r + 1]]
        it, lab = items[sl].tolist(), ell[sl].tolist()
        labelled: dict[int, int] = {}
        for i, y in zip(it, lab):
            labelled.setdefault(i, y)
        draws = DrawColumns.first_phase(items[sl], probs[sl], ks[sl], pos[sl], Kind.SELECTION)
        out.append(Collected(draws, lab, labelled))  # type: ignore[arg-type]
    return out


__all__ = ["collect_many"]
