"""Sampling designs: which items to label, and the probability each draw had."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from assay.designs.auto import AutoDesign
from assay.designs.base import Design, Draw, SparseShuffle
from assay.designs.importance import ImportanceDesign
from assay.designs.oasis import OasisDesign
from assay.designs.passive import UniformWithoutReplacement, UniformWithReplacement
from assay.designs.settings import (AutoSettings, DesignSettings, ImportanceSettings,
                                    OasisSettings, PassiveSettings, StratifiedSettings,
                                    settings_from_dict, settings_from_options)
from assay.designs.stratified import StratifiedDesign, stratified_design
from assay.core.strata import Strata, csf_strata, equal_size_strata, make_strata

DESIGNS = ("auto", "passive", "stratified", "importance", "oasis")


def build_design(design: "DesignSettings | str", *, n: int, predictions: np.ndarray,
                 score: np.ndarray | None, prior: np.ndarray | None, budget: int,
                 rng: np.random.Generator, alpha: float | None = None,
                 options: dict[str, Any] | None = None, precomputed: Any = None) -> Design:
    """The design of ``design`` (a :mod:`settings <assay.designs.settings>` object, or a name
    whose legacy ``options`` dict is converted here, at the edge) over a pool with these
    predictions/scores. ``precomputed``: strata (stratified, oasis) or a descending score order
    (auto) already built from the same scores — they do not depend on the seed, so a
    simulation sorts once (also accepted as ``options["precomputed_strata"|"precomputed_order"]``).
    """
    opt = dict(options or {})
    pre = opt.pop("precomputed_strata", None)
    pre = opt.pop("precomputed_order", pre)
    precomputed = pre if precomputed is None else precomputed
    if isinstance(design, DesignSettings):
        s = design if alpha is None else dataclasses.replace(design, alpha=alpha)
    else:
        if design not in DESIGNS:
            raise ValueError(f"unknown design {design!r} (expected one of {', '.join(DESIGNS)})")
        s = settings_from_options(design, opt, alpha)
    if isinstance(s, AutoSettings):
        if score is None:
            raise ValueError("the auto design needs a score or probability column "
                             "(without one, use --design passive)")
        return AutoDesign(score, predictions, budget, rng, alpha=s.alpha, first=s.first,
                          batches=s.batches, order=precomputed, degree=s.degree,
                          census_share=s.census_share, tail_sd=s.tail_sd,
                          audit_share=s.audit_share, explore=s.explore)
    if isinstance(s, OasisSettings):
        if prior is None and score is None:
            raise ValueError("the oasis design needs a score or probability column")
        return OasisDesign(prior, predictions, score, rng, alpha=s.alpha, epsilon=s.epsilon,
                           n_strata=s.n_strata, strata=s.strata,
                           prior_strength=s.prior_strength, decaying_prior=s.decaying_prior,
                           threshold=s.threshold, v_star=s.v_star, n_bins=s.n_bins,
                           precomputed_strata=precomputed, defensive=s.defensive,
                           budget=budget if s.floors else None, by_prediction=s.by_prediction)
    if isinstance(s, PassiveSettings):
        if s.replace:
            return UniformWithReplacement(n, rng)
        return UniformWithoutReplacement(n, budget, rng)
    if isinstance(s, StratifiedSettings):
        return stratified_design(score, prior, predictions, budget, rng, method=s.strata,
                                 n_strata=s.n_strata, allocation=s.allocation, alpha=s.alpha,
                                 strata=precomputed, floors=s.floors,
                                 by_prediction=s.by_prediction)
    if isinstance(s, ImportanceSettings):
        if prior is None:
            raise ValueError("the importance design needs a score or probability column")
        return ImportanceDesign(prior, predictions, rng, alpha=s.alpha, epsilon=s.epsilon)
    raise ValueError(f"unknown design settings {type(s).__name__}")  # pragma: no cover


__all__ = ["DESIGNS", "AutoDesign", "Design", "OasisDesign", "Draw", "ImportanceDesign", "SparseShuffle", "Strata",
           "StratifiedDesign", "UniformWithReplacement", "UniformWithoutReplacement",
           "build_design", "DesignSettings", "settings_from_dict", "settings_from_options",
           "csf_strata", "equal_size_strata", "make_strata"]
