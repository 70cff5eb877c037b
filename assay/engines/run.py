"""An evaluation whose pool stays on an engine (docs/engines.md, issue 14).

The same loop as :func:`assay.evaluation.evaluate` — design → items to label → label source →
label store → estimator — for the designs that run on an engine (``auto``, ``stratified``,
``importance``, ``passive`` without replacement): the design's strata, sizes and items come from the engine, only the
items drawn are ever in memory, labels are read from a gold file for those items only, and
the estimators are the core's (:func:`assay.core.measures.f_measure` with the stratum sizes,
the pool's size and predicted positives from the engine; the assumption-free intervals of
:func:`assay.core.bounds.assumption_free_many`). The result carries the run's
:class:`~assay.engines.manifest.RunManifest`.

>>> import pandas as pd
>>> from assay.engines import MemoryEngine
>>> df = pd.DataFrame({"id": range(100), "score": [i / 100 for i in range(100)],
...                    "prediction": [int(i >= 50) for i in range(100)]})
>>> gold = pd.DataFrame({"id": range(100), "label": [int(i >= 40) for i in range(100)]})
>>> r = evaluate_on_engine(MemoryEngine(df), gold, "stratified", budget=100, seed=1)
>>> r.labels_used, round(r.estimates["precision"].estimate, 3), round(r.estimates["recall"].estimate, 3)
(100, 1.0, 0.833)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from assay.core.types import Draw, Estimate
from assay.designs.base import Design
from assay.designs.settings import (AutoSettings, DesignSettings, ImportanceSettings,
                                    OasisSettings, PassiveSettings, StratifiedSettings,
                                    settings_from_options)
from assay.engines.base import Engine
from assay.engines.manifest import RunManifest
from assay.errors import AssayInputError
from assay.estimation import estimate_draws

ENGINE_DESIGNS = ("auto", "stratified", "passive", "importance")
MAX_DRAWS_PER_LABEL = 50


def score_strata_only(settings: DesignSettings) -> DesignSettings:
    """The settings an engine run draws with: its strata are the score's alone (strata split
    by the prediction, :func:`assay.core.strata.by_prediction`, are built in memory only), and
    the settings saved with the run say so.

    >>> score_strata_only(StratifiedSettings()).by_prediction
    False
    """
    if isinstance(settings, (StratifiedSettings, OasisSettings)) and settings.by_prediction:
        return dataclasses.replace(settings, by_prediction=False)
    return settings


def engine_design(engine: Engine, settings: DesignSettings, budget: int, seed: int,
                  probability: str | None = None) -> Design:
    """The design of ``settings`` on ``engine`` (``auto``, ``stratified``, ``importance``,
    ``oasis``; ``passive`` without replacement); others raise :class:`AssayInputError` naming the
    design."""
    from assay.designs.passive import EngineUniformWithoutReplacement
    from assay.designs.stratified import EngineStratifiedDesign
    if isinstance(settings, StratifiedSettings):
        return EngineStratifiedDesign(engine, budget, np.random.default_rng(seed), seed,
                                      settings.strata, settings.n_strata, settings.allocation,
                                      settings.alpha, probability, floors=settings.floors)
    if isinstance(settings, AutoSettings):
        from assay.designs.auto_engine import EngineAutoDesign
        return EngineAutoDesign(engine, budget, np.random.default_rng(seed), seed,
                                alpha=settings.alpha, first=settings.first,
                                batches=settings.batches, degree=settings.degree,
                                census_share=settings.census_share, tail_sd=settings.tail_sd,
                                audit_share=settings.audit_share, explore=settings.explore)
    if isinstance(settings, PassiveSettings) and not settings.replace:
        return EngineUniformWithoutReplacement(engine, budget, seed)
    if isinstance(settings, ImportanceSettings):
        from assay.designs.importance import EngineImportanceDesign
        return EngineImportanceDesign(engine, np.random.default_rng(seed), seed, settings.alpha,
                                      settings.epsilon, probability)
    if isinstance(settings, OasisSettings):
        if settings.threshold != 0.0:
            raise AssayInputError("--threshold", f"{settings.threshold}",
                                  expected="0 for OASIS on an engine (the prior is the logistic "
                                           "of the score, or the probability column)")
        from assay.designs.oasis_engine import EngineOasisDesign
        return EngineOasisDesign(engine, budget, np.random.default_rng(seed), seed,
                                 alpha=settings.alpha, epsilon=settings.epsilon,
                                 n_strata=settings.n_strata, strata=settings.strata,
                                 prior_strength=settings.prior_strength,
                                 decaying_prior=settings.decaying_prior, v_star=settings.v_star,
                                 n_bins=settings.n_bins, defensive=settings.defensive,
                                 probability=probability, floors=settings.floors)
    what = "passive --replace" if isinstance(settings, PassiveSettings) else settings.name
    raise AssayInputError(f"--design {what}", "does not run on an engine yet",
                          expected="--design auto, stratified, importance, oasis or passive "
                                   "(without --replace) for a pool on an engine")


class GoldLabels:
    """Gold labels of the items drawn: from a file read where it lies (DuckDB, only the rows
    of the items asked), a frame (id columns + ``label``), or a function of the item's key."""

    def __init__(self, source: Any, id_columns: list[str], annotator: str = "gold") -> None:
        self.source, self.id_columns, self.annotator = source, list(id_columns), annotator

    def values(self, ids: pd.DataFrame, keys: list[str]) -> np.ndarray:
        """0/1 per item, −1 where the source has no label."""
        src = self.source
        if callable(src):
            return np.array([int(src(k)) for k in keys], dtype=np.int64)
        if isinstance(src, (str, Path)):
            from assay.engines.duck import gold_lookup
            return gold_lookup(str(src), ids[self.id_columns])
        frame = src[self.id_columns + ["label"]].copy()
        for c in self.id_columns:
            frame[c] = frame[c].astype(str)
        want = ids[self.id_columns].astype(str).reset_index(drop=True)
        got = want.merge(frame.drop_duplicates(self.id_columns), on=self.id_columns, how="left")
        return got["label"].fillna(-1).astype(np.int64).to_numpy()


@dataclass
class EngineResult:
    """The outcome of :func:`evaluate_on_engine`; ``to_dict()`` is the ``--json`` document
    (that of :class:`assay.evaluation.EvaluationResult` plus the run manifest)."""

    design: str
    seed: int
    labels_used: int
    pool_size: int
    confidence: float
    estimates: dict[str, Estimate]
    params: dict[str, Any]
    draws: list[Draw]
    draw_labels: list[int]
    items: pd.DataFrame
    manifest: RunManifest
    new_labels: int = 0
    reused_labels: int = 0
    strata: list[dict[str, Any]] = field(default_factory=list)
    pool_source: str = ""
    annotator: str = ""
    history: list[Any] = field(default_factory=list)    # assay.evaluation.HistoryPoint

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "seed": self.seed, "labels_used": self.labels_used,
                "pool_size": self.pool_size, "confidence": self.confidence,
                "estimates": {k: self.estimates[k].to_dict()
                              for k in ("precision", "recall", "f1")},
                "manifest": self.manifest.to_dict()}


def engine_estimates(design: Design, draws: list[Draw], labels: list[int],
                     predictions: np.ndarray, pool_size: int, positives: int,
                     confidence: float, bounds: bool = True) -> dict[str, Estimate]:
    """Design-based precision, recall and F1: :func:`assay.estimation.estimate_draws` from the
    predictions of the items fetched (``predictions[draw.index]``) and the pool's size and
    predicted positives."""
    return estimate_draws(design, draws, labels, predictions, confidence, bounds=bounds,
                          pool_size=pool_size, positives=positives)


def evaluate_on_engine(engine: Engine, labels: Any, design: str = "auto",
                       budget: int = 1000, seed: int = 0, confidence: float = 0.95,
                       store: Any = None, dataset: str | None = None,
                       annotator: str = "gold", options: dict[str, Any] | None = None,
                       probability: str | None = None,
                       progress: Callable[[int, int, dict[str, Estimate]], None] | None = None,
                       history: bool = True) -> EngineResult:
    """Estimate precision, recall and F1 of a pool on ``engine`` from at most ``budget``
    distinct labels (``labels``: a gold file path, a frame of id columns + ``label``, or a
    function of the item key). With ``store`` (a :class:`~assay.labels.store.LabelStore` or
    its URL) labels already there for ``dataset`` and ``annotator`` are reused and new ones
    written at once. ``history`` as in :func:`assay.evaluation.evaluate`."""
    from assay.labels.store import Judgment, opened_store
    if budget < 1:
        raise AssayInputError("--budget", f"{budget}", expected="a positive number of labels")
    info = engine.describe()
    if probability is None and "probability" in dict(info.columns):
        probability = "probability"         # the prior, as in memory (Pool.prior_probability)
    settings = score_strata_only(settings_from_options(design, options))
    des = engine_design(engine, settings, budget, seed, probability)
    sampler = des.sampler                                   # type: ignore[attr-defined]
    gold = GoldLabels(labels, list(info.id_columns), annotator)
    with opened_store(store) as st:
        dataset = dataset or Path(info.source).stem.replace("*", "_")[:200]
        known: dict[str, int] = {}
        if st is not None:
            st.claim_dataset(dataset, list(info.id_columns))
            known = st.labels(dataset, annotator)
        values: dict[int, int] = {}                     # row of sampler.items -> gold label
        draws: list[Draw] = []
        draw_labels: list[int] = []
        new = reused = 0
        target = min(int(budget), info.rows)
        from assay.evaluation import IMPORTANCE_NOTE, Checkpoints, _with_note
        marks = Checkpoints(target, history, target, progress)
        labelled: dict[int, int] = {}
        while len(labelled) < target and not des.exhausted() and \
                len(draws) < MAX_DRAWS_PER_LABEL * target:
            d = des.draw()
            key = sampler.key(d.index)
            if d.index in labelled:                     # a repeat draw (with replacement): free
                v = labelled[d.index]
            elif key in known:
                v, reused = int(known[key]), reused + 1
            else:
                if d.index not in values:       # labels of the items fetched since (a function
                    items = sampler.items       # of the key: of the items planned, auto)
                    plan = getattr(des, "pending_rows", None) if callable(labels) else None
                    rows = [i for i in (plan() if plan else range(len(items))) if i not in values]
                    rows += [] if d.index in rows else [d.index]
                    got = gold.values(items.iloc[rows], [sampler.key(i) for i in rows])
                    values.update(zip(rows, got.tolist()))
                v = int(values[d.index])
                if v not in (0, 1):
                    raise AssayInputError(str(labels if isinstance(labels, (str, Path))
                                              else "<labels>"), f"no label for item {key!r}",
                                          expected="a label for every item the design draws")
                new += 1
                if st is not None:
                    st.record(dataset, [Judgment(key, annotator, v)])
            draws.append(d)
            draw_labels.append(v)
            des.update(d, v)    # every draw, repeats too (OASIS counts draws), as a Campaign does
            if d.index in labelled:
                continue
            labelled[d.index] = v
            n = len(labelled)
            if marks.wants(n):
                marks.record(n, len(draws), engine_estimates(
                    des, draws, draw_labels, sampler.items["prediction"].to_numpy(), info.rows,
                    info.positives, confidence, bounds=False))
    pred = sampler.items["prediction"].to_numpy()
    est = engine_estimates(des, draws, draw_labels, pred, info.rows, info.positives,
                           confidence)
    points = marks.finish(len(labelled), len(draws), est)
    manifest = des.manifest()                               # type: ignore[attr-defined]
    params = {**des.params(), "pool_size": info.rows, "dataset": dataset,
              "settings": settings.to_dict(), "engine_passes": sampler.passes}
    drawn = sampler.items.iloc[list(labelled)].reset_index(drop=True)
    if settings.name == "importance" and probability is None:
        est = _with_note(est, IMPORTANCE_NOTE)
    return EngineResult(settings.name, int(seed), len(labelled), info.rows, confidence, est,
                        params, draws, draw_labels, drawn, manifest, new, reused,
                        des.strata_table(), info.source, annotator, points)


__all__ = ["ENGINE_DESIGNS", "EngineResult", "GoldLabels", "engine_design",
           "engine_estimates", "evaluate_on_engine"]
