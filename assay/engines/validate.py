"""What every engine checks the same way: the id columns and the fingerprint's format."""
from __future__ import annotations

import hashlib
from typing import Sequence

from assay.errors import AssayInputError

ID_CANDIDATES: tuple[tuple[str, ...], ...] = (("id",), ("item_id",), ("left_id", "right_id"),
                                                ("docno",))


def pick_id_columns(source: str, columns: list[str], id_columns: Sequence[str] | None
                    ) -> list[str]:
    """The id columns: those named, else the first of ``id``, ``item_id``, (``left_id``,
    ``right_id``), ``docno`` present (as :func:`assay.formats.pool.load_pool`).

    >>> pick_id_columns("p.parquet", ["left_id", "right_id", "score"], None)
    ['left_id', 'right_id']
    """
    if id_columns:
        missing = [c for c in id_columns if c not in columns]
        if missing:
            raise AssayInputError(source, f"missing id column(s) {missing}",
                                  expected=f"columns among {columns}")
        return list(id_columns)
    for cand in ID_CANDIDATES:
        if all(c in columns for c in cand):
            return list(cand)
    raise AssayInputError(source, "no id column found",
                          expected="a column 'id', 'item_id', or 'left_id' and 'right_id'")


def fingerprint_of(rows: int, sum_all: int, sum_positive: int) -> str:
    """The pool fingerprint: 16 hex digits of SHA-256 of ``v1:N:Σh₁:Σh₂`` where Σh₁ sums
    h(2⁶⁴−2, key) over every item and Σh₂ sums h(2⁶⁴−3, key) over predicted positives, both
    mod 2⁶⁴ — independent of row order, so every engine computes it in one pass.

    >>> fingerprint_of(0, 0, 0)
    '0db38b82aeb8eb71'
    """
    mask = (1 << 64) - 1
    text = f"v1:{rows}:{sum_all & mask}:{sum_positive & mask}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["ID_CANDIDATES", "fingerprint_of", "pick_id_columns"]
