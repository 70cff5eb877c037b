"""Structured scores (issue 12 must-have 4; seed 000 "Structured sampling for entity-level and
relation-level precision", seed 001 "Evaluating precision with pooled annotation").

An item is a relation instance with its provenance: a *mention* of a *fill* (subject, relation,
object) of a *subject* entity. Each level of scoring is a distribution p_k over system k's output
X_k, and the level's precision is E_{p_k}[f]:

* ``instance`` — p_k(x) = 1/|X_k|: micro-averaged precision over instances;
* ``relation`` — p_k(x) = 1/(R_k · |X_k ∩ r(x)|), R_k the relations in X_k: the macro-average
  over relations of each relation's precision (seed 000: "stratify the predicted instances by
  relation and collect the same number of samples from each relation");
* ``entity`` — p_k(x) = 1/(E_k · F_k(s(x)) · M_k(g(x))), E_k the subjects in X_k, F_k(s) the
  fills of subject s and M_k(g) the mentions of fill g: the seed's entity → fill → mention
  sampling; its mean is the average over entities of the average over their fills of the
  fill's mention precision ("precision scores of each fill (measured over its mentions) are
  aggregated to compute the precision score of that entity").

Scores at every level come from the same labels by reweighting: the universe's target densities
are the level's (``Universe(target=...)``) and the mixture estimate of :mod:`assay.ondemand.joint`
reweights every draw, whatever distribution it was drawn from, by p_k/q. Conversely draws made
by structured sampling (:func:`structured_draws`, their proposal the level's distribution,
``Universe(own=...)``) serve instance-level scores. Only precision is estimated at the relation
and entity levels (recall at those levels would need the exhaustive units per relation/entity).

>>> import numpy as np
>>> memb = np.array([[1], [1], [1]], dtype=bool)
>>> level_density(memb, np.array([0, 0, 1]), np.array([0, 0, 0]), np.array([0, 1, 2]),
...               "relation").round(3).ravel().tolist()
[0.25, 0.25, 0.5]
"""
from __future__ import annotations

import numpy as np

LEVELS = ("instance", "relation", "entity")


def codes(values: object) -> np.ndarray:
    """Integer codes of a column of labels (None/NaN is a label of its own).

    >>> codes(["b", "a", "b", None]).tolist()
    [2, 1, 2, 0]
    """
    arr = np.array(["\x00none" if v is None or v != v else str(v) for v in values],  # noqa: PLR0124
                   dtype=object)
    _, inv = np.unique(arr.astype(str), return_inverse=True)
    return np.asarray(inv, dtype=np.int64).reshape(-1)


def level_density(memb: np.ndarray, relation: np.ndarray, subject: np.ndarray,
                  fill: np.ndarray, level: str) -> np.ndarray:
    """p_k(x) for every row and system at ``level`` (module docstring); ``relation``,
    ``subject``, ``fill`` integer codes per row (:func:`codes`; a fill is a (subject,
    relation, object) triple)."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: expected one of {', '.join(LEVELS)}")
    mb = np.asarray(memb, dtype=bool)
    out = np.zeros(mb.shape, dtype=np.float64)
    for k in range(mb.shape[1]):
        rows = np.flatnonzero(mb[:, k])
        if rows.size == 0:
            continue
        if level == "instance":
            out[rows, k] = 1.0 / rows.size
        elif level == "relation":
            _, r, cnt = np.unique(relation[rows], return_inverse=True, return_counts=True)
            out[rows, k] = 1.0 / (cnt.size * cnt[np.asarray(r).reshape(-1)])
        else:
            _, s = np.unique(subject[rows], return_inverse=True)
            _, g, m_g = np.unique(fill[rows], return_inverse=True, return_counts=True)
            s, g = np.asarray(s).reshape(-1), np.asarray(g).reshape(-1)
            fill_subject = np.zeros(m_g.size, dtype=np.int64)
            fill_subject[g] = s
            f_s = np.bincount(fill_subject, minlength=s.max() + 1)
            out[rows, k] = 1.0 / ((s.max() + 1) * f_s[s] * m_g[g])
    return out


def structured_draws(rng: np.random.Generator, density: np.ndarray, size: int) -> np.ndarray:
    """``size`` i.i.d. draws (row indices) from one system's level distribution ``density``
    (a column of :func:`level_density`): for the entity level, a subject uniformly among the
    system's subjects, a fill uniformly among its fills, a mention uniformly among the fill's
    mentions — the same distribution drawn in one step.

    >>> structured_draws(np.random.default_rng(0), np.array([0.0, 1.0, 0.0]), 3).tolist()
    [1, 1, 1]
    """
    p = np.asarray(density, dtype=np.float64)
    return rng.choice(len(p), size=size, replace=True, p=p / p.sum())


def structure_codes(structure: object, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(relation, subject, fill) codes from a table with optional ``relation``, ``subject``
    and ``object`` columns (one row per item; a missing column is one value for all)."""
    def col(name: str) -> list:
        try:
            return list(structure[name])        # type: ignore[index]
        except (KeyError, TypeError):
            return [None] * n
    rel, sub, obj = col("relation"), col("subject"), col("object")
    return (codes(rel), codes(sub),
            codes([f"{s}\x1f{r}\x1f{o}" for s, r, o in zip(sub, rel, obj)]))


__all__ = ["LEVELS", "codes", "level_density", "structure_codes", "structured_draws"]
