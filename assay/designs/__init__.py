"""Sampling designs: which items to label, and the probability each draw had."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.designs.auto import AutoDesign
from assay.designs.base import Design, Draw, SparseShuffle
from assay.designs.importance import ImportanceDesign
from assay.designs.oasis import OasisDesign
from assay.designs.passive import UniformWithoutReplacement, UniformWithReplacement
from assay.designs.stratified import StratifiedDesign, stratified_design
from assay.core.strata import Strata, csf_strata, equal_size_strata, make_strata

DESIGNS = ("auto", "passive", "stratified", "importance", "oasis")


def build_design(name: str, *, n: int, predictions: np.ndarray, score: np.ndarray | None,
                 prior: np.ndarray | None, budget: int, rng: np.random.Generator,
                 alpha: float = 0.5, options: dict[str, Any] | None = None) -> Design:
    """The design called ``name`` over a pool with these predictions/scores.

    Options: passive ``replace`` (default False); stratified ``strata`` ('csf'|'equal'),
    ``n_strata`` (30), ``allocation`` ('neyman'|'proportional'); importance ``epsilon`` (0.1);
    oasis ``oasis_epsilon`` (1e-3), ``n_strata``, ``strata``, ``prior_strength``,
    ``decaying_prior``, ``v_star``; auto ``first``, ``batches`` (5), ``degree`` (0: the averaged
    hinge calibrations), ``census_share`` (default: ½ under imbalance, else 0.1).
    """
    opt = dict(options or {})
    if name == "auto":
        if score is None:
            raise ValueError("the auto design needs a score or probability column "
                             "(without one, use --design passive)")
        return AutoDesign(score, predictions, budget, rng, alpha=alpha,
                          first=opt.get("first"), batches=int(opt.get("batches", 5)),
                          order=opt.get("precomputed_order"), degree=int(opt.get("degree", 0)),
                          census_share=opt.get("census_share"))
    if name == "oasis":
        if prior is None and score is None:
            raise ValueError("the oasis design needs a score or probability column")
        return OasisDesign(prior, predictions, score, rng, alpha=alpha,
                           epsilon=float(opt.get("oasis_epsilon", 1e-3)),
                           n_strata=int(opt.get("n_strata", 30)),
                           strata=opt.get("strata", "csf"),
                           prior_strength=opt.get("prior_strength"),
                           decaying_prior=bool(opt.get("decaying_prior", True)),
                           v_star=opt.get("v_star", "paper"),
                           precomputed_strata=opt.get("precomputed_strata"))
    if name == "passive":
        if opt.get("replace", False):
            return UniformWithReplacement(n, rng)
        return UniformWithoutReplacement(n, budget, rng)
    if name == "stratified":
        return stratified_design(score, prior, predictions, budget, rng,
                                 method=opt.get("strata", "csf"),
                                 n_strata=int(opt.get("n_strata", 30)),
                                 allocation=opt.get("allocation", "neyman"), alpha=alpha,
                                 strata=opt.get("precomputed_strata"))
    if name == "importance":
        if prior is None:
            raise ValueError("the importance design needs a score or probability column")
        return ImportanceDesign(prior, predictions, rng, alpha=alpha,
                                epsilon=float(opt.get("epsilon", 0.1)))
    raise ValueError(f"unknown design {name!r} (expected one of {', '.join(DESIGNS)})")


__all__ = ["DESIGNS", "AutoDesign", "Design", "OasisDesign", "Draw", "ImportanceDesign", "SparseShuffle", "Strata",
           "StratifiedDesign", "UniformWithReplacement", "UniformWithoutReplacement",
           "build_design", "csf_strata", "equal_size_strata", "make_strata"]
