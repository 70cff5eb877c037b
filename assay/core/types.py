"""The core's data types: how a draw was made, the draws of a run as arrays, and the one result
type of an estimate.

A draw is an item selected by a design, with what an estimator needs to reweight it: its stratum,
its phase (first phase, or a second-phase subsample such as an adjudication) and the probability
it had. ``Kind`` says which probability: the per-draw *selection* probability q of a
with-replacement design (Hansen–Hurwitz), or the first-order *inclusion* probability π of a
without-replacement design (stratified simple random sampling). A draw made by any design can be
used by any estimator valid for its kind.

>>> d = Draws.from_records([(4, 0.5, 1), (7, 0.25, 0)], kind=Kind.INCLUSION)
>>> d.item.tolist(), d.stratum.tolist(), d.kind
([4, 7], [1, 0], <Kind.INCLUSION: 'inclusion'>)
>>> Estimate("f1", 0.5, 0.8, 0.7, 0.9, 0.05, 0.95, "delta").to_dict()
{'estimate': 0.8, 'ci_low': 0.7, 'ci_high': 0.9, 'assumes': None, 'assumption_free': None}
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from assay.errors import EstimationError


class Kind(str, Enum):
    """Which probability a draw carries (a ``str`` enum: stored and compared as its value)."""

    SELECTION = "selection"      # per-draw selection probability q (with replacement)
    INCLUSION = "inclusion"      # first-order inclusion probability π (without replacement)


class Code(IntEnum):
    """Codes that stand beside 0/1 in the label arrays of the two-phase estimators (TREC qrels
    write an unassessable document as −1). They are array encodings only: the label store keeps
    judgments and statuses apart (:mod:`assay.labels.schema`), never a code as a label value.

    >>> int(Code.UNASSESSABLE), int(Code.NOT_ADJUDICATED)
    (-1, -2)
    """

    UNASSESSABLE = -1        # the assessor could not judge the document
    NOT_ADJUDICATED = -2     # no second-phase (authoritative) label was sought


class Phase(IntEnum):
    """First-phase draw, or a second-phase (sub)sample of first-phase draws (double sampling)."""

    FIRST = 1
    SECOND = 2


@dataclass(frozen=True)
class Draw:
    """One draw: the item (pool index), the probability it had under the design, its stratum,
    phase and kind, and its place in decreasing score order where the design knows it."""

    index: int
    probability: float
    stratum: int = 0
    kind: Kind = Kind.SELECTION
    position: int = -1           # rank − 1 in decreasing score order, or −1
    phase: Phase = Phase.FIRST


@dataclass(frozen=True)
class Draws:
    """The draws of a run as arrays (length n each): what every estimator takes."""

    item: np.ndarray             # int64 pool index
    stratum: np.ndarray          # int64
    probability: np.ndarray      # float64 (selection or inclusion, see ``kind``)
    kind: Kind
    phase: np.ndarray | None = None      # int8 (Phase), None = all first phase
    position: np.ndarray | None = None   # int64 rank − 1, where known

    def __post_init__(self) -> None:
        n = self.item.shape[0]
        for name in ("stratum", "probability", "phase", "position"):
            arr = getattr(self, name)
            if arr is not None and arr.shape[0] != n:
                raise EstimationError(f"Draws.{name} has {arr.shape[0]} entries for {n} draws")

    @property
    def size(self) -> int:
        return int(self.item.shape[0])

    @classmethod
    def from_records(cls, records: Iterable[tuple[int, float, int]], kind: Kind) -> "Draws":
        """Draws from (item, probability, stratum) tuples."""
        rows = list(records)
        item = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        prob = np.fromiter((r[1] for r in rows), np.float64, len(rows))
        stratum = np.fromiter((r[2] for r in rows), np.int64, len(rows))
        return cls(item=item, stratum=stratum, probability=prob, kind=Kind(kind))

    @classmethod
    def of(cls, draws: "list[Draw] | DrawColumns") -> "Draws":
        """Arrays of a list of :class:`Draw` (all of one kind)."""
        if isinstance(draws, DrawColumns):
            return draws.columns
        kinds = {Kind(d.kind) for d in draws}
        if len(kinds) > 1:
            raise EstimationError(f"draws of several kinds {sorted(k.value for k in kinds)}")
        n = len(draws)
        return cls(item=np.fromiter((d.index for d in draws), np.int64, n),
                   stratum=np.fromiter((d.stratum for d in draws), np.int64, n),
                   probability=np.fromiter((d.probability for d in draws), np.float64, n),
                   kind=kinds.pop() if kinds else Kind.SELECTION,
                   phase=np.fromiter((int(d.phase) for d in draws), np.int8, n),
                   position=np.fromiter((d.position for d in draws), np.int64, n))


class DrawColumns(Sequence[Draw]):
    """A read-only list of draws kept as the columns of a :class:`Draws` of the first phase:
    what a simulation that made millions of draws hands on
    (:mod:`assay.designs.oasis_lockstep`) without a :class:`Draw` object per draw; an item or
    an iteration makes them, :meth:`Draws.of` takes the columns as they are.

    >>> cols = DrawColumns.first_phase(np.array([4, 2]), np.array([0.5, 0.25]), np.array([0, 1]),
    ...                                np.array([7, 3]), Kind.SELECTION)
    >>> len(cols), cols[1].index, Draws.of(cols).probability.tolist()
    (2, 2, [0.5, 0.25])
    """

    def __init__(self, columns: Draws) -> None:
        if columns.phase is None or columns.position is None:
            raise EstimationError("DrawColumns needs the phase and position columns")
        self.columns = columns

    @classmethod
    def first_phase(cls, item: np.ndarray, probability: np.ndarray, stratum: np.ndarray,
                    position: np.ndarray, kind: Kind) -> "DrawColumns":
        n = item.shape[0]
        return cls(Draws(item=item.astype(np.int64), stratum=stratum.astype(np.int64),
                         probability=probability.astype(np.float64), kind=kind,
                         phase=np.full(n, int(Phase.FIRST), np.int8),
                         position=position.astype(np.int64)))

    def __len__(self) -> int:
        return self.columns.size

    def _one(self, i: int) -> Draw:
        c = self.columns
        assert c.phase is not None and c.position is not None
        return Draw(int(c.item[i]), float(c.probability[i]), int(c.stratum[i]), c.kind,
                    int(c.position[i]), Phase(int(c.phase[i])))

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self._one(i % n)

    def __iter__(self) -> Iterator[Draw]:
        return (self._one(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


@dataclass(frozen=True)
class Estimate:
    """The one result type of an estimate: value, interval, standard error, how the interval
    was made (``method``: delta, exact, components, counts, tiers, census, model, wald, logit, log,
    jeffreys, undefined) and notes.

    ``extra`` carries method-specific facts (e.g. the design-based interval beside a model's,
    or a bound on what unseen strata could hold). ``assumes``: what the interval rests on beyond
    the sampling design, in one plain line (None: nothing); ``assumption_free``: the interval
    that rests on nothing but the design (:mod:`assay.core.bounds`), when computed."""

    measure: str
    alpha: float
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    std_error: float | None
    confidence: float
    method: str
    n_effective: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    assumes: str | None = None
    assumption_free: tuple[float, float] | None = None

    @property
    def defined(self) -> bool:
        return self.estimate is not None

    def covers(self, truth: float) -> bool:
        return self.defined and self.ci_low <= truth <= self.ci_high  # type: ignore[operator]

    def to_dict(self) -> dict[str, Any]:
        free = self.assumption_free
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "assumes": self.assumes,
                "assumption_free": None if free is None else {"ci_low": free[0],
                                                              "ci_high": free[1]}}


__all__ = ["Code", "Draw", "DrawColumns", "Draws", "Estimate", "Kind", "Phase"]
