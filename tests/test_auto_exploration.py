"""``auto``'s exploration below matches (issue 11; assay.designs.auto.exploration_rates): the
labels' floor carried over ``REACH`` strata, the re-allocation that plans for it, its setting
(and the replay of runs stored before it), and what it does on non-monotone worlds no rule was
tuned on."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.core.predictive import StratumCounts, below_a_match
from assay.designs import build_design
from assay.designs.auto import REACH, exploration_rates
from assay.designs.settings import AutoSettings, settings_from_dict
from assay.errors import AssayInputError
from assay.runs import Collected
from assay.simulation import collect_known, simulate
from assay.worlds import WORLDS


def _counts(lab0: list[float], fn: list[float], sizes: list[int]) -> StratumCounts:
    k = len(sizes)
    return StratumCounts(np.r_[0, np.cumsum(sizes)], np.zeros(k), np.zeros(k),
                         np.array(lab0, dtype=float), np.zeros(k), np.array(fn, dtype=float))


def test_the_floor_runs_on_through_strata_that_showed_none() -> None:
    # 5 of 100 above; then three strata labelled in part with none: reach 2 holds two of them
    c = _counts([100, 50, 50, 50, 60], [5, 0, 0, 0, 0], [100, 400, 800, 1600, 3200])
    assert below_a_match(c).tolist() == [0.0, 0.5, 0.0, 0.0, 0.0]
    assert below_a_match(c, reach=2).tolist() == [0.0, 0.5, 0.5, 0.0, 0.0]
    assert below_a_match(c, reach=3).tolist() == [0.0, 0.5, 0.5, 0.5, 0.0]
    # at the rate of the last stratum that showed matches: 1 of 400 → min(½, 0.0025 × 51)
    thin = _counts([400, 50, 50], [1, 0, 0], [400, 800, 1600])
    assert below_a_match(thin, reach=2).tolist() == [0.0, pytest.approx(0.1275),
                                                     pytest.approx(0.1275)]
    # a stratum labelled in full breaks the run (its labels say all there is)
    full = _counts([100, 400, 50], [5, 0, 0], [100, 400, 800])
    assert below_a_match(full, reach=2).tolist() == [0.0, 0.0, 0.0]
    # a match further down starts a run of its own
    again = _counts([100, 50, 50, 50, 50], [5, 0, 1, 0, 0], [100, 400, 800, 1600, 3200])
    assert below_a_match(again, reach=2).tolist() == [0.0, 0.5, 0.0, 0.5, 0.5]


def test_exploration_rates_are_the_floored_posterior_means() -> None:
    c = _counts([100, 50, 50, 50], [5, 0, 0, 0], [100, 400, 800, 1600])
    got = exploration_rates(c)
    assert REACH == 2
    assert got.tolist() == pytest.approx([0.0, 0.5 / 51, 0.5 / 51, 0.0])


def _labelled(col: Collected) -> list[tuple[int, int]]:
    """(rank − 1, label) of each labelled draw of a run."""
    return [(d.position, v) for d, v in zip(col.draws, col.labels)]


def _bump(explore: float, runs: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Labels and matches seen in ranks 2,001–8,000 (the bump of the non-monotone world, world
    seed 300) in each of ``runs`` runs at 2,000 labels."""
    f = WORLDS["non_monotone"](np.random.default_rng(300)).frame
    y, pred, score = (f[c].to_numpy() for c in ("label", "prediction", "score"))
    n, k = [], []
    for r in range(runs):
        des = build_design("auto", n=len(y), predictions=pred, score=score, prior=None,
                           budget=2000, rng=np.random.default_rng(70 + r), alpha=0.5,
                           options={"explore": explore})
        col = collect_known(des, y, 2000)
        bump = [v for p, v in _labelled(col) if 2000 <= p < 8000]
        n.append(len(bump))
        k.append(sum(bump))
    return np.array(n), np.array(k)


def test_the_reallocation_explores_below_matches() -> None:
    """The same 20 runs: without exploration one run left the bump's 6,000 ranks 173 labels and
    saw none of its matches (the others 764–1,383 labels, having found it early); with it the
    least labelled run has 445 and every run sees some. Exploration spreads labels: a run that
    found the bump gives it fewer (445–760) and the strata below it more."""
    n0, k0 = _bump(0.0)
    n1, k1 = _bump(0.1)
    assert (k0 == 0).sum() >= 1 and (k1 > 0).all()
    assert n1.min() >= 2 * n0.min()


def test_the_setting_and_the_replay_of_runs_stored_before_it() -> None:
    assert AutoSettings().explore == 0.1
    assert settings_from_dict({"design": "auto", "first": 8}).explore == 0.0
    assert settings_from_dict({"design": "auto", "explore": 0.2}).explore == 0.2
    with pytest.raises(AssayInputError, match="explore"):
        AutoSettings(explore=1.5)


def _coverage(explore: float, worlds: range, runs: int = 10) -> float:
    hits = []
    for w in worlds:
        f = WORLDS["non_monotone"](np.random.default_rng(w)).frame
        res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(),
                       f["score"].to_numpy(), None, 2000, runs, seed=9000 + 10 * w,
                       options={"explore": explore}, measures={"recall": 0.0})["recall"]
        hits += list((res.ci_low <= res.truth) & (res.truth <= res.ci_high))
    return float(np.mean(hits))


@pytest.mark.slow
def test_fresh_non_monotone_worlds_are_covered() -> None:
    """20 fresh non-monotone worlds (world seeds 400–419, none used to choose the rule), 10 runs
    each at 2,000 labels: recall covers at least 0.93 − 3 binomial SE with exploration, and
    more often than without it on the same runs (BENCHMARKS.md, session 25)."""
    cov = _coverage(0.1, range(400, 420))
    assert cov >= 0.93 - 3 * math.sqrt(0.93 * 0.07 / 200), cov
    assert _coverage(0.0, range(400, 420)) < cov


@pytest.mark.slow
def test_at_1000_labels_the_labels_win_where_they_show_the_bump() -> None:
    """20 fresh non-monotone worlds (world seeds 500–519, used nowhere else), 10 runs each at
    1,000 labels. Overall recall coverage is below 0.93 (0.86 here; 0.800 / 0.875 on the
    bench's worlds 200–219 / 300–319): in 8.5–16.5% of runs the labels hold no match of the
    bump (ranks 2,000–5,999) and agree with the monotone model, which the interval then rests
    on (coverage 0.00–0.06 there). The issue's rule, held here: where the labels show the bump
    (two or more of its matches labelled) the primary interval covers (≥ 0.93 − 3 binomial SE
    of those runs; measured 0.967 over 150 runs here, 0.977 / 0.975 on the bench's); where they
    show none, the primary interval names its assumption and the assumption-free one covers
    (BENCHMARKS.md, session 28)."""
    from assay.core.strata import _descending_order
    from assay.estimation import estimate_all
    shown, quiet = [], []
    for w in range(500, 520):
        f = WORLDS["non_monotone"](np.random.default_rng(w)).frame
        y, pred, score = (f[c].to_numpy() for c in ("label", "prediction", "score"))
        order = _descending_order(score)
        for r in range(10):
            des = build_design("auto", n=len(y), predictions=pred, score=score, prior=None,
                               budget=1000, rng=np.random.default_rng(7000 + 10 * w + r),
                               alpha=0.5, options={"precomputed_order": order})
            col = collect_known(des, y, 1000)
            e = estimate_all(des, col, pred, 0.95, {"recall": 0.0})["recall"]
            truth = float((y * pred).sum() / y.sum())
            seen = sum(lab for pos, lab in _labelled(col) if 2000 <= pos < 6000)
            if seen >= 2:
                shown.append(e.ci_low <= truth <= e.ci_high)
            elif seen == 0:
                free = e.assumption_free
                quiet.append(bool(e.assumes) and free is not None
                             and free[0] <= truth <= free[1])
    n = len(shown)
    assert n >= 100, n
    assert np.mean(shown) >= 0.93 - 3 * math.sqrt(0.93 * 0.07 / n), (np.mean(shown), n)
    assert quiet and all(quiet), quiet
