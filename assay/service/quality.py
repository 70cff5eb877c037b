"""Crowd quality control of a campaign's human labels (seeds 000/001): agreement (Fleiss' κ),
each annotator's accuracy on gold questions (:mod:`assay.service.gold`), their disagreements
with the item's majority, the seeds' flagging rule (more than 20%
*and* more than 10 disagreements), and the Dawid–Skene aggregate (crowd-kit) beside the
majority.

The agreement figures (κ, and Dawid–Skene against the majority) leave out the labels of the
annotators with a live flag (:mod:`assay.service.flags`): while flagged their work counts in no
figure of the campaign, as in no decision; each annotator's own row (their disagreements, the
rule) still counts every label of theirs, so that the admin sees why they were flagged. The
majority each annotator's labels are compared with leaves out the labels of the *other*
live-flagged annotators, as the flag rule's does (:func:`assay.service.flags.disagreements`):
a flagged annotator makes no honest one look bad.

Fleiss' κ with a varying number of raters per item (Fleiss 1971, eq. 2–5 with P_i over each
item's own n_i):  P_i = (Σ_j n_ij² − n_i) / (n_i (n_i − 1)),  P̄ = mean_i P_i,
p_j = Σ_i n_ij / Σ_i n_i,  P̄_e = Σ_j p_j²,  κ = (P̄ − P̄_e) / (1 − P̄_e).

>>> round(fleiss_kappa(np.array([[2, 0], [0, 2], [1, 1]])), 3)
0.333
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from assay.labels.schema import Status
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow

FLAG_RATE, FLAG_COUNT = 0.20, 10


def flag_rule(disagreements: int, compared: int) -> bool:
    """The seeds' flag: more than :data:`FLAG_COUNT` *and* more than :data:`FLAG_RATE` of the
    ``compared`` labels disagree with the item's strict majority (the one place of the rule:
    :func:`report` and :mod:`assay.service.flags` both call it).

    >>> flag_rule(11, 40), flag_rule(11, 60), flag_rule(10, 20)
    (True, False, False)
    """
    return disagreements > FLAG_COUNT and disagreements > FLAG_RATE * max(compared, 1)


def fleiss_kappa(counts: np.ndarray) -> float:
    """κ of an items × categories matrix of counts (items with fewer than 2 ratings are left
    out); NaN when undefined (no such item, or one category only)."""
    n = counts.sum(axis=1)
    c = counts[n >= 2].astype(np.float64)
    n = n[n >= 2].astype(np.float64)
    if len(n) == 0:
        return float("nan")
    p_i = ((c ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_j = c.sum(axis=0) / n.sum()
    pe = float((p_j ** 2).sum())
    return float("nan") if pe >= 1 else float((p_i.mean() - pe) / (1 - pe))


@dataclass(frozen=True)
class AnnotatorQuality:
    name: str
    labels: int
    compared: int           # labels on items with a strict majority of the others and them
    disagreements: int
    flagged: bool
    gold_answered: int = 0
    gold_correct: int = 0


@dataclass(frozen=True)
class QualityReport:
    items: int
    labels: int
    kappa: float
    ds_differs: int         # items where Dawid–Skene and the majority disagree
    annotators: list[AnnotatorQuality] = field(default_factory=list)
    left_out: int = 0       # labels of live-flagged annotators, in neither κ nor Dawid–Skene


def votes(store: LabelStore, camp: CampaignRow) -> pd.DataFrame:
    """Every human label of the campaign: task (item), worker (annotator), label (0/1)."""
    rows = [(j.item, j.annotator, int(j.value)) for j in store.judgments(camp.dataset)
            if j.status == Status.JUDGED and j.annotator != camp.annotator]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def _majority(v: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Per item of the votes ``v``: the counts of 0 and 1, the strict majority (-1 on a tie)
    and whether it has two or more labels."""
    counts = pd.crosstab(v["task"], v["label"]).reindex(columns=[0, 1], fill_value=0)
    ones, zeros = counts[1], counts[0]
    major = pd.Series(np.where(ones > zeros, 1, np.where(zeros > ones, 0, -1)),
                      index=counts.index)
    return counts, major, counts.sum(axis=1) >= 2


def _against(mine: pd.DataFrame, major: pd.Series, multi: pd.Series) -> tuple[int, int, bool]:
    """(compared, disagreements, the rule) of one annotator's labels ``mine`` against the
    items' strict majority ``major`` (-1: a tie), over items with two or more labels
    (``multi``), both of :func:`_majority`."""
    m = mine["task"].map(major)
    c = mine[(m >= 0) & mine["task"].map(multi)]
    d = int((c["label"] != m[c.index]).sum())
    return len(c), d, flag_rule(d, len(c))


def report(store: LabelStore, camp: CampaignRow) -> QualityReport:
    """κ and the Dawid–Skene differences (live-flagged annotators' labels left out, the
    module's docstring), per-annotator disagreements with the majority (the other flagged
    annotators' labels left out: :func:`_against`) and the rule."""
    from assay.service.flags import flagged
    from assay.service.gold import accuracy
    golds = accuracy(store, camp)
    v = votes(store, camp)
    if v.empty:
        return QualityReport(0, 0, float("nan"), 0, [
            AnnotatorQuality(w, 0, 0, 0, False, *golds[w]) for w in sorted(golds)])
    counts = _majority(v)[0]
    with store.engine.connect() as conn:
        out_ = flagged(conn, camp.name)
    kept = v[~v["worker"].isin(out_)]
    honest = _majority(kept)[1:] if not kept.empty else None
    out = []
    for w, g in v.groupby("worker"):      # a flagged annotator: the others' and their labels
        base = _majority(pd.concat([kept, g]))[1:] if w in out_ else honest
        assert base is not None
        out.append(AnnotatorQuality(str(w), len(g), *_against(g, *base),
                                    *golds.get(str(w), (0, 0))))
    kappa, ds_differs = float("nan"), 0
    if not kept.empty:
        kcounts, kmajor, kmulti = _majority(kept)
        kappa = fleiss_kappa(kcounts.to_numpy())
        shared = kept[kept["task"].map(kmulti)]
        if shared["worker"].nunique() >= 2:
            from crowdkit.aggregation import DawidSkene
            ds = DawidSkene(n_iter=50).fit_predict(shared[["task", "worker", "label"]])
            m = kmajor.reindex(ds.index)
            ds_differs = int(((m >= 0) & (ds.astype(int) != m)).sum())
    return QualityReport(len(counts), len(v), kappa, ds_differs, out, len(v) - len(kept))


__all__ = ["FLAG_COUNT", "FLAG_RATE", "AnnotatorQuality", "flag_rule", "QualityReport", "fleiss_kappa",
           "report", "votes"]
