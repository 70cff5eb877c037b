"""One evaluation: pool → design → items to label → label source → label store → estimator.

:func:`evaluate` drives a :class:`~assay.campaign.Campaign` with a label source and returns an
:class:`EvaluationResult`; :func:`collect` is the store-less sampling loop the simulations use
(a design and a label function, no pool, no I/O).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd

from assay.campaign import Campaign, default_dataset
from assay.runs import Collected, as_entry
from assay.core.measures import MEASURES
from assay.core.types import Draw, Estimate
from assay.designs import Design
from assay.designs.settings import DesignSettings, settings_from_dict, settings_from_options
from assay.errors import AssayInputError, LabelConflict
from assay.formats.pool import Pool, load_pool
from assay.labels.sources import ArrayLabels, LabelSource, Panel, label_source
from assay.labels.store import Judgment, LabelStore, opened_store


@dataclass(frozen=True)
class HistoryPoint:
    labels_used: int
    draws: int
    estimates: dict[str, Estimate]


@functools.lru_cache(maxsize=4)
def _anonymous_pool(n: int) -> Pool:
    """A pool of ``n`` items known only by their index (for :func:`collect`)."""
    return Pool(ids=pd.DataFrame({"id": np.arange(n).astype(str)}),
                prediction=np.zeros(n, dtype=np.int8), source="<simulation>")


def collect(design: Design, get_label: Callable[[int], int], budget: int,
            on_label: Callable[[Collected], None] | None = None) -> Collected:
    """Draw until ``budget`` distinct items are labelled or the design is exhausted: an
    in-memory :class:`~assay.campaign.Campaign` over ``design`` (the one sampling loop of
    assay), labels from ``get_label(index)``.

    A repeat draw of an item already labelled in this run costs nothing (the budget counts
    distinct labels). ``get_label`` may answer ``SKIP`` (the item stays unlabelled and is not
    asked again) or ``UNDO`` (the previous label is withdrawn and asked again).
    """
    pool = _anonymous_pool(design.pool_size())
    camp = Campaign.open(None, pool, settings_from_options(design.name, None), 0, "collect",
                         "oracle", max(int(budget), 1), design=design)
    if on_label is not None:
        camp.observer = lambda c: on_label(c.collected)
    while True:
        req = camp.next_items(1)
        if not req:
            return camp.collected
        camp.record([as_entry(req[0], get_label(req[0].index))])


@dataclass
class EvaluationResult:
    """The outcome of :func:`evaluate`; ``to_dict()`` is the ``--json`` document."""

    design: str
    seed: int
    labels_used: int
    pool_size: int
    confidence: float
    estimates: dict[str, Estimate]
    params: dict[str, Any]
    history: list[HistoryPoint]
    draws: list[Draw]
    draw_labels: list[int]
    new_labels: int = 0
    reused_labels: int = 0
    strata: list[dict[str, Any]] = field(default_factory=list)
    pool_source: str = ""
    annotator: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "seed": self.seed, "labels_used": self.labels_used,
                "pool_size": self.pool_size, "confidence": self.confidence,
                "estimates": {k: self.estimates[k].to_dict()
                              for k in ("precision", "recall", "f1")}}


def _checkpoints(budget: int, points: int = 60) -> set[int]:
    grid = np.unique(np.geomspace(10, max(budget, 10), points).astype(int))
    return set(grid.tolist()) | {budget}


IMPORTANCE_NOTE = ("the importance design took logistic(score) as the match probability; if "
                   "the scores are not calibrated log-odds its intervals can miss badly (on "
                   "the real amazon_google pool they cover in 4-74% of runs): prefer the "
                   "stratified design or give a calibrated 'probability' column")


class Checkpoints:
    """What a run records as its labels come in: the estimates at the history's checkpoints
    (about 60 distinct-label counts, geometric up to ``target``; none without ``history``)
    and the ``progress`` callback's every 25 labels, each estimate computed once; then the
    final point (:meth:`finish`). Shared by :func:`evaluate` and the engines' run."""

    def __init__(self, target: int, history: bool, total: int,
                 progress: Callable[[int, int, dict[str, Estimate]], None] | None) -> None:
        self.marks = _checkpoints(target) if history else set()
        self.points: list[HistoryPoint] = []
        self.total, self.progress, self._last = total, progress, -1

    def wants(self, labels: int) -> bool:
        """Whether an estimate is due at ``labels`` distinct labels."""
        return labels != self._last and (labels in self.marks
                                         or self.progress is not None and labels % 25 == 0)

    def record(self, labels: int, draws: int, est: dict[str, Estimate]) -> None:
        self._last = labels
        if labels in self.marks:
            self.points.append(HistoryPoint(labels, draws, est))
        if self.progress is not None:
            self.progress(labels, self.total, est)

    def finish(self, labels: int, draws: int, est: dict[str, Estimate]) -> list[HistoryPoint]:
        """The final estimate as the history's last point (if it is not already) and the
        progress callback's last call; returns the history."""
        if not self.points or self.points[-1].labels_used != labels:
            self.points.append(HistoryPoint(labels, draws, est))
        if self.progress is not None:
            self.progress(labels, self.total, est)
        return self.points


def default_design(pool: Pool) -> str:
    """``auto`` whenever the pool has a score or probability column, else ``passive``."""
    return "auto" if pool.score is not None or pool.probability is not None else "passive"


ON_CONFLICT = ("fail", "keep", "replace")


def evaluate(pool: Any, labels: Any, design: str | None = None, budget: int = 1000,
             seed: int = 0, confidence: float = 0.95, store: str | LabelStore | None = None,
             dataset: str | None = None, annotator: str | None = None,
             options: dict[str, Any] | None = None, alpha: float = 0.5,
             interval: str = "auto",
             progress: Callable[[int, int, dict[str, Estimate]], None] | None = None,
             id_columns: list[str] | None = None, on_conflict: str = "fail",
             settings: DesignSettings | None = None, run: int | None = None,
             history: bool = True) -> EvaluationResult:
    """Estimate precision, recall and F1 of ``pool``'s predictions from at most ``budget``
    distinct labels (a thin loop over a :class:`~assay.campaign.Campaign`).

    ``design``: ``auto`` (the default whenever the pool has scores), ``stratified``,
    ``importance``, ``oasis`` or ``passive`` (the default without scores); ``settings`` (a
    :mod:`assay.designs.settings` object) or the legacy ``options`` dict tune it.
    ``pool``: a path (Parquet/CSV), DataFrame, Arrow table or :class:`~assay.formats.pool.Pool`.
    ``labels``: a gold path/DataFrame (id columns + ``label``), a mapping id → label, a callable
    key → label, or a :class:`~assay.labels.sources.LabelSource`. With ``store``, every label is
    written at once and labels already there (same dataset and annotator) are reused without
    asking; the same arguments resume an interrupted run, and a larger budget continues it.
    ``dataset`` defaults to the pool's file stem (or its ids' fingerprint in memory).
    ``on_conflict``: what to do when a gold file disagrees with stored labels of the same
    dataset and annotator — ``fail`` (the default: a :class:`LabelConflict` with the counts),
    ``keep`` the stored labels, or ``replace`` them with the file's. ``run``: the id of a
    stored run to replay or extend with the settings, seed, dataset and annotator it saved.
    ``history``: the estimates at the checkpoints of the result's ``history`` (the report's
    convergence plot); False keeps the final one only, which a simulation that reads the final
    estimate needs (the same draws and estimates, without an estimate every few labels).
    """
    if budget < 1:
        raise AssayInputError("--budget", f"{budget}", expected="a positive number of labels")
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", f"{confidence}", expected="a number in (0, 1)")
    if on_conflict not in ON_CONFLICT:
        raise AssayInputError("--on-conflict", repr(on_conflict),
                              expected="'fail', 'keep' or 'replace'")
    pool = load_pool(pool, id_columns=id_columns)
    with opened_store(store) as st:
        return _evaluate_on(st, pool, labels, design, budget, seed, confidence, dataset,
                            annotator, options, alpha, interval, progress, on_conflict,
                            settings, run, history)


def _evaluate_on(st: LabelStore | None, pool: Pool, labels: Any, design: str | None,
                 budget: int, seed: int, confidence: float, dataset: str | None,
                 annotator: str | None, options: dict[str, Any] | None, alpha: float,
                 interval: str,
                 progress: Callable[[int, int, dict[str, Estimate]], None] | None,
                 on_conflict: str, settings: DesignSettings | None, run: int | None,
                 history: bool) -> EvaluationResult:
    """:func:`evaluate` on a loaded pool and an open store (or none)."""
    if run is not None:
        if st is None:
            raise AssayInputError("--run", str(run), expected="a --store holding the run")
        info = st.run_info(run)
        settings = settings_from_dict(info["settings"])
        seed, dataset, design = info["seed"], info["dataset"], info["design"]
        annotator = annotator or (None if info["annotator"].startswith("majority(")
                                  else info["annotator"])
    name = design or (settings.name if settings is not None else default_design(pool))
    s = settings if settings is not None else settings_from_options(name, options, alpha)
    source: LabelSource = label_source(labels, pool, annotator)
    members = list(source.members) if isinstance(source, Panel) else [source]
    dataset = dataset or default_dataset(pool)
    notes = [] if st is None else check_conflicts(st, dataset, pool, members, on_conflict)
    try:
        camp = Campaign.open(st, pool, s, seed, dataset, [m.annotator for m in members], budget,
                             confidence, interval)
    except ValueError as exc:
        if isinstance(exc, AssayInputError):
            raise
        raise AssayInputError(f"--design {name}", str(exc)) from None
    by_name = {m.annotator: m for m in members}
    marks = Checkpoints(camp.target, history, budget, progress)

    def observe(c: Campaign) -> None:
        n = c.collected.distinct
        if marks.wants(n):
            marks.record(n, len(c.collected.draws), c.estimate(bounds=False))

    camp.observer = observe
    try:
        _drive(camp, by_name)
    finally:
        camp.close()
    collected = camp.collected
    est = camp.estimate()
    if name == "importance" and pool.probability is None:
        est = _with_note(est, IMPORTANCE_NOTE)
    if isinstance(source, Panel):
        skipped = len(collected.skipped)
        est = _with_note(est, f"labels are the majority of a panel of {len(members)} annotators "
                         f"({camp.votes} votes; {camp.disagreements} items with disagreeing "
                         "votes" + (f"; {skipped} items without a majority were skipped"
                                    if skipped else "")
                         + "): the estimates target the measure under the panel's majority "
                         "labels")
    for note in notes + camp.result_notes():
        est = _with_note(est, note)
    points = marks.finish(collected.distinct, len(collected.draws), est)
    params = {**camp.design.params(), "pool_size": pool.size, "run": camp.run_id,
              "dataset": dataset, "settings": s.to_dict()}
    return EvaluationResult(design=name, seed=seed, labels_used=collected.distinct,
                            pool_size=pool.size, confidence=confidence, estimates=est,
                            params=params, history=points, draws=collected.draws,
                            draw_labels=collected.labels, new_labels=camp.new,
                            reused_labels=camp.reused, strata=camp.design.strata_table(),
                            pool_source=pool.source, annotator=camp.annotator)


def _drive(camp: Campaign, sources: dict[str, LabelSource]) -> None:
    """Ask each requested item of its annotator's source and record the answer (a value, a
    skip, or an undo) until the campaign is done."""
    while True:
        reqs = camp.next_items(1)
        if not reqs:
            return
        r = reqs[0]
        camp.record([as_entry(r, sources[r.annotator].label(r.index, r.key))])


def check_conflicts(store: LabelStore, dataset: str, pool: Pool, members: list[LabelSource],
                    on_conflict: str) -> list[str]:
    """Compare every gold label (sources that hold all their values) with the labels stored
    for the same dataset and annotator, up front; ``fail`` raises :class:`LabelConflict`
    with the counts, ``keep`` and ``replace`` return a note saying what was done."""
    notes = []
    for m in members:
        if not isinstance(m, ArrayLabels):
            continue
        stored = store.labels(dataset, m.annotator)
        if not stored:
            continue
        keys = list(stored)
        idx = np.array([pool.index_of(k) if pool.index_of(k) is not None else -1 for k in keys])
        have = idx >= 0
        vals = np.where(have, m.values[np.maximum(idx, 0)], -1)
        old = np.array([stored[k] for k in keys])
        differ = have & (vals >= 0) & (vals != old)
        n_diff, n_same = int(differ.sum()), int((have & (vals == old)).sum())
        if not n_diff:
            continue
        what = (f"{n_diff} of the {n_diff + n_same} labels of {m.source} for items already "
                f"labelled by {m.annotator!r} in dataset {dataset!r} disagree with the store")
        if on_conflict == "fail":
            raise LabelConflict(str(m.source), what, expected="--on-conflict keep (use the "
                                "stored labels), --on-conflict replace (store the file's) or "
                                "--annotator NAME (store the file's under another annotator)")
        if on_conflict == "replace":
            js = [Judgment(keys[j], m.annotator, int(vals[j]))
                  for j in np.flatnonzero(differ)]
            store.record(dataset, js, replace=True)
            notes.append(what + f": {n_diff} stored labels replaced by the file's")
        else:
            notes.append(what + f": the {n_diff} stored labels were kept")
    return notes


def _with_note(est: dict[str, Estimate], text: str) -> dict[str, Estimate]:
    """Every estimate with ``text`` appended to its note."""
    return {k: replace(e, note=(e.note + "; " if e.note else "") + text) for k, e in est.items()}


def truth_estimates(labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    from assay.core.measures import true_f_measure
    return {k: true_f_measure(labels, predictions, a) for k, a in MEASURES.items()}


__all__ = ["Collected", "EvaluationResult", "HistoryPoint", "check_conflicts", "collect",
           "evaluate", "truth_estimates"]
