"""The on-demand campaign without a store, for simulations: systems arrive in turn, each gets
the draws :func:`assay.ondemand.joint.next_draws` asks for, labelled at once from the truth.
Same rule, same universe (the pool of the systems so far, rows in key order) and same seeded
generators as :class:`assay.ondemand.campaign.OnDemandCampaign`, so for keys that sort like
the rows it makes the campaign's draws (tests/test_ondemand_campaign.py checks)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.ondemand import joint, planning
from assay.ondemand.campaign import MAX_ROUNDS, MINIMUM_DRAWS


@dataclass(frozen=True)
class InTurn:
    """Draws of a campaign run in turn: system, set (own/novel/fill), item row (of ``memb``),
    label; the new labels each submission paid for; each system's fill density over the rows
    of ``memb`` (a zero column when it drew from none)."""

    system: np.ndarray
    kind: np.ndarray
    item: np.ndarray
    f: np.ndarray
    labels_by_system: np.ndarray
    fill: np.ndarray | None = None

    def src(self, m: int) -> np.ndarray:
        """Proposal indices for a universe of the first m systems."""
        return joint.proposal_index(self.system, self.kind, m)

    def universe(self, memb: np.ndarray, target: np.ndarray | None = None
                 ) -> tuple[joint.Universe, np.ndarray]:
        """The pool of ``memb``'s systems as a universe (with the fill proposals the campaign
        made; ``target`` densities over ``memb``'s rows, if any) and each draw's row of it."""
        rows = np.flatnonzero(memb.any(axis=1))
        local = np.full(memb.shape[0], -1)
        local[rows] = np.arange(len(rows))
        fill = None if self.fill is None else self.fill[rows][:, :memb.shape[1]]
        tg = None if target is None else np.asarray(target)[rows]
        return joint.Universe(memb[rows], fill=fill, target=tg), local[self.item]


def in_turn(memb: np.ndarray, truth: np.ndarray, half_width: float | np.ndarray,
            confidence: float = 0.90, seed: int = 0, submission_cap: int = 1000,
            campaign_cap: int | None = None, sampling: np.ndarray | None = None) -> InTurn:
    """Run the campaign over systems 0, 1, … of ``memb`` (items × systems) in turn;
    ``half_width`` one target for all, or one per system. ``sampling`` (items × systems): each
    system's level distribution (:func:`assay.ondemand.structured.level_density`) to draw
    every one of its draws from, as ``OnDemandCampaign.submit(..., sampling=level)``."""
    m = memb.shape[1]
    targets = np.broadcast_to(np.asarray(half_width, dtype=np.float64), (m,))
    system: list[int] = []
    kinds: list[str] = []
    item: list[int] = []
    seen: set[int] = set()
    paid = np.zeros(m, dtype=np.int64)
    fill = np.zeros(memb.shape, dtype=np.float64)
    for t in range(m):
        rows = np.flatnonzero(memb[:, :t + 1].any(axis=1))
        local = np.full(memb.shape[0], -1)
        local[rows] = np.arange(len(rows))
        for r in range(MAX_ROUNDS + 1):
            uni = joint.Universe(memb[rows][:, :t + 1], fill=fill[rows][:, :t + 1])
            sets = {joint.OWN: np.flatnonzero(uni.memb[:, t]),
                    joint.NOVEL: np.flatnonzero(uni.novel()[:, t])}
            s = joint.proposal_index(np.array(system, dtype=np.int64),
                                     np.array(kinds, dtype=object), t + 1)
            idx = np.array(item, dtype=np.int64)
            it, f = local[idx], truth[idx].astype(np.float64)
            own = int(np.count_nonzero(np.array(system, dtype=np.int64) == t))
            room = submission_cap - own
            if campaign_cap is not None:
                room = min(room, campaign_cap - len(seen))
            allowed = planning.KINDS if sampling is None else (joint.FILL,)
            d, kind = planning.next_draws(uni, s, it, f, t, r, room, float(targets[t]),
                                          confidence, MAX_ROUNDS, MINIMUM_DRAWS, kinds=allowed)
            if d == 0:
                break
            rng = np.random.default_rng([seed, t, r])
            if kind == joint.FILL:
                if not fill[:, t].any():
                    fill[rows, t] = (planning.new_fill(uni, s, f, t, d) if sampling is None
                                     else sampling[rows, t])
                dens = fill[rows, t]
                picks = rows[rng.choice(len(rows), size=d, p=dens / dens.sum())]
            else:
                picks = rows[rng.choice(sets[kind], size=d, replace=True)]
            for p in picks.tolist():
                system.append(t)
                kinds.append(kind)
                item.append(p)
                if p not in seen:
                    seen.add(p)
                    paid[t] += 1
    idx = np.array(item, dtype=np.int64)
    return InTurn(np.array(system, dtype=np.int64), np.array(kinds, dtype=object), idx,
                  truth[idx].astype(np.float64), paid, fill)


@dataclass(frozen=True)
class World:
    """A simulated corpus: items (``unit`` each), which are true, and m systems' outputs."""

    unit: np.ndarray
    truth: np.ndarray
    memb: np.ndarray

    def keys(self) -> np.ndarray:
        """Item keys that sort like the rows."""
        return np.array([f"i{k:07d}" for k in range(len(self.truth))], dtype=object)


def world(seed: int, n_units: int = 500, per_unit: int = 10, m: int = 6,
          sizes: tuple[int, int] = (300, 900), rate: float = 0.15) -> World:
    """Overlapping systems of different precision and recall that all miss some true items:
    each ranks the items by a shared ease plus its own noise plus a shift on true items, and
    outputs its top ``sizes``-range many."""
    rng = np.random.default_rng(seed)
    n = n_units * per_unit
    unit = np.repeat(np.arange(n_units), per_unit)
    truth = rng.random(n) < rate
    easy = rng.random(n)
    memb = np.zeros((n, m), dtype=bool)
    for k in range(m):
        score = easy + rng.normal(0, 0.7, n) + rng.uniform(0.5, 1.5) * truth
        memb[np.argsort(-score)[:int(rng.integers(*sizes))], k] = True
    return World(unit, truth, memb)


__all__ = ["InTurn", "World", "in_turn", "world"]
