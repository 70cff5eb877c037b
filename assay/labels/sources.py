"""Label sources (oracles): a gold file playing the annotator, a seeded simulated annotator with
false-positive/false-negative rates, a Python mapping or callable, a person at the terminal, and
a panel of several annotators whose majority is the label.

Every source answers ``label(index, key)`` with 0, 1, ``SKIP`` (no label for this item) or
``UNDO`` (take back the previous label); its ``annotator`` names whose labels they are.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from assay.core.vote import NO_LABEL, panel_decision
from assay.errors import AssayInputError
from assay.formats.pool import (KEY_SEPARATOR, Pool, binary_column, check_ids, id_text,
                                read_table, where)

SKIP = -1
UNDO = -2


class LabelSource:
    annotator: str = "oracle"

    def label(self, index: int, key: str) -> int:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class ArrayLabels(LabelSource):
    """Labels aligned with the pool (−1 where unknown): the fast path for gold files. With
    ``missing_skips`` an unknown label is a skip (a panel member who did not label the item)."""

    values: np.ndarray
    annotator: str = "gold"
    source: str = "<labels>"
    missing_skips: bool = False

    def label(self, index: int, key: str) -> int:
        v = int(self.values[index])
        if v < 0 and self.missing_skips:
            return SKIP
        if v < 0:
            raise AssayInputError(self.source, f"no label for item {key!r}",
                                  expected="a label for every item the design draws")
        return v


@dataclass
class CallableLabels(LabelSource):
    """Any function of the item's key (its id values, tab-separated) returning 0/1."""

    fn: Callable[[str], Any]
    annotator: str = "callable"

    def label(self, index: int, key: str) -> int:
        v = self.fn(key)
        if v in (SKIP, UNDO, None):
            return SKIP if v is None else int(v)
        if v not in (0, 1, True, False):
            raise AssayInputError("<label function>", f"returned {v!r} for item {key!r}",
                                  expected="0 or 1")
        return int(v)


@dataclass
class SimulatedAnnotator(LabelSource):
    """A fallible annotator: flips a true 0 with probability ``fpr`` and a true 1 with ``fnr``.

    Each item's answer is fixed by (seed, item), so the same item always gets the same label,
    whatever the order of questions.
    """

    truth: LabelSource
    fpr: float = 0.0
    fnr: float = 0.0
    seed: int = 0
    annotator: str = ""

    def __post_init__(self) -> None:
        for name, v in (("fpr", self.fpr), ("fnr", self.fnr)):
            if not 0.0 <= v <= 1.0:
                raise AssayInputError("<simulated annotator>", f"{name} = {v}",
                                      expected="a rate in [0, 1]")
        if not self.annotator:
            self.annotator = f"simulated(fpr={self.fpr:g},fnr={self.fnr:g},seed={self.seed})"

    def label(self, index: int, key: str) -> int:
        true = self.truth.label(index, key)
        u = _uniform(self.seed, zlib.crc32(key.encode()))
        flip = self.fnr if true == 1 else self.fpr
        return int(1 - true) if u < flip else int(true)


@lru_cache(maxsize=1 << 16)
def _uniform(seed: int, key_hash: int) -> float:
    """The simulated annotator's uniform for one item: a function of its seed and the item's
    key only (so a later run asks it again and gets the same answer), kept for the items a
    simulation asks again and again."""
    return float(np.random.default_rng([seed, key_hash]).random())


@dataclass
class Panel(LabelSource):
    """Several annotators, one label: the **majority** of their votes.

    Members are asked in order until one answer has a strict majority of the panel
    (⌊m/2⌋ + 1 of m votes), so a panel of three asks a third annotator only when the first two
    disagree. A member may skip; if the panel runs out without a majority (a tie, or too many
    skips) the item is skipped. The estimates then target the measure under majority labels —
    the labels this panel would give every item of the pool — not an unobservable truth: with
    independent annotators of error rate e the majority of three errs with probability
    3e² − 2e³ (0.028 for e = 0.1). Each vote is stored under its member's name, so a later
    evaluation can aggregate differently (e.g. Dawid–Skene, :mod:`assay.labels.aggregation`).
    The decision rule is :func:`assay.core.vote.panel_decision` (the campaign asks a panel with
    the same rule); ``votes`` counts the answers given, ``disagreements`` the items whose votes
    differed.
    """

    members: list[LabelSource]
    annotator: str = ""
    votes: int = 0
    disagreements: int = 0

    def __post_init__(self) -> None:
        if not self.members:
            raise AssayInputError("<panel>", "no annotators", expected="at least one annotator")
        names = [m.annotator for m in self.members]
        if len(set(names)) != len(names):
            raise AssayInputError("<panel>", f"annotator names repeat: {names}",
                                  expected="one distinct name per annotator")
        if not self.annotator:
            self.annotator = "majority(" + ",".join(names) + ")"

    @property
    def needed(self) -> int:
        return len(self.members) // 2 + 1

    def label(self, index: int, key: str) -> int:
        count = [0, 0]
        m = len(self.members)
        for j, member in enumerate(self.members):
            v = member.label(index, key)
            if v == UNDO:
                return UNDO
            if v in (0, 1):
                count[v] += 1
                self.votes += 1
            decided = panel_decision(count[1], count[0], m - j - 1, m)
            if decided is not None:
                self.disagreements += min(count) > 0
                return SKIP if decided == NO_LABEL else decided
        self.disagreements += min(count) > 0
        return SKIP


def simulated_panel(truth: LabelSource, size: int, fpr: float, fnr: float,
                    seed: int) -> LabelSource:
    """``size`` independent simulated annotators (seeds ``seed``, ``seed + 1``, …) as a
    :class:`Panel`, or the one annotator when ``size`` is 1."""
    if size < 1:
        raise AssayInputError("--votes", str(size), expected="a positive number of annotators")
    members = [SimulatedAnnotator(truth, fpr=fpr, fnr=fnr, seed=seed + j) for j in range(size)]
    return members[0] if size == 1 else Panel(list(members))


def gold_from_frame(df: pd.DataFrame, name: str, kind: str, pool: Pool,
                    annotator: str = "gold") -> LabelSource:
    """Align a gold table (the pool's id columns, or ``id``, plus ``label``) with the pool.

    Ids match as text: a CSV id is the text written there (``007`` is not ``7``); a numeric
    id, in the pool or the gold file, is its canonical text (``68``, not ``68.0``), and text
    ids are read as numbers when the pool's ids are numbers (:func:`id_text`). A gold file
    sharing no id with the pool is an error. With an ``annotator`` column an item may have
    several labels, one per annotator: they become a :class:`Panel` whose majority is the
    label."""
    if len(df) == 0:
        raise AssayInputError(name, "no labels", expected="a row per labelled item")
    cols = [c for c in (pool.id_columns if all(c in df.columns for c in pool.id_columns)
                        else ["id"]) if c in df.columns]
    if "annotator" in df.columns and "label" in df.columns and cols:
        return _panel_from_frame(df, name, kind, pool, cols)
    if "label" not in df.columns:
        raise AssayInputError(name, "missing column 'label'",
                              expected=f"columns {pool.id_columns + ['label']} or ['id', 'label']")
    cols = pool.id_columns
    if not all(c in df.columns for c in cols):
        if "id" in df.columns and len(cols) == 1:
            df = df.rename(columns={"id": cols[0]})
        elif "id" not in df.columns:
            raise AssayInputError(name, f"missing id column(s) {cols}",
                                  expected=f"the pool's id columns {cols} or 'id'")
    lab = binary_column(df, "label", name, kind)
    if all(c in df.columns for c in cols):
        on = cols
        right = pd.DataFrame({c: id_text(df[c], like=pool.ids[c]) for c in cols})
        left = pool.id_texts()
    else:                        # one 'id' column for several pool id columns: tab-joined keys
        on = ["__key"]
        right = pd.DataFrame({"__key": id_text(df["id"])})
        parts = [pool.id_texts()[c].tolist() for c in cols]
        left = pd.DataFrame({"__key": [KEY_SEPARATOR.join(t) for t in zip(*parts)]})
    check_ids(right, on, name, kind, unique=False)
    index = _index(right[on])            # its hash table serves both the check and the join
    if not index.is_unique:
        check_ids(right, on, name, kind)              # names the first repeated id
    # each pool row's gold row (the ids are unique: a left join, without building its frame)
    at = index.get_indexer(_index(left[on]))
    values = np.where(at >= 0, lab[at], -1).astype(np.int8)
    if not (values >= 0).any():
        raise AssayInputError(name, f"none of its {len(df)} ids is an id of the pool "
                              f"{pool.source} (its first: {right[on].iloc[0].tolist()}, the "
                              f"pool's first: {left[on].iloc[0].tolist()})",
                              expected="the pool's ids, written the same way")
    return ArrayLabels(values=values, annotator=annotator, source=name)


def _index(ids: pd.DataFrame) -> pd.Index:
    """The rows of ``ids`` as an index: one column's values, or a MultiIndex of several."""
    if ids.shape[1] == 1:
        return pd.Index(ids.iloc[:, 0])
    return pd.MultiIndex.from_frame(ids)


def _panel_from_frame(df: pd.DataFrame, name: str, kind: str, pool: Pool,
                      cols: list[str]) -> LabelSource:
    """A gold table with an ``annotator`` column: one member per annotator (a single annotator
    is a plain gold file whose missing labels are errors)."""
    blank = df["annotator"].isna() | df["annotator"].map(lambda v: not str(v).strip())
    if blank.any():
        row = int(np.flatnonzero(blank.to_numpy())[0])
        raise AssayInputError(name, "empty annotator", where=where(kind, row),
                              expected="the annotator's name in every row")
    names = df["annotator"].astype(str)
    keyed = pd.DataFrame({c: id_text(df[c], like=pool.ids[c] if c in pool.ids else None)
                          for c in cols}).assign(annotator=names.to_numpy())
    check_ids(keyed, cols, name, kind, unique=False)   # an empty id, by its line in the file
    dup = keyed.duplicated(cols + ["annotator"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise AssayInputError(name, f"{where(kind, row)}: item labelled twice by annotator "
                              f"{names.iloc[row]!r}", expected="one label per item and "
                              "annotator")
    binary_column(df, "label", name, kind)   # row numbers of the whole file in errors
    members = [gold_from_frame(df.loc[names == who].drop(columns=["annotator"]), name, kind,
                               pool, who) for who in sorted(names.unique())]
    if len(members) == 1:       # one annotator: a gold file like any other
        return members[0]
    for m in members:           # a panel member who did not label an item abstains
        assert isinstance(m, ArrayLabels)
        m.missing_skips = True
    return Panel(members)


def label_source(labels: Any, pool: Pool, annotator: str | None = None) -> LabelSource:
    """Turn what a user passes as labels (path, DataFrame, Arrow table, mapping, callable or a
    :class:`LabelSource`) into a label source for ``pool``."""
    if isinstance(labels, LabelSource):
        if annotator:
            labels.annotator = annotator
        return labels
    if isinstance(labels, Mapping):
        table = {(KEY_SEPARATOR.join(map(str, k)) if isinstance(k, tuple) else str(k)): v
                 for k, v in labels.items()}
        keys = pool.keys()
        vals = np.array([int(table.get(k, -1)) for k in keys], dtype=np.int8)
        bad = ~np.isin(vals, (-1, 0, 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise AssayInputError("<labels mapping>", f"label {vals[i]!r} for item {keys[i]!r}",
                                  expected="0 or 1")
        return ArrayLabels(vals, annotator or "mapping", "<labels mapping>")
    if callable(labels) and not isinstance(labels, pd.DataFrame):
        return CallableLabels(labels, annotator or getattr(labels, "__name__", "callable"))
    df, name, kind = read_table(labels, "labels")
    return gold_from_frame(df, name, kind, pool, annotator or "gold")


__all__ = ["ArrayLabels", "CallableLabels", "LabelSource", "Panel", "SimulatedAnnotator", "SKIP",
           "UNDO", "gold_from_frame", "label_source", "simulated_panel", "where"]
