"""The run manifest: what another engine needs to resume or verify a run — the hash spec, the
seed, the strata edges, the stratum sizes and the pool's fingerprint.

>>> m = RunManifest(seed=7, edges=OrderKeys.score_cuts([0.5]), sizes=(3, 5),
...                 fingerprint="0db38b82aeb8eb71", engine="memory")
>>> RunManifest.from_dict(m.to_dict()) == m
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.engines.base import Engine, OrderKeys
from assay.engines.hashing import HASH_SPEC, check_seed


@dataclass(frozen=True, eq=False)
class RunManifest:
    """Seed, strata (edges in ranking order, sizes) and pool fingerprint of a run."""

    seed: int
    edges: OrderKeys
    sizes: tuple[int, ...]
    fingerprint: str
    engine: str = ""
    hash_spec: str = HASH_SPEC
    extra: dict[str, Any] = field(default_factory=dict)   # e.g. the strata method and its options

    def __post_init__(self) -> None:
        check_seed(self.seed)
        if len(self.sizes) != len(self.edges) + 1:
            raise ValueError(f"{len(self.sizes)} stratum sizes for {len(self.edges)} edges "
                             "(expected one more size than edges)")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunManifest):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (ties as decimal strings: JSON numbers lose 64-bit integers)."""
        return {"hash_spec": self.hash_spec, "seed": int(self.seed), "edges": self.edges.to_dict(),
                "sizes": [int(s) for s in self.sizes], "fingerprint": self.fingerprint,
                "engine": self.engine, "extra": dict(self.extra)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunManifest":
        if d.get("hash_spec") != HASH_SPEC:
            raise ValueError(f"manifest hash spec {d.get('hash_spec')!r}; this assay computes "
                             f"{HASH_SPEC!r}")
        return cls(int(d["seed"]), OrderKeys.from_dict(d["edges"]),
                   tuple(int(s) for s in d["sizes"]), str(d["fingerprint"]),
                   str(d.get("engine", "")), str(d["hash_spec"]), dict(d.get("extra", {})))

    @classmethod
    def build(cls, engine: Engine, seed: int, edges: OrderKeys, **extra: Any) -> "RunManifest":
        """The manifest of a run with ``edges`` on ``engine`` (one counting pass)."""
        sizes = engine.segment_counts(edges).sizes
        return cls(int(seed), edges, tuple(int(s) for s in sizes),
                   engine.describe().fingerprint, engine.name, HASH_SPEC, dict(extra))

    def verify(self, engine: Engine) -> list[str]:
        """What differs on ``engine`` (fingerprint, stratum sizes); empty when the run can be
        resumed there."""
        problems = []
        fp = engine.describe().fingerprint
        if fp != self.fingerprint:
            problems.append(f"pool fingerprint {fp} differs from the run's {self.fingerprint}")
        sizes = engine.segment_counts(self.edges).sizes
        if not np.array_equal(sizes, np.asarray(self.sizes)):
            problems.append(f"stratum sizes {sizes.tolist()} differ from the run's "
                            f"{list(self.sizes)}")
        return problems


__all__ = ["RunManifest"]
