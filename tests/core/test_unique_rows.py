"""assay.core.rows.unique_rows is np.unique(x, axis=0, ...) exactly: the same distinct rows in the
same order, first occurrences, inverse (shape included), counts and dtypes, on random boolean,
integer and float arrays (with ties, ±0.0, NaN), empty ones, one row and one column."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from assay.core.rows import unique_rows

FLAGS = list(itertools.product([False, True], repeat=3))


def _same(x: np.ndarray) -> None:
    for ri, rv, rc in FLAGS:
        want = np.unique(x, axis=0, return_index=ri, return_inverse=rv, return_counts=rc)
        got = unique_rows(x, return_index=ri, return_inverse=rv, return_counts=rc)
        if not (ri or rv or rc):
            want, got = (want,), (got,)
        assert type(got) is type(want) and len(got) == len(want)
        for w, g in zip(want, got):
            assert g.dtype == w.dtype and g.shape == w.shape, (x, ri, rv, rc)
            # bit for bit: the bytes, so that -0.0 and 0.0 (or NaN payloads) differ
            assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), (
                x, ri, rv, rc, w, g)


def _arrays(rng: np.random.Generator, n: int, m: int):
    yield rng.random((n, m)) < rng.uniform(0.1, 0.9)
    yield rng.integers(0, 3, (n, m))
    yield rng.integers(-2, 2, (n, m)).astype(np.int8)
    yield rng.integers(0, 4, (n, m)).astype(np.uint16)
    yield rng.choice([0.0, 0.5, 1e-3, 2.0, 1 / 3], (n, m))
    yield rng.choice([0.0, 1 / 3000, 1 / 500], (n, m)).astype(np.float32)
    yield rng.random((n, m))
    yield rng.choice([0.0, -0.0, 1.0], (n, m))
    yield rng.choice([0.0, np.nan, 1.0, np.inf, -np.inf], (n, m))


@pytest.mark.parametrize("seed", range(40))
def test_seeded_random_arrays(seed):
    rng = np.random.default_rng(seed)
    for n, m in [(int(rng.integers(2, 300)), int(rng.integers(1, 12))), (1, 3), (5, 1), (200, 1),
                 (1, 1), (0, 3), (3, 0), (0, 0)]:
        for x in _arrays(rng, n, m):
            _same(x)


def test_layouts_and_inputs():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, (60, 5))
    _same(np.asfortranarray(x))
    _same(x[::2, ::-1])
    _same(x.astype(">i4"))
    _same(x.astype(bool))
    np.testing.assert_array_equal(unique_rows(x.tolist()), np.unique(x, axis=0))


def test_the_fast_path_is_taken_and_falls_back_only_where_it_must():
    from assay.core.rows import _defer
    assert not _defer(np.zeros((3, 2)))
    assert not _defer(np.array([[1.0, -2.0]]))
    assert _defer(np.array([[1.0, -0.0]]))
    assert _defer(np.array([[1.0, np.nan]]))
    assert _defer(np.zeros((0, 2))) and _defer(np.zeros((2, 0))) and _defer(np.zeros(3))
    assert _defer(np.zeros((2, 2), dtype=complex))


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(st.sampled_from([np.bool_, np.int64, np.uint8, np.float64, np.float32]),
                  hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=12)))
def test_hypothesis_arrays(x):
    _same(x)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(1, 6), st.data())
def test_hypothesis_float_rows_with_ties(n, m, data):
    vals = data.draw(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                              min_size=1, max_size=4))
    idx = data.draw(hnp.arrays(np.int64, (n, m), elements=st.integers(0, len(vals) - 1)))
    _same(np.array(vals, dtype=np.float64)[idx])
