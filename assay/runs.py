"""What a run is: its identity (the run key and the pool's fingerprint), the items it requests,
the draws it collected, and the judgments it knows of.

>>> Collected().distinct
0
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from assay.core.types import Draw
from assay.designs.settings import DesignSettings
from assay.formats.pool import Pool
from assay.labels.schema import Status
from assay.labels.sources import SKIP, UNDO
from assay.labels.store import Judgment, LabelStore


@dataclass
class Collected:
    """What a sampling loop produced: draws, their labels, and the distinct items labelled."""

    draws: list[Draw] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    labelled: dict[int, int] = field(default_factory=dict)   # pool index -> label
    skipped: set[int] = field(default_factory=set)

    @property
    def distinct(self) -> int:
        return len(self.labelled)


@dataclass(frozen=True)
class ItemRequest:
    """An item that needs a judgment from ``annotator``, and the draw that brought it."""

    index: int
    key: str
    annotator: str
    draw: Draw


@dataclass(frozen=True)
class Undo:
    """Withdraw ``annotator``'s most recent judgment in this campaign; it is asked again."""

    annotator: str


def pool_fingerprint(pool: Pool) -> str:
    """Ids, predictions, scores and probabilities: a re-scored pool is another pool."""
    h = hashlib.sha256(pool.fingerprint().encode())
    for arr in (pool.score, pool.probability):
        h.update(b"-" if arr is None else np.ascontiguousarray(arr, np.float64).tobytes())
    return h.hexdigest()[:16]


def run_key(settings: DesignSettings, dataset: str, pool: str, seed: int,
            annotator: str) -> str:
    """The run's identity: the settings that differ from their defaults (so a new field with
    a default never changes a key), dataset, pool fingerprint, seed and annotator."""
    blob = json.dumps([settings.name, settings.changed(), dataset, pool, str(seed), annotator],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class Judgments:
    """Known judgments per annotator: the store's (read once, then kept up to date) or memory."""

    def __init__(self, store: LabelStore | None, dataset: str) -> None:
        self.store, self.dataset = store, dataset
        self.by: dict[str, dict[str, Judgment]] = {}

    def of(self, annotator: str) -> dict[str, Judgment]:
        if annotator not in self.by:
            self.by[annotator] = ({} if self.store is None else
                                  {j.item: j for j in self.store.judgments(self.dataset,
                                                                           annotator)})
        return self.by[annotator]


def as_entry(request: ItemRequest, answer: int) -> Judgment | Undo:
    """What the campaign records for a label source's ``answer`` to ``request``: a judgment,
    the status *skipped*, or an undo.

    >>> as_entry(ItemRequest(3, "k3", "ann", Draw(3, 0.5)), 1).value
    1
    """
    if answer == UNDO:
        return Undo(request.annotator)
    if answer == SKIP:
        return Judgment(request.key, request.annotator, None, Status.SKIPPED)
    return Judgment(request.key, request.annotator, int(answer))


__all__ = ["Collected", "ItemRequest", "Undo", "as_entry", "pool_fingerprint", "run_key"]
