"""Counts through many order keys in one pass, by score bins (``auto``'s rank grid and the
ranks of the items fetched; mixed into the DuckDB and Spark engines).

For a key (score s, tie hash t) the items at or before it in the order are those of every
higher score bin (the bins' kept counts and positives, summed from the top) plus those of its
own bin with a higher score, or the same score and a tie hash not larger; the engine counts the
latter by joining the pool with the keys on the bin (:meth:`BinnedCounts._bin_counts`), so
each row meets only the keys of its own bin. An item's rank is that count − 1.

>>> above_bins([(0, 5, 1), (2, 3, 0), (1, 4, 2)])
{2: (0, 0), 1: (3, 0), 0: (7, 2)}
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from assay.engines.base import OrderKeys
from assay.errors import AssayInputError


def above_bins(fine: Iterable[Any]) -> dict[int, tuple[int, int]]:
    """Per score bin, the items and predicted positives of the bins above it, from the rows
    (bin, items, positives, …) of every non-empty bin (positives may be None: 0; further
    columns are ignored)."""
    rows = sorted(((int(r[0]), int(r[1]), int(r[2] or 0)) for r in fine), reverse=True)
    above, n, pos = {}, 0, 0
    for b, c, p in rows:
        above[b] = (n, pos)
        n, pos = n + c, pos + p
    return above


class BinnedCounts:
    """``ranks_of`` and ``counts_through`` by score bins (module docstring). Needs the engine's
    ``describe``, ``source`` and ``_bin_counts(keys, info)`` → (the fine bins' rows (bin,
    items, positives), the joined rows (key index, key bin, items, positives))."""

    bulk_ranks = True

    def ranks_of(self, keys: OrderKeys) -> np.ndarray:
        return self.counts_through(keys)[0] - 1

    def counts_through(self, keys: OrderKeys) -> tuple[np.ndarray, np.ndarray]:
        n = len(keys)
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        info = self.describe()                      # type: ignore[attr-defined]
        if info.score_min == info.score_max:
            return super().counts_through(keys)     # type: ignore[misc]
        fine, got = self._bin_counts(keys, info)    # type: ignore[attr-defined]
        above = above_bins(fine)
        items = np.full(n, -1, dtype=np.int64)
        npos = np.zeros(n, dtype=np.int64)
        for w, kb, c, pp in got:
            a_n, a_p = above.get(int(kb), (0, 0))
            items[int(w)], npos[int(w)] = a_n + int(c), a_p + int(pp or 0)
        if (items < 0).any():
            raise AssayInputError(self.source, "a key to count through lies in no score bin "  # type: ignore[attr-defined]
                                  "of the pool", expected="keys within the pool's score range")
        return items, npos


__all__ = ["BinnedCounts", "above_bins"]
