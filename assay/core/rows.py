"""Distinct rows of a 2-D array: ``np.unique(x, axis=0, ...)`` by a lexsort of the columns.

``np.unique`` with ``axis=0`` views each row as one structured record and sorts the records,
comparing them field by field through the generic (slow) path; :func:`unique_rows` sorts the
columns with :func:`numpy.lexsort` (column 0 the primary key; stable, so tied rows keep their
order, as ``np.unique``'s mergesort with ``return_index``) and gives the same outputs: the
distinct rows in the same lexicographic order, the first occurrence of each, the inverse (1-D,
as ``np.unique`` gives it under numpy ≥ 2.0.1) and the counts, with the same dtypes.

Where the two could differ it defers to ``np.unique``: float rows holding NaN (each NaN row is
its own distinct row there, in an order that depends on its sort) or −0.0 (equal to 0.0, but
which of the two represents the row would depend on ``np.unique``'s unstable sort), and anything
but a non-empty 2-D boolean, integer or float array.

>>> unique_rows(np.array([[1, 0], [0, 1], [1, 0]]), return_inverse=True)[1].tolist()
[1, 0, 1]
"""
from __future__ import annotations

from typing import Any

import numpy as np


def unique_rows(x: Any, return_index: bool = False, return_inverse: bool = False,
                return_counts: bool = False) -> Any:
    """``np.unique(x, axis=0, return_index=..., return_inverse=..., return_counts=...)``: the
    distinct rows (sorted), then as asked each one's first row, each row's distinct row and
    each distinct row's number of rows (a tuple when more than the rows are asked for).

    >>> a = np.array([[True, False], [False, False], [True, False], [False, True]])
    >>> u, first, inv, cnt = unique_rows(a, True, True, True)
    >>> u.astype(int).tolist(), first.tolist(), inv.tolist(), cnt.tolist()
    ([[0, 0], [0, 1], [1, 0]], [1, 3, 0], [2, 0, 2, 1], [1, 1, 2])
    """
    a = np.asarray(x)
    if _defer(a):
        return np.unique(a, axis=0, return_index=return_index, return_inverse=return_inverse,
                         return_counts=return_counts)
    a = np.ascontiguousarray(a)
    n = len(a)
    order = np.lexsort(a.T[::-1])                # last key primary: column 0 first
    s = a[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(s[1:] != s[:-1], axis=1, out=new[1:])
    out = [s[new]]
    if return_index:
        out.append(order[new])
    if return_inverse:
        inv = np.empty(n, dtype=np.intp)
        inv[order] = np.cumsum(new) - 1
        out.append(inv)
    if return_counts:
        out.append(np.diff(np.concatenate((np.flatnonzero(new), [n]))))
    return tuple(out) if len(out) > 1 else out[0]


def _defer(a: np.ndarray) -> bool:
    """Whether ``np.unique`` itself should answer (see the module)."""
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0 or a.dtype.kind not in "biuf":
        return True
    if a.dtype.kind == "f":
        if np.isnan(a).any():
            return True
        neg = np.signbit(a)
        return bool(neg.any() and (a[neg] == 0).any())
    return False


__all__ = ["unique_rows"]
