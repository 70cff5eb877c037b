"""The one majority vote of assay.

An item's votes are counted as (ones, zeros); its majority label is 1 when ones > zeros and 0
when zeros > ones, provided the winning side holds at least ``quorum`` votes (a panel of m
annotators asks for ⌊m/2⌋ + 1). Otherwise — a tie, or too few votes — the :class:`Tie` rule
decides: ``ABSTAIN`` gives no label (−1: the item stays unlabelled, a status, not a value),
``ZERO``/``ONE`` a fixed label, ``RANDOM`` a fair coin from the caller's seeded Generator.

>>> majority(np.array([2, 1, 1, 0]), np.array([1, 1, 0, 0])).tolist()
[1, -1, 1, -1]
>>> majority(np.array([1, 1]), np.array([1, 0]), quorum=2, tie=Tie.ZERO).tolist()
[0, 0]
"""
from __future__ import annotations

from enum import Enum

import numpy as np

from assay.errors import EstimationError

NO_LABEL = -1


class Tie(str, Enum):
    """What a tie (or a vote short of the quorum) becomes."""

    ABSTAIN = "abstain"
    ZERO = "zero"
    ONE = "one"
    RANDOM = "random"


def majority(ones: np.ndarray, zeros: np.ndarray, *, quorum: int = 1, tie: Tie = Tie.ABSTAIN,
             rng: np.random.Generator | None = None) -> np.ndarray:
    """Majority label per item from its counts of 1-votes and 0-votes (module docstring);
    −1 where there is none.

    >>> majority(np.array([1]), np.array([1]), tie=Tie.RANDOM,
    ...          rng=np.random.default_rng(0)).tolist()
    [1]
    """
    ones, zeros = np.asarray(ones), np.asarray(zeros)
    out = np.full(ones.shape, NO_LABEL, dtype=np.int64)
    out[(ones > zeros) & (ones >= quorum)] = 1
    out[(zeros > ones) & (zeros >= quorum)] = 0
    open_ = (out == NO_LABEL) & (ones + zeros > 0)
    tie = Tie(tie)
    if tie is Tie.ZERO or tie is Tie.ONE:
        out[open_] = int(tie is Tie.ONE)
    elif tie is Tie.RANDOM and open_.any():
        if rng is None:
            raise EstimationError("a random tie rule needs the caller's seeded Generator")
        out[open_] = rng.integers(0, 2, size=int(open_.sum()))
    return out


def panel_decision(ones: int, zeros: int, remaining: int, size: int) -> int | None:
    """A panel of ``size`` annotators asked in turn: the label once a strict majority of the
    panel (⌊m/2⌋ + 1 of m votes) agrees, ``NO_LABEL`` once the ``remaining`` members can no
    longer make one, None while undecided (ask the next member).

    >>> panel_decision(1, 1, 1, 3) is None, panel_decision(2, 1, 0, 3), panel_decision(1, 0, 0, 3)
    (True, 1, -1)
    """
    need = size // 2 + 1            # majority(…, quorum=need) for one item, in integers
    if ones > zeros and ones >= need:
        return 1
    if zeros > ones and zeros >= need:
        return 0
    return NO_LABEL if max(ones, zeros) + remaining < need else None


__all__ = ["NO_LABEL", "Tie", "majority", "panel_decision"]
