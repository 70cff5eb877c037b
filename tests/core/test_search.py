"""least_reaching (assay.core.search) returns plain bisection's answer for every
non-increasing width, whatever its shape, with at most three times bisection's probes."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.search import least_reaching


def bisection(width, goal, lo, hi, check_low=True, check_high=True):
    """The rule the sizing functions used before least_reaching (sizing._fill_needed)."""
    if check_low and width(lo) <= goal:
        return lo
    if hi is None:
        hi = max(lo, 1)
        while width(hi) > goal:
            lo, hi = hi, 2 * hi
    elif check_high and width(hi) > goal:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if width(mid) <= goal else (mid, hi)
    return hi


@st.composite
def widths(draw):
    """A non-increasing width over [0, n]: cumulated non-negative drops from a start, with
    plateaus, cliffs and infinities at the low end."""
    n = draw(st.integers(2, 3000))
    start = draw(st.floats(0.01, 10.0))
    drops = draw(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=len(drops), max_size=len(drops))))
    inf_below = draw(st.integers(0, 3))
    smooth = draw(st.booleans())

    def width(d: int) -> float:
        if d < inf_below:
            return math.inf
        if smooth:
            return start / math.sqrt(d + 1)
        return start - sum(x for x, c in zip(drops, cuts) if c <= d)
    return n, width


@settings(max_examples=400, deadline=None)
@given(widths(), st.floats(-1.0, 10.0), st.data())
def test_same_answer_as_bisection(world, goal, data):
    n, width = world
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.one_of(st.none(), st.integers(lo, n)))
    check_low, check_high = data.draw(st.booleans()), data.draw(st.booleans())
    if hi is None and width(n) > goal:
        return                                       # unbounded and never reached
    calls: list[int] = []

    def counted(d: int) -> float:
        calls.append(d)
        return width(min(d, n))

    want = bisection(lambda d: width(min(d, n)), goal, lo, hi, check_low, check_high)
    got = least_reaching(counted, goal, lo, hi, check_low, check_high)
    assert got == want
    if hi is not None:
        assert len(set(calls)) <= 3 * math.ceil(math.log2(max(hi - lo, 2))) + 3


def test_fewer_probes_than_bisection_on_a_variance_curve():
    """A width z·√(A + B/(n₀ + d)) over [10, 990], the shape of a planning variance: bisection
    needs 11-12 probes, the interpolating search at most 6."""
    for a, b, n0, goal in [(0.0, 1.0, 0, 0.05), (1e-4, 0.5, 30, 0.05), (0.0, 2.0, 5, 0.2),
                           (1e-3, 3.0, 0, 0.06), (0.0, 0.3, 100, 0.03)]:
        calls: list[int] = []

        def width(d: int) -> float:
            calls.append(d)
            return 1.96 * math.sqrt(a + b / (n0 + d))
        got = least_reaching(width, goal, 10, 990)
        assert got == bisection(lambda d: 1.96 * math.sqrt(a + b / (n0 + d)), goal, 10, 990)
        assert len(calls) <= 6, (a, b, n0, goal, calls)
