"""One campaign: the step API that the CLI, the terminal annotator and the simulations drive.

``Campaign.open(...)`` finds or creates the run (its identity: design name, the settings that
differ from their defaults, dataset, pool fingerprint with scores, seed, annotator — not the
budget), replays its stored draws (the design is deterministic given the seed and the labels;
each budget extension is replayed at the draw where it took effect), then

* ``next_items(k)`` → the items still needing a judgment, each with the draw that brought it;
* ``record(judgments)`` → writes judgments, statuses (skipped, …) or an :class:`Undo` (of a
  judgment or of a skip: the item is asked again and, once judged, joins the sample, stored as
  a ``reinstated`` draw so a resumed run replays it); recording the same judgment twice is a
  no-op, and when two processes judge one item the first wins;
* ``estimate()`` → precision, recall and F1 from the draws so far
  (:func:`assay.estimation.estimate_all`).

Raising the budget continues the run: once the previous budget is complete the design is
extended (:meth:`assay.designs.base.Design.extend`) and every earlier label counts. Without a
store, judgments live in memory (simulations).
"""
from __future__ import annotations

import hashlib
import time
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from assay.core.types import Draw, Estimate
from assay.core.vote import NO_LABEL, panel_decision
from assay.designs import Design, build_design
from assay.designs.settings import DesignSettings, settings_from_dict
from assay.errors import AssayInputError
from assay.estimation import estimate_all
from assay.formats.pool import Pool
from assay.labels.store import (Judgment, LabelStore, Role, Status, StoredDraw,
                                claim_token)
from assay.runs import Collected, ItemRequest, Judgments, Undo, pool_fingerprint, run_key
from assay.undo import REINSTATED, _SKIP, Undoing

MAX_DRAWS_PER_LABEL = 1000
MAX_SEED = 2**63 - 1


def default_dataset(pool: Pool) -> str:
    """The dataset a pool's labels go to when none is named: the file's stem, or for an
    in-memory pool a fingerprint of its set of ids (so pools with other ids never share)."""
    if pool.source and not pool.source.startswith("<"):
        from pathlib import Path
        return Path(pool.source).stem[:200]
    ids = np.sort(pd.util.hash_pandas_object(pool.ids, index=False).to_numpy())
    return "pool-" + hashlib.sha256(ids.tobytes()).hexdigest()[:12]


class Campaign(Undoing):
    """See the module docstring; create with :meth:`open`."""

    def __init__(self, store: LabelStore | None, pool: Pool, settings: DesignSettings,
                 seed: int, dataset: str, annotators: Sequence[str], budget: int,
                 confidence: float, interval: str, role: Role, panel_name: str,
                 design: Design | None = None) -> None:
        self.store, self.pool, self.settings, self.seed = store, pool, settings, seed
        self.dataset, self.members, self.role = dataset, list(annotators), role
        self.annotator, self.confidence, self.interval = panel_name, confidence, interval
        self.budget = int(budget)
        self.target = min(self.budget, pool.size)
        self.notes: list[str] = []
        self.observer: Callable[["Campaign"], None] | None = None   # called after each draw
        self.token = claim_token()
        self.poll_seconds = 0.02
        self.known = Judgments(store, dataset)
        self.collected = Collected()
        self.new = self.reused = self.votes = self.disagreements = 0
        self._counted: set[tuple[str, str]] = set()
        self._mine: list[tuple[str, str]] = []          # (annotator, item) recorded here, in order
        self._mine_set: set[tuple[str, str]] = set()
        self._undone: dict[tuple[str, str], Judgment | None] = {}
        self._rescored_since: int | None = None
        self._reask: list[tuple[int, str, str]] = []
        self._pending: Draw | None = None
        self._pending_draws: list[tuple[int, StoredDraw]] = []
        self._held: dict[int, Draw] = {}            # skipped draws the design replaced
        self._prior: np.ndarray | None = None       # the pool's P(ℓ = 1), once asked for
        self.run_id, stored, ext = -1, [], [(self.target, 0)]
        self._fp = pool_fingerprint(pool) if store is not None else ""
        if store is not None:
            key = run_key(settings, dataset, self._fp, seed, panel_name)
            run = store.open_run(key, dataset=dataset, pool=self._fp, pool_ids=pool.fingerprint(),
                                 design=settings.name, settings=settings.to_dict(), seed=seed,
                                 annotator=panel_name, budget=self.target)
            self.run_id, stored, ext = run.id, run.draws, run.extensions
            # a run found again is drawn with the settings it saved: the key leaves out
            # settings at their default, so a run stored before a new default (OASIS's and
            # the stratified design's detection floors) must not be replayed with it
            self.settings = settings = settings_from_dict(run.settings, settings.name)
        self._stored = stored
        self._late = {d.item: d.seq for d in stored if d.kind == REINSTATED}
        self._ext = list(ext)
        self._applied = 1
        self.design: Design = design if design is not None else build_design(
            settings, n=pool.size, predictions=pool.prediction,
            score=pool.score if pool.score is not None else pool.probability,
            prior=pool.prior_probability(), budget=self._ext[0][0],
            rng=np.random.default_rng(seed))
        self._cap = MAX_DRAWS_PER_LABEL * max(self.target, 1)
        if budget > pool.size:
            self.notes.append(f"the budget {budget} exceeds the pool's {pool.size} items: "
                              f"capped at {pool.size} distinct labels")

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, store: LabelStore | None, pool: Pool, settings: DesignSettings, seed: int,
             dataset: str, annotator: str | Sequence[str], budget: int,
             confidence: float = 0.95, interval: str = "auto",
             role: Role = Role.ASSESSOR, design: Design | None = None) -> "Campaign":
        """The campaign of this run. ``annotator``: one name, or the members of a panel whose
        majority is the label (asked in order until a strict majority). ``design``: a design
        already built (simulations that share precomputed strata), for a campaign without a
        store only (a stored run rebuilds its design from its saved settings)."""
        if design is not None and store is not None:
            raise ValueError("a prebuilt design is for in-memory campaigns (store=None)")
        if not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= MAX_SEED:
            raise AssayInputError("--seed", repr(seed), expected="an integer in [0, 2^63 − 1]")
        if budget < 1:
            raise AssayInputError("--budget", f"{budget}", expected="a positive number of "
                                                                    "labels")
        members = [annotator] if isinstance(annotator, str) else list(annotator)
        name = members[0] if len(members) == 1 else "majority(" + ",".join(members) + ")"
        if store is not None:
            store.claim_dataset(dataset, pool.id_columns)
        camp = cls(store, pool, settings, int(seed), dataset, members, budget, confidence,
                   interval, role, name, design)
        camp._note_rescored()
        return camp

    def _note_rescored(self) -> None:
        if self.store is None:
            return
        other = [rid for rid, fp in self.store.related_runs(
            self.dataset, self.pool.fingerprint(), self.settings.name, self.seed,
            self.annotator, self.run_id) if fp != self._fp]
        if other:
            self._rescored_since = other[-1]

    # -- stepping --------------------------------------------------------------------------
    @property
    def _design_budget(self) -> int:
        return min(self._ext[self._applied - 1][0], self.pool.size)

    def _apply_extensions(self) -> None:
        seq = len(self.collected.draws)
        while self._applied < len(self._ext) and self._ext[self._applied][1] <= seq:
            self.design.extend(self._ext[self._applied][0])
            self._applied += 1

    def _segment_done(self) -> bool:
        c = self.collected
        return c.distinct >= self._design_budget or self.design.exhausted()

    def finished(self) -> bool:
        """True when the budget is reached, the pool is used up or the design has no more."""
        c = self.collected
        if self._reask or self._pending is not None:
            return False
        if (self._applied == len(self._ext) and len(c.draws) < self._cap
                and c.distinct < min(self.target, self._design_budget)
                and c.distinct + len(c.skipped) < self.pool.size
                and not self.design.exhausted()):
            return False                    # the common case, checked cheaply (every draw)
        if c.distinct >= self.target or c.distinct + len(c.skipped) >= self.pool.size:
            return True
        if len(c.draws) >= self._cap:
            self.notes.append(f"stopped after {len(c.draws)} draws")
            return True
        self._apply_extensions()
        if not self._segment_done():
            return False
        if self._applied < len(self._ext):
            return False
        if self.target <= self._design_budget:
            return True
        self._extend()
        return not (self.collected.distinct < self._design_budget and not
                    self.design.exhausted())

    def raise_budget(self, budget: int) -> None:
        """Continue this campaign to a larger budget (the same as opening the run again with
        it): once the current budget is complete the design is extended."""
        if budget > self.budget:
            self.budget = int(budget)
            self.target = min(self.budget, self.pool.size)
            self._cap = MAX_DRAWS_PER_LABEL * max(self.target, 1)

    def _extend(self) -> None:
        at = len(self.collected.draws)
        if self.store is not None:
            self._ext = self.store.extend_run(self.run_id, self.target, at)
        else:
            self._ext.append((self.target, at))
        self._apply_extensions()

    def next_items(self, k: int = 1) -> list[ItemRequest]:
        """Up to ``k`` items needing a judgment: the ones withdrawn by an undo first, then the
        item of the current draw (designs are sequential: the next draw may depend on this
        label, so at most one new item is outstanding). Empty when the campaign is done."""
        while True:
            if (self._late and self._pending is None and self.collected.distinct
                    >= self._design_budget and self._replay_reinstated()):
                continue          # the live run took it back after its budget was complete
            if self._pending is None and (not self._reask or self._late_not_drawn()):
                if self.finished():
                    return []
                self._pending = self._next_draw()
                if self._pending is None:
                    continue
            if self._late and self._replay_reinstated():
                continue
            if self._reask:
                return [ItemRequest(i, key, who, Draw(i, 0.0)) for i, key, who in self._reask[:k]]
            d = self._pending
            assert d is not None
            known = self.collected.labelled.get(d.index)
            if known is not None:           # a repeat draw reuses its label (hot path)
                self._pending = None
                self._accept(d, None, known)
                continue
            key = self.pool.key(d.index)
            res = self._resolve(key)
            if isinstance(res, str):
                if self._claim(key, res):
                    return [ItemRequest(d.index, key, res, d)]
                continue
            self._pending = None
            self._accept(d, key, res)

    def _claim(self, key: str, who: str) -> bool:
        """True when this campaign may ask ``who`` about ``key``; False when the store already
        holds an entry (judged by another process meanwhile: use it). Waits while another live
        process has the item pending, so no item is asked twice."""
        if self.store is None:
            return True
        while True:
            got = self.store.claim(self.dataset, key, who, self.token)
            if got is None:
                return True
            if got.status != Status.PENDING:
                self.known.of(who)[key] = got
                return False
            time.sleep(self.poll_seconds)

    def close(self) -> None:
        """Write the draws not yet stored and drop this campaign's unanswered claims."""
        self.flush()
        if self.store is not None:
            self.store.release(self.dataset, self.token)

    def _next_draw(self) -> Draw | None:
        d = self.design.draw()
        c = self.collected
        if d.index in c.skipped:
            return None
        if self._late and d.index not in c.labelled and self._replay_skip(d):
            return None
        return d

    def _accept(self, d: Draw, key: str | None, label: int, kind: str | None = None) -> None:
        c = self.collected
        if label == _SKIP:
            c.skipped.add(d.index)
            self._held[d.index] = d
            self.design.skip(d)
            return
        seq = len(c.draws)
        c.labelled.setdefault(d.index, label)
        c.draws.append(d)
        c.labels.append(c.labelled[d.index])
        self.design.update(d, c.labelled[d.index])
        if self.observer is not None:
            self.observer(self)
        if self.store is None:
            return
        key = self.pool.key(d.index) if key is None else key
        sd = StoredDraw(seq, key, d.stratum, d.probability,
                        kind or str(getattr(d.kind, "value", d.kind)))
        if seq < len(self._stored):
            if self._stored[seq].item != key:
                raise AssayInputError(self.store.location, f"stored run {self.run_id} drew "
                                      f"{self._stored[seq].item!r} at draw {seq + 1} but the "
                                      f"replay drew {key!r}", expected="the same pool, design "
                                      "and seed as the stored run")
            return
        self._pending_draws.append((self.run_id, sd))
        if len(self._pending_draws) >= 500:
            self.flush()

    def _resolve(self, key: str) -> int | str:
        """The item's label (0/1), ``_SKIP``, or the name of the annotator to ask next (a
        panel asks in turn until :func:`assay.core.vote.panel_decision` decides)."""
        count = [0, 0]
        m = len(self.members)
        for j, who in enumerate(self.members):
            entry = self.known.of(who).get(key)
            if entry is None or entry.status == Status.PENDING:
                return who
            if entry.status == Status.JUDGED:
                v = int(entry.value)  # type: ignore[arg-type]
                count[int(v > 0)] += 1
                self._count(who, key)
                if m == 1:
                    return v
            decided = panel_decision(count[1], count[0], m - j - 1, m)
            if decided is not None:
                self._panel_stats(count)
                return _SKIP if decided == NO_LABEL else decided
        if m > 1:
            self._panel_stats(count)
        return _SKIP

    def _panel_stats(self, count: list[int]) -> None:
        self.votes += sum(count)
        self.disagreements += min(count) > 0

    def _count(self, who: str, key: str) -> None:
        if (who, key) not in self._counted:
            self._counted.add((who, key))
            if (who, key) not in self._mine_set:
                self.reused += 1

    # -- recording -------------------------------------------------------------------------
    def record(self, judgments: Iterable[Judgment | Undo]) -> None:
        """Write judgments (values or statuses) or undos. A judgment already stored for the
        item and annotator is kept (the first wins; recording it again is a no-op)."""
        for j in judgments:
            if isinstance(j, Undo):
                self._undo(j.annotator)
                continue
            reask = [r for r in self._reask if r[1] == j.item and r[2] == j.annotator]
            if reask:
                self._record_reask(reask[0], j)
                continue
            before = self.known.of(j.annotator).get(j.item)
            got = self._write([j]).get((j.item, j.annotator), j)
            if before is None and got == j and j.status != Status.PENDING:
                self._mine.append((j.annotator, j.item))      # a skip can be undone too
                self._mine_set.add((j.annotator, j.item))
                self.new += j.status == Status.JUDGED

    def _write(self, js: list[Judgment], replace: bool = False) -> dict[tuple[str, str],
                                                                        Judgment]:
        if self.store is None:
            out = {}
            for j in js:
                table = self.known.of(j.annotator)
                if replace or j.item not in table:
                    table[j.item] = j
                out[(j.item, j.annotator)] = table[j.item]
            return out
        out = self.store.record(self.dataset, js, replace=replace, draws=self._pending_draws)
        self._pending_draws = []
        for (item, who), got in out.items():
            self.known.of(who)[item] = got
        return out

    def flush(self) -> None:
        """Write draws not yet stored (they are also written with the next judgment)."""
        if self.store is not None and self._pending_draws:
            self.store.add_draws(self._pending_draws)
            self._pending_draws = []

    # -- results ---------------------------------------------------------------------------
    def estimate(self, bounds: bool = True) -> dict[str, Estimate]:
        """Precision, recall and F1 from the draws so far (``bounds``: with the
        assumption-free intervals)."""
        if self._prior is None:
            self._prior = self.pool.prior_probability()
        return estimate_all(self.design, self.collected, self.pool.prediction, self.confidence,
                            interval=self.interval, bounds=bounds, prior=self._prior)

    def result_notes(self) -> list[str]:
        """What the user should know about this run (capped budget, re-scored pool, …)."""
        notes = list(dict.fromkeys(self.notes))
        since = self._rescored_since
        if since is not None:
            notes.append(f"pool re-scored since run {since}: a new run; {self.reused} stored "
                         f"labels reused where drawn")
        if self.target < self._ext[-1][0] and self.collected.distinct >= self.target:
            notes.append(f"run {self.run_id} went to {self._ext[-1][0]} labels; this result "
                         f"uses its first {self.collected.distinct}")
        return notes


__all__ = ["Campaign", "MAX_SEED", "default_dataset"]
