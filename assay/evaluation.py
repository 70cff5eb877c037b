"""One evaluation: pool → design → items to label → label source → label store → estimator.

:func:`collect` is the sampling loop (pure: no I/O); :func:`evaluate` wires it to a pool, a label
source and the label store, and returns an :class:`EvaluationResult`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from assay.designs import Design, Draw, build_design
from assay.errors import AssayInputError
from assay.core.measures import MEASURES
from assay.core.types import Estimate
from assay.estimation import estimate_all
from assay.labels.store import LabelStore, StoredDraw
from assay.labels.sources import SKIP, UNDO, LabelSource, Panel, label_source
from assay.formats.pool import Pool, load_pool

MAX_DRAWS_PER_LABEL = 1000


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
class HistoryPoint:
    labels_used: int
    draws: int
    estimates: dict[str, Estimate]


def collect(design: Design, get_label: Callable[[int], int], budget: int,
            on_label: Callable[[Collected], None] | None = None,
            known: dict[int, int] | None = None, undo: Callable[[int], None] | None = None
            ) -> Collected:
    """Draw until ``budget`` distinct items are labelled or the design is exhausted.

    A repeat draw of an item already labelled in this run costs nothing (the budget counts
    distinct labels). ``get_label`` may answer ``SKIP`` (the item stays unlabelled and is not
    asked again) or ``UNDO`` (the previous label is withdrawn and asked again).
    """
    out = Collected()
    cap = MAX_DRAWS_PER_LABEL * max(budget, 1)
    while out.distinct < budget and not design.exhausted() and len(out.draws) < cap:
        d = design.draw()
        if d.index in out.skipped:
            continue
        if d.index in out.labelled:
            lab = out.labelled[d.index]
        else:
            lab = get_label(d.index)
            while lab == UNDO:
                if out.labelled and undo is not None:
                    _undo_last(out, design, get_label, undo)
                lab = get_label(d.index)
            if lab == SKIP:
                out.skipped.add(d.index)
                design.skip(d)
                continue
            out.labelled[d.index] = lab
        out.draws.append(d)
        out.labels.append(int(lab))
        design.update(d, int(lab))
        if on_label is not None:
            on_label(out)
    return out


def _undo_last(out: Collected, design: Design, get_label: Callable[[int], int],
               undo: Callable[[int], None]) -> None:
    """Withdraw the most recent new label and ask for it again (the draw stays as it was)."""
    last = next(reversed(out.labelled))
    undo(last)
    lab = get_label(last)
    while lab == UNDO:
        lab = get_label(last)
    if lab == SKIP:
        lab = out.labelled[last]  # an undo followed by a skip keeps the old answer
    out.labelled[last] = lab
    for j, d in enumerate(out.draws):
        if d.index == last:
            out.labels[j] = lab


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


def default_design(pool: Pool) -> str:
    """``auto`` whenever the pool has a score or probability column, else ``passive``."""
    return "auto" if pool.score is not None or pool.probability is not None else "passive"


def evaluate(pool: Any, labels: Any, design: str | None = None, budget: int = 1000,
             seed: int = 0, confidence: float = 0.95, store: str | LabelStore | None = None,
             dataset: str = "default", annotator: str | None = None,
             options: dict[str, Any] | None = None, alpha: float = 0.5,
             interval: str = "auto",
             progress: Callable[[int, int, dict[str, Estimate]], None] | None = None,
             id_columns: list[str] | None = None) -> EvaluationResult:
    """Estimate precision, recall and F1 of ``pool``'s predictions from at most ``budget``
    distinct labels.

    ``design``: ``auto`` (the default whenever the pool has scores), ``stratified``,
    ``importance``, ``oasis`` or ``passive`` (the default without scores).
    ``pool``: a path (Parquet/CSV), DataFrame, Arrow table or :class:`~assay.formats.pool.Pool`.
    ``labels``: a gold path/DataFrame (id columns + ``label``), a mapping id → label, a callable
    key → label, or a :class:`~assay.labels.sources.LabelSource`. With ``store``, every label is written
    at once and labels already there (same dataset and annotator) are reused without asking; an
    interrupted run with the same arguments resumes where it stopped.
    """
    if budget < 1:
        raise AssayInputError("--budget", f"{budget}", expected="a positive number of labels")
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", f"{confidence}", expected="a number in (0, 1)")
    pool = load_pool(pool, id_columns=id_columns)
    design = design or default_design(pool)
    source: LabelSource = label_source(labels, pool, annotator)
    rng = np.random.default_rng(seed)
    try:
        des = build_design(design, n=pool.size, predictions=pool.prediction, score=pool.score
                           if pool.score is not None else pool.probability,
                           prior=pool.prior_probability(), budget=budget, rng=rng, alpha=alpha,
                           options=options)
    except ValueError as exc:
        raise AssayInputError(f"--design {design}", str(exc)) from None
    st = store if isinstance(store, LabelStore) or store is None else LabelStore(store)
    params = {**des.params(), "pool_size": pool.size}
    session = _StoreSession(st, dataset, source.annotator, pool, params, seed)
    counts = {"new": 0, "reused": 0}

    def ask(member: LabelSource, i: int, key: str) -> int:
        known = session.known_for(member.annotator)
        if key in known:
            lab = known[key]
            counts["reused"] += lab != SKIP
            return lab
        lab = member.label(i, key)
        if lab == UNDO:
            return lab
        session.save(key, lab, member.annotator)  # a skip is kept too: a resumed run skips again
        counts["new"] += lab != SKIP
        return lab

    if isinstance(source, Panel):
        source.ask = ask

    def get_label(i: int) -> int:
        key = pool.key(i)
        return source.label(i, key) if isinstance(source, Panel) else ask(source, i, key)

    history: list[HistoryPoint] = []
    marks = _checkpoints(budget)
    state = {"last": -1}

    def on_label(c: Collected) -> None:
        session.record(c, len(c.draws) - 1)
        n = c.distinct
        if n != state["last"] and (n in marks or progress is not None and n % 25 == 0):
            state["last"] = n
            est = estimate_all(des, c, pool.prediction, confidence, interval=interval)
            if n in marks:
                history.append(HistoryPoint(n, len(c.draws), est))
            if progress is not None:
                progress(n, budget, est)

    collected = collect(des, get_label, budget, on_label,
                        undo=lambda i: session.forget(pool.key(i), source.annotator))
    session.flush()
    est = estimate_all(des, collected, pool.prediction, confidence, interval=interval)
    if design == "importance" and pool.probability is None:
        warn = ("the importance design took logistic(score) as the match probability; if the "
                "scores are not calibrated log-odds its intervals can miss badly (on the real "
                "amazon_google pool they cover in 4-74% of runs): prefer the stratified design "
                "or give a calibrated 'probability' column")
        est = _with_note(est, warn)
    if isinstance(source, Panel):
        skipped = len(collected.skipped)
        panel = (f"labels are the majority of a panel of {len(source.members)} annotators "
                 f"({source.votes} votes; {source.disagreements} items with disagreeing votes"
                 + (f"; {skipped} items without a majority were skipped" if skipped else "")
                 + "): the estimates target the measure under the panel's majority labels")
        est = _with_note(est, panel)
    if not history or history[-1].labels_used != collected.distinct:
        history.append(HistoryPoint(collected.distinct, len(collected.draws), est))
    if progress is not None:
        progress(collected.distinct, budget, est)
    return EvaluationResult(design=design, seed=seed, labels_used=collected.distinct,
                            pool_size=pool.size, confidence=confidence, estimates=est,
                            params=params, history=history, draws=collected.draws,
                            draw_labels=collected.labels, new_labels=counts["new"],
                            reused_labels=counts["reused"], strata=des.strata_table(),
                            pool_source=pool.source, annotator=source.annotator)


def _with_note(est: dict[str, Estimate], text: str) -> dict[str, Estimate]:
    """Every estimate with ``text`` appended to its note."""
    return {k: replace(e, note=(e.note + "; " if e.note else "") + text) for k, e in est.items()}


class _StoreSession:
    """Links a run to the store: known labels (per annotator), pending draws, replay check on
    resume."""

    def __init__(self, store: LabelStore | None, dataset: str, annotator: str, pool: Pool,
                 params: dict[str, Any], seed: int) -> None:
        self.store, self.dataset, self.annotator, self.pool = store, dataset, annotator, pool
        self.known: dict[str, dict[str, int]] = {}
        self.pending: list[tuple[int, StoredDraw]] = []
        self.previous: list[StoredDraw] = []
        self.run_id = -1
        if store is not None:
            self.run_id, self.previous = store.open_run(dataset, pool.fingerprint(), params,
                                                        seed, annotator)

    def known_for(self, annotator: str) -> dict[str, int]:
        """The labels (and skips) ``annotator`` has given in this dataset."""
        if annotator not in self.known:
            self.known[annotator] = ({} if self.store is None else
                                     self.store.labels(self.dataset, annotator,
                                                       include_skips=True))
        return self.known[annotator]

    def record(self, c: Collected, seq: int) -> None:
        if self.store is None:
            return
        d = c.draws[seq]
        sd = StoredDraw(seq, self.pool.key(d.index), d.stratum, d.probability, d.kind)
        if seq < len(self.previous):
            old = self.previous[seq]
            if old.item != sd.item:
                raise AssayInputError(str(self.store.location),
                                      f"stored run {self.run_id} drew {old.item!r} at draw "
                                      f"{seq + 1} but the replay drew {sd.item!r}",
                                      expected="the same pool, design and seed as the "
                                               "interrupted run")
            return
        self.pending.append((self.run_id, sd))
        if len(self.pending) >= 500:
            self.flush()

    def save(self, key: str, label: int, annotator: str) -> None:
        self.known_for(annotator)[key] = label
        if self.store is not None:
            self.store.put(self.dataset, key, annotator, label, self.pending)
            self.pending = []

    def forget(self, key: str, annotator: str) -> None:
        self.known_for(annotator).pop(key, None)
        if self.store is not None:
            self.store.remove(self.dataset, key, annotator)

    def flush(self) -> None:
        if self.store is not None and self.pending:
            self.store.add_draws(self.pending)
            self.pending = []


def truth_estimates(labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    from assay.core.measures import true_f_measure
    return {k: true_f_measure(labels, predictions, a) for k, a in MEASURES.items()}


__all__ = ["Collected", "EvaluationResult", "HistoryPoint", "collect",
           "evaluate", "truth_estimates"]
