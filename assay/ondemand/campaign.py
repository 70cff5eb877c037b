"""An on-demand, open-world evaluation campaign over many systems (seeds 000 and 001), kept in the
label store and resumable.

Systems' outputs are sets of items of one universe, each item named by a canonical key (one label
serves every system that output it). Submissions arrive one at a time; :meth:`submit`:

1. records the system, its output (fingerprint and keys) and its items' structure;
2. asks the label source for every drawn item of the system that has no label yet (a claim in the
   label store first, so concurrent processes never ask one item twice);
3. draws in two stages (Stein's two-stage rule, :func:`assay.ondemand.planning.next_draws`): a
   first stage whose size is fixed before any of the system's labels (from the target width and
   the part of its output no earlier system output), labelled as in 2; then one second stage,
   sized from the labels that existed before the submission and from where the first stage
   drew, never from what the first stage's labels showed (that made the stage sizes depend on
   the first stage's mean and biased the estimates, :func:`assay.ondemand.planning.
   planning_labels`): the least number of new draws — from the system's output, from the part
   of it no earlier system output, or from a fill proposal that raises its least-sampled items
   to one level, whichever needs fewest new labels — that brings the planning variance to the
   target (:mod:`assay.ondemand.planning`; none when the first stage already does), within the
   per-submission and campaign caps; each stage's
   draws are stored in one transaction. The submission then stops: it never samples on until
   its realised width happens to be met (optional stopping biased early-stopping systems).

Everything is driven by what the store holds (draws, judgments, the finished flag) and the draws
of round r come from a generator seeded by (campaign seed, system order, r): a campaign killed at
any point resumes by submitting the same system again, with no label lost or asked twice.

:meth:`report` re-estimates every system jointly: precision, open-world recall θ̂ν̂ (once units
are annotated exhaustively, :meth:`annotate_units`), F1, and the pooled (closed-world) recall.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from assay.core.types import Estimate
from assay.errors import AssayInputError
from assay.labels.sources import SKIP, LabelSource
from assay.labels.store import Judgment, LabelStore, Status, claim_token
from assay.ondemand import joint, planning, structured
from assay.ondemand.store import CampaignRow, OnDemandStore, SystemRow, fingerprint

MAX_ROUNDS = 4
MINIMUM_DRAWS = 10
MEASURES = ("precision", "recall", "f1", "pooled_recall")


@dataclass(frozen=True)
class SystemReport:
    """One system's estimates in a campaign report."""

    name: str
    size: int
    draws: int
    labels_used: int
    finished: bool
    estimates: dict[str, Estimate]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"system": self.name, "size": self.size, "draws": self.draws,
                               "labels_used": self.labels_used, "finished": self.finished}
        for k in MEASURES:
            e = self.estimates[k]
            out[k] = {"estimate": e.estimate, "ci_low": e.ci_low, "ci_high": e.ci_high}
        return out


@dataclass(frozen=True)
class CampaignReport:
    """Every system's joint estimates and the campaign's label count."""

    campaign: CampaignRow
    systems: list[SystemReport]
    labels_total: int
    units_annotated: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"campaign": self.campaign.to_dict(), "labels_total": self.labels_total,
                "units_annotated": self.units_annotated,
                "systems": [s.to_dict() for s in self.systems], "notes": list(self.notes)}


@dataclass(frozen=True)
class State:
    """The campaign's arrays as the store holds them now (see :mod:`assay.ondemand.joint`)."""

    systems: list[SystemRow]
    keys: np.ndarray            # the universe's item keys, sorted
    uni: joint.Universe
    src: np.ndarray             # per draw: its proposal (joint.proposal_index)
    system: np.ndarray          # per draw: the system's position in ``systems``
    item: np.ndarray            # per draw: its row of the universe
    f: np.ndarray               # per draw: label, NaN if none
    first_by: np.ndarray        # per draw: True where it is the item's first draw
    units: joint.Units | None


class OnDemandCampaign:
    """See the module docstring; :meth:`create` or :meth:`open`."""

    def __init__(self, store: LabelStore, row: CampaignRow) -> None:
        self.labels, self.od, self.row = store, OnDemandStore(store), row
        self.token = claim_token()
        self.poll_seconds = 0.05
        self.observer: Callable[[str, int], None] | None = None   # (item, labels asked so far)

    @classmethod
    def create(cls, store: LabelStore, name: str, *, dataset: str | None = None,
               annotator: str = "gold", corpus_units: int | None = None,
               confidence: float = 0.90, half_width: float = 0.05,
               submission_cap: int = 1000, campaign_cap: int | None = None,
               seed: int = 0) -> "OnDemandCampaign":
        if not 0 < confidence < 1:
            raise AssayInputError("--confidence", f"{confidence}", expected="a number in (0, 1)")
        if not 0 < half_width < 0.5:
            raise AssayInputError("--half-width", f"{half_width}",
                                  expected="a number in (0, 0.5)")
        for opt, v in (("--submission-cap", submission_cap), ("--campaign-cap", campaign_cap),
                       ("--corpus-units", corpus_units)):
            if v is not None and v < 1:
                raise AssayInputError(opt, f"{v}", expected="a positive integer")
        od = OnDemandStore(store)
        ds = dataset or name
        store.claim_dataset(ds, ["item"])
        row = od.create_campaign(name, dataset=ds, annotator=annotator,
                                 corpus_units=corpus_units, confidence=confidence,
                                 half_width=half_width, submission_cap=submission_cap,
                                 campaign_cap=campaign_cap, seed=seed)
        return cls(store, row)

    @classmethod
    def open(cls, store: LabelStore, name: str) -> "OnDemandCampaign":
        return cls(store, OnDemandStore(store).campaign(name))

    # -- state -------------------------------------------------------------------------------
    def state(self) -> State:
        systems = self.od.systems(self.row.id)
        pos = {s.id: k for k, s in enumerate(systems)}
        out = self.od.outputs(self.row.id)
        keys = np.array(sorted(set(out["item"])), dtype=object)
        where = {k: i for i, k in enumerate(keys)}
        memb = np.zeros((len(keys), len(systems)), dtype=bool)
        if len(out):
            memb[out["item"].map(where).to_numpy(), out["system_id"].map(pos).to_numpy()] = True
        d = self.od.draws(self.row.id)
        labels = self.labels.labels(self.row.dataset, self.row.annotator)
        item = d["item"].map(where).to_numpy(dtype=np.int64) if len(d) else np.zeros(0, int)
        f = np.array([labels.get(k, np.nan) for k in d["item"]], dtype=np.float64)
        system = (d["system_id"].map(pos).to_numpy(dtype=np.int64) if len(d)
                  else np.zeros(0, int))
        kind = d["proposal"].to_numpy(dtype=object) if len(d) else np.zeros(0, object)
        src = joint.proposal_index(system, kind, len(systems))
        first = ~d["item"].duplicated().to_numpy() if len(d) else np.zeros(0, bool)
        fl = self.od.fills(self.row.id)
        fill = None
        if len(fl):
            fill = np.zeros(memb.shape, dtype=np.float64)
            fill[fl["item"].map(where).to_numpy(), fl["system_id"].map(pos).to_numpy()] = \
                fl["density"].to_numpy(dtype=np.float64)
        return State(systems, keys, joint.Universe(memb, fill=fill), src, system, item, f,
                     first, self._units(keys, memb))

    def _units(self, keys: np.ndarray, memb: np.ndarray) -> joint.Units | None:
        truth = self.od.units(self.row.id)
        if not truth or self.row.corpus_units is None:
            return None
        where = {k: i for i, k in enumerate(keys)}
        names = sorted(truth)
        a = np.array([sum(k in where for k in truth[u]) for u in names], dtype=np.float64)
        b = np.array([len(truth[u]) for u in names], dtype=np.float64)
        c = np.array([memb[[where[k] for k in truth[u] if k in where]].sum(axis=0)
                      for u in names], dtype=np.float64).reshape(len(names), memb.shape[1])
        return joint.Units(a, b, c, self.row.corpus_units)

    # -- submissions -------------------------------------------------------------------------
    def submit(self, name: str, items: Sequence[str], source: LabelSource,
               structure: pd.DataFrame | None = None, sampling: str = "instance"
               ) -> SystemReport:
        """Evaluate (or resume evaluating) system ``name`` whose output is ``items``
        (canonical keys, duplicates collapsed); labels come from ``source``. ``sampling``:
        ``instance`` (uniform draws from the output or its novel part, the default), or
        ``relation`` / ``entity``: every draw of the submission from that level's
        distribution over its output (:mod:`assay.ondemand.structured`; per relation, or
        entity → fill → mention), made from its ``structure`` columns and kept in the store as
        its fill proposal; its labels serve every level's scores by reweighting."""
        keys = list(dict.fromkeys(str(k) for k in items))
        if not keys:
            raise AssayInputError(f"system {name!r}", "empty output",
                                  expected="at least one item")
        if sampling not in structured.LEVELS:
            raise AssayInputError("--sampling", sampling,
                                  expected=" or ".join(structured.LEVELS))
        if sampling != "instance" and (structure is None or not {"relation", "subject"}
                                       & set(getattr(structure, "columns", ()))):
            raise AssayInputError("--sampling", sampling, expected="a structure with relation "
                                  "and subject columns for the submission's items")
        sysrow, _ = self.od.add_system(self.row.id, name, fingerprint(keys), keys, structure)
        try:
            for _ in range(MAX_ROUNDS + 1):
                st = self.state()
                self._label(st, sysrow.id, source)
                if sysrow.finished or self._sample_more(self.state(), sysrow, sampling) == 0:
                    break
        finally:
            self.labels.release(self.row.dataset, self.token)
        rep = self.report()
        return next(s for s in rep.systems if s.name == name)

    def _sample_more(self, st: State, sysrow: SystemRow, sampling: str = "instance") -> int:
        """Plan and store the next round of draws for the system; 0 (and the system marked
        finished) when its interval is narrow enough or a cap or the last round is reached."""
        target = next(k for k, s in enumerate(st.systems) if s.id == sysrow.id)
        own = int(np.count_nonzero(st.system == target))
        rounds = self.od.rounds(sysrow.id)
        room = self.row.submission_cap - own
        if self.row.campaign_cap is not None:
            room = min(room, self.row.campaign_cap - int(np.count_nonzero(st.first_by)))
        kinds = planning.KINDS if sampling == "instance" else (joint.FILL,)
        d, kind = joint.next_draws(st.uni, st.src, st.item, st.f, target, rounds, room,
                                   self.row.half_width, self.row.confidence, MAX_ROUNDS,
                                   MINIMUM_DRAWS, kinds=kinds)
        if d == 0:
            self.od.finish(sysrow.id)
            return 0
        rng = np.random.default_rng([self.row.seed, target, rounds])
        if kind == joint.FILL:
            have = st.uni.fill is not None and bool(st.uni.fill[:, target].any())
            dens = (st.uni.fill[:, target] if have and st.uni.fill is not None
                    else planning.new_fill(st.uni, st.src, st.f, target, d)
                    if sampling == "instance" else self._level_density(st, sampling, target))
            picks = rng.choice(len(st.keys), size=d, p=dens / dens.sum())
            on = np.flatnonzero(dens > 0)
            self.od.add_draws(self.row.id, sysrow.id, rounds, st.keys[picks], dens[picks], kind,
                              None if have else dict(zip(st.keys[on].tolist(),
                                                         dens[on].tolist())))
            return d
        members = st.uni.novel() if kind == joint.NOVEL else st.uni.memb
        out = np.flatnonzero(members[:, target])
        drawn = st.keys[rng.choice(out, size=d, replace=True)]
        self.od.add_draws(self.row.id, sysrow.id, rounds, drawn, 1.0 / len(out), kind)
        return d

    def _label(self, st: State, system_id: int, source: LabelSource) -> int:
        """Ask for every drawn item of the system with no entry of the annotator (claims
        first); returns the number asked here."""
        target = next(k for k, s in enumerate(st.systems) if s.id == system_id)
        known = {j.item for j in self.labels.judgments(self.row.dataset, self.row.annotator)
                 if j.status != Status.PENDING}
        todo = [int(i) for i in dict.fromkeys(st.item[st.system == target].tolist())
                if st.keys[i] not in known]
        asked, waiting = 0, list(todo)
        while waiting:
            later = []
            for i in waiting:
                key = str(st.keys[i])
                got = self.labels.claim(self.row.dataset, key, self.row.annotator, self.token)
                if got is not None:
                    if got.status == Status.PENDING:
                        later.append(i)
                    continue
                v = source.label(i, key)
                if v not in (0, 1, SKIP):
                    raise AssayInputError(f"label source {source.annotator!r}",
                                          f"answered {v!r} for item {key!r}",
                                          expected="0, 1 or a skip")
                j = (Judgment(key, self.row.annotator, status=Status.SKIPPED) if v == SKIP
                     else Judgment(key, self.row.annotator, int(v)))
                self.labels.record(self.row.dataset, [j])
                asked += 1
                if self.observer is not None:
                    self.observer(key, asked)
            if later:
                time.sleep(self.poll_seconds)
            waiting = later
        return asked

    # -- exhaustive annotation ---------------------------------------------------------------
    def annotate_units(self, truth: Mapping[str, Sequence[str]],
                       corpus_units: int | None = None) -> None:
        """Record exhaustively annotated units (a simple random sample of the corpus's units)
        and each one's true item keys (possibly none)."""
        if corpus_units is not None and corpus_units < 1:
            raise AssayInputError("--corpus-units", f"{corpus_units}",
                                  expected="a positive integer")
        row = self.od.campaign(self.row.name)
        corpus = corpus_units if corpus_units is not None else row.corpus_units
        n = len(set(self.od.units(self.row.id)) | {str(u) for u in truth})
        if corpus is None:
            raise AssayInputError("--corpus-units", "the corpus's number of units is not known",
                                  expected="--corpus-units N here or at 'campaign new'")
        if n > corpus:
            raise AssayInputError("--corpus-units", f"{n} annotated units in a corpus of "
                                  f"{corpus}", expected="at most as many as the corpus")
        self.od.add_units(self.row.id, {str(u): [str(k) for k in v] for u, v in truth.items()})
        if corpus_units is not None:
            self.od.set_corpus_units(self.row.id, corpus_units)
        self.row = self.od.campaign(self.row.name)

    # -- estimates ---------------------------------------------------------------------------
    def report(self, rule: str = "optimal", level: str = "instance") -> CampaignReport:
        """Every system's joint estimates (``rule``: optimal, overlap or own mixtures).
        ``level``: ``instance`` (micro), or ``relation`` / ``entity`` precision (macro over
        relations; over entities of their fills' mention precision,
        :mod:`assay.ondemand.structured`) from the same labels by reweighting, with the items'
        structure columns as submitted; recall and F1 are then not estimated (undefined)."""
        if level not in structured.LEVELS:
            raise AssayInputError("--level", level, expected=" or ".join(structured.LEVELS))
        st = self.state()
        if level != "instance" and len(st.systems):
            st = self._at_level(st, level)
        notes = []
        if st.units is None:
            notes.append("no unit annotated exhaustively yet: only the pooled (closed-world) "
                         "recall is defined")
        est, _ = joint.estimate(st.uni, st.src, st.item, st.f, st.units, self.row.confidence,
                                rule) if len(st.systems) else ({k: [] for k in MEASURES}, None)
        systems = []
        for k, s in enumerate(st.systems):
            mine = st.system == k
            systems.append(SystemReport(
                s.name, s.size, int(mine.sum()),
                int(np.count_nonzero(mine & st.first_by & ~np.isnan(st.f))), s.finished,
                {m: est[m][k] for m in MEASURES}))
        if level != "instance":
            notes.append(f"{level}-level precision (macro-averaged); recall and F1 are "
                         "estimated at the instance level only")
            for i, s in enumerate(systems):
                systems[i] = SystemReport(s.name, s.size, s.draws, s.labels_used, s.finished, {
                    k: (v if k == "precision" else _undefined(k, v.confidence, level))
                    for k, v in s.estimates.items()})
        labelled = int(np.count_nonzero(st.first_by & ~np.isnan(st.f)))
        return CampaignReport(self.row, systems, labelled,
                              0 if st.units is None else len(st.units.true_items), notes)

    def _level_density(self, st: State, level: str, target: int) -> np.ndarray:
        """System ``target``'s distribution at ``level`` over the universe's rows."""
        sdf = self.od.structure(self.row.id).set_index("item").reindex(list(st.keys))
        rel, sub, fil = structured.structure_codes(sdf, len(st.keys))
        return structured.level_density(st.uni.memb[:, [target]], rel, sub, fil, level)[:, 0]

    def _at_level(self, st: State, level: str) -> State:
        """The state with the systems' target densities at ``level``."""
        sdf = self.od.structure(self.row.id).set_index("item").reindex(list(st.keys))
        rel, sub, fil = structured.structure_codes(sdf, len(st.keys))
        dens = structured.level_density(st.uni.memb, rel, sub, fil, level)
        uni = joint.Universe(st.uni.memb, fill=st.uni.fill, target=dens)
        return State(st.systems, st.keys, uni, st.src, st.system, st.item, st.f, st.first_by,
                     st.units)


def _undefined(measure: str, confidence: float, level: str) -> Estimate:
    return Estimate(measure, 0.0, None, None, None, None, confidence, "undefined",
                    note=f"not estimated at the {level} level")


__all__ = ["CampaignReport", "MAX_ROUNDS", "OnDemandCampaign", "State", "SystemReport"]
