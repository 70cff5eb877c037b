"""A census is exact (issue "Honest intervals": a census was ignored — all 300 items labelled,
yet precision 0.4444 [0.2153, 0.6924]; all 62 predicted positives labelled, yet [0.46, 0.72]).

Coverage claim (2,000 repetitions, tolerance ±1.96·√(.95·.05/2000) = ±0.0096): precision from
simple random samples of 20–59 of a pool's 60 predicted positives (precision 0.9, so the
exact fallback is used) covers at ≥ 0.95 − 0.0096; at 60 of 60 the interval is the point.
"""
from __future__ import annotations

import numpy as np
import pytest

from assay.core.measures import f_measure
from assay.core.totals import StratifiedSample


def test_a_census_gives_the_estimate_itself():
    rng = np.random.default_rng(0)
    lab = (rng.random(300) < 0.3).astype(int)
    pred = (rng.random(300) < 0.2).astype(int)
    s = StratifiedSample(stratum=np.zeros(300, dtype=np.int64), sizes=np.array([300]))
    for alpha in (1.0, 0.0, 0.5):
        e = f_measure(s, lab, pred, alpha)
        assert e.method == "census" and e.ci_low == e.ci_high == e.estimate


@pytest.mark.parametrize("n", [pytest.param(n, marks=pytest.mark.slow) for n in (20, 40, 55, 59)]
                         + [60])
def test_precision_with_known_predicted_positives_covers(n):
    rng = np.random.default_rng(n)
    truth = np.zeros(60, dtype=int)
    truth[:54] = 1                                    # precision 0.9 among 60 predicted positives
    widths, before, cover = [], [], []
    for _ in range(2000):
        idx = rng.choice(60, size=n, replace=False)
        s = StratifiedSample(stratum=np.zeros(n, dtype=np.int64), sizes=np.array([60]))
        e = f_measure(s, truth[idx], np.ones(n, dtype=int), 1.0, n_domain=n,
                      n_success=int(truth[idx].sum()), domain_size=60)
        old = f_measure(s, truth[idx], np.ones(n, dtype=int), 1.0)
        cover.append(e.covers(0.9))
        widths.append(e.ci_high - e.ci_low)
        before.append(old.ci_high - old.ci_low)
    assert np.mean(cover) >= 0.95 - 0.0096
    assert np.all(np.array(widths) <= np.array(before) + 1e-12)
    if n == 60:
        assert max(widths) == 0.0
