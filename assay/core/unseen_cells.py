"""What a stratum's draws could not see: the variance of the outcomes its unlabelled items hold.

The stratified variance of a total (Cochran 1977, eq. 5.6) is a plug-in: a stratum whose draws
of one prediction ŷ = c (a *cell*) are all non-matches adds nothing for that cell, however many
matches its unlabelled items hold. Conditional on such a sample the ratio F̂_α is biased (the
unseen matches are missing from it), and the interval is shortest exactly then: on the
``off_score`` world (world seed 11) at 2,000 labels, 6 of the 82 false negatives lie in two
strata below the top labelled 79 of 741 and 116 of 1,088 items; a run sees none of them in
about half the repetitions, and recall's 95% interval covered 0.918 (2,000 stratified samples
of that design, tests/core/test_unseen_cells.py; bench/adversarial.py gave 0.93 and 0.885 on
two sets of 200 runs).

Here the labels' silence is given the variance the prior says it hides. In cell c of stratum h,
n_c draws of which none has outcome o (a match, or for a cell of draws all matches a
non-match), its U = N̂_c − n_c unlabelled items (N̂_c = N_h n_c / n_h) are taken to hold
M ~ Binomial(U, π) of outcome o. Each moves the linearised total of z = (y − R x) / X̂ by
g_c = (c − R (1 − α)) / X̂ (y = ℓ ŷ, x = α ŷ + (1 − α) ℓ), and the sample says nothing of M,
so the variance takes its mean square beside the plug-in:

    V_add = Σ_cells E[M²] g_c² = Σ_cells (U π (1 − π) + (U π)²) g_c².                     (1)

π is the prior's mean rate of o over the cell's draws, recalibrated on the labels of every cell
c of the design (a ratio estimator, Cochran 1977, §6.2), then capped at the Jeffreys posterior
mean ½ / (n_c + 1) of the cell's own labels (many draws that all say no overrule a prior that
says yes; Brown, Cai & DasGupta 2001):

    π = min(κ_co π̄_hco, ½ / (n_c + 1)),  κ_co = (Σ_i w_i [ℓ_i = o] + ½) / (Σ_i w_i ρ_io + ½)   (2)

over the draws i of prediction c, w_i = N_h / n_h, ρ_io the prior's rate of o for item i. A
score whose logistic is taken as the prior (no ``probability`` column) can overstate the tail's
rate 45-fold (the ``miscalibrated`` world) or 700-fold (amazon_google): without κ, strata of
thousands of items labelled twice were given hundreds of unseen matches, and recall's interval
became [0, 1] (half-width 0.067 → 0.50 on ``miscalibrated`` at 1,000 labels). Last, a cell
whose draws could not be expected to see the outcome is left out:

    π = 0 where n_c π < 0.1 (:data:`REACH`),                                               (3)

strata of thousands of items labelled twice or thrice: what they hold is beyond what the
budget can check, the interval rests on it, says so (``assumes``) and the assumption-free
interval is beside it (issue 11). Without (3), a single κ spread a shape-distorted prior's
excess over the deep strata (amazon_google at 1,000 labels, recall half-width 0.073 → 0.093).

The estimate is unchanged (design-unbiased); only a sample that saw none of what the
recalibrated prior expects is widened, and a prior that says a cell is empty adds nothing. On
the ``off_score`` design above (2,000 stratified samples, tests/core/test_unseen_cells.py),
recall's coverage 0.918 → 0.947 at a mean half-width 0.052 → 0.055. It is a model-assisted
allowance, not a bound: matches the prior does not expect (score-blind ones) are left to the
assumption-free interval (:mod:`assay.core.bounds`). In memory only: an engine's fetched rows
do not carry the prior yet.
"""
from __future__ import annotations

import numpy as np

from assay.core.totals import StratifiedSample

REACH = 0.1      # a cell's draws expected to hold at least this much of the unseen outcome


def cell_counts(sample: StratifiedSample, labels: np.ndarray, in_cell: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stratum, over the draws of one cell (``in_cell``: e.g. one prediction's draws):
    n_c the labelled items, how many of them are matches, and U = N̂_c − n_c the cell's
    unlabelled items (N̂_c = N_h n_c / n_h).

    >>> s = StratifiedSample(stratum=np.repeat([0, 1], [50, 100]), sizes=np.array([100, 1000]))
    >>> [x.tolist() for x in cell_counts(s, np.r_[np.ones(5), np.zeros(145)], np.ones(150))]
    [[50.0, 100.0], [5.0, 0.0], [50.0, 900.0]]
    """
    sizes = np.asarray(sample.sizes, dtype=np.float64)
    k = sizes.shape[0]
    stratum = np.asarray(sample.stratum)
    n_h = sample.counts().astype(np.float64)
    w = np.asarray(in_cell, dtype=np.float64)
    n_c = np.bincount(stratum, weights=w, minlength=k)
    pos = np.bincount(stratum, weights=w * np.asarray(labels, dtype=np.float64), minlength=k)
    unseen = np.maximum(np.divide(sizes * n_c, n_h, out=np.zeros(k), where=n_h > 0) - n_c, 0.0)
    return n_c, pos, unseen


def unseen_cell_variance(sample: StratifiedSample, labels: np.ndarray, predictions: np.ndarray,
                         prior: np.ndarray, r: np.ndarray, x_total: np.ndarray,
                         alpha: float) -> np.ndarray:
    """V_add of eq. (1) per system: ``labels`` and ``prior`` (the prior's P(ℓ = 1)) per draw,
    ``predictions`` (n draws × m systems), ``r`` and ``x_total`` the estimates R̂ and X̂ of each.

    >>> s = StratifiedSample(stratum=np.repeat([0, 1], [50, 100]), sizes=np.array([100, 1000]))
    >>> lab, pri = np.r_[np.ones(5), np.zeros(145)], np.r_[np.full(50, 0.1), np.full(100, 0.01)]
    >>> v = unseen_cell_variance(s, lab, np.zeros((150, 1)), pri, np.array([0.5]),
    ...                          np.array([10.0]), 0.0)
    >>> round(float(v[0]), 4)  # π = min(0.01·10.5/20.5, ½/101), U = 900, g = 0.5/10
    0.0607
    """
    ell = np.asarray(labels, dtype=np.float64)
    yhat = np.asarray(predictions, dtype=np.float64)
    if yhat.ndim == 1:
        yhat = yhat[:, None]
    pri = np.clip(np.asarray(prior, dtype=np.float64), 0.0, 1.0)
    sizes = np.asarray(sample.sizes, dtype=np.float64)
    k, m = sizes.shape[0], yhat.shape[1]
    stratum = np.asarray(sample.stratum)
    partial = sample.partial()
    weight = sample.draw_weights()                                            # N_h / n_h
    out = np.zeros(m)
    for j in range(m):
        for c in (0.0, 1.0):
            w = (yhat[:, j] == c).astype(np.float64)
            n_c, pos, unseen = cell_counts(sample, ell, w)
            rate = np.divide(np.bincount(stratum, weights=w * pri, minlength=k), n_c,
                             out=np.zeros(k), where=n_c > 0)
            none = partial & (n_c > 0) & (pos == 0)          # no match seen: unseen matches
            every = partial & (n_c > 0) & (pos == n_c)       # all matches: unseen non-matches
            wc = w * weight        # the prior recalibrated on the labels of prediction c (eq. 2)
            k1 = (wc @ ell + 0.5) / (wc @ pri + 0.5)
            k0 = (wc @ (1.0 - ell) + 0.5) / (wc @ (1.0 - pri) + 0.5)
            p = np.where(none, k1 * rate, np.where(every, k0 * (1.0 - rate), 0.0))
            p = np.minimum(p, 0.5 / (n_c + 1.0))
            p = np.where(n_c * p >= REACH, p, 0.0)    # beyond the draws' reach: left (eq. 3)
            em = unseen * p
            g = (c - r[j] * (1.0 - alpha)) / x_total[j] if x_total[j] > 0 else 0.0
            out[j] += float(np.sum(em * (1.0 - p) + em * em)) * g * g
    return out


__all__ = ["cell_counts", "unseen_cell_variance"]
