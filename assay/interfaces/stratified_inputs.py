"""Inputs of the ``assay stratified`` commands: TREC run, collection, sample, qrels, strata and
appeals files read and cross-checked (each mistake one line naming file and line), and the label
store as the source of assessments and adjudications."""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import List, Optional

import numpy as np
import typer

from assay.core.strata import pattern_name
from assay.errors import AssayInputError
from assay.formats.trec import Runs, SampleRow

def run_files(runs: List[Path], ctx: typer.Context) -> list[Path]:
    extra = [Path(a) for a in ctx.args]
    bad = [a for a in ctx.args if a.startswith("-")]
    if bad:
        raise AssayInputError(f"unknown option {bad[0]!r}")
    paths = list(runs) + extra
    seen: dict[Path, Path] = {}
    for p in paths:
        key = p.resolve()
        if key in seen:
            raise AssayInputError(f"--runs: {p} is given twice (as {seen[key]} before); "
                                  "expected each run file once")
        seen[key] = p
    return paths


def check_runs_in_collection(runs: Runs, collection: set[str], docs_path: Path) -> None:
    for topic, by_run in runs.returned.items():
        for runid, docs in by_run.items():
            for d in docs:
                if d not in collection:
                    f, line = runs.where[(topic, runid, d)]
                    raise AssayInputError(f"{f}:{line}: docno {d!r} is not in the collection "
                                     f"{docs_path}")


def read_strata_file(path: Path, collection: set[str]) -> dict[str, str]:
    from assay.formats.trec import _lines
    out: dict[str, str] = {}
    for i, line in _lines(path):
        if not line.strip():
            continue
        f = line.split("\t") if "\t" in line else line.split()
        if len(f) != 2:
            raise AssayInputError(f"{path}:{i}: expected 'docno<TAB>stratum', got {line!r}")
        d, s = f[0].strip(), f[1].strip()
        if d not in collection:
            raise AssayInputError(f"{path}:{i}: docno {d!r} is not in the collection")
        out[d] = s
    return out


def by_topic(rows: list[SampleRow]) -> dict[str, list[SampleRow]]:
    out: dict[str, list[SampleRow]] = defaultdict(list)
    for r in rows:
        out[r.topic].append(r)
    return out


def strata_of(rows: list[SampleRow], path: Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Stratum names, population sizes M_l = n_l/π_l, and each row's stratum index."""
    names = sorted({r.stratum for r in rows})
    idx = {n: i for i, n in enumerate(names)}
    prob: dict[str, tuple[float, int]] = {}
    for r in rows:
        p0 = prob.setdefault(r.stratum, (r.inclusion_probability, r.line))
        if abs(p0[0] - r.inclusion_probability) > 1e-12 * max(1.0, p0[0]):
            raise AssayInputError(f"{path}:{r.line}: inclusion_probability {r.inclusion_probability}"
                             f" differs from {p0[0]} (line {p0[1]}) in stratum {r.stratum}; "
                             "expected one probability per stratum")
    counts = np.bincount([idx[r.stratum] for r in rows], minlength=len(names))
    M = np.array([counts[i] / prob[n][0] for i, n in enumerate(names)])
    if np.any(np.abs(M - np.round(M)) > 1e-6 * M):
        n = names[int(np.argmax(np.abs(M - np.round(M))))]
        raise AssayInputError(f"{path}: stratum {n}: sample size / inclusion probability is not a "
                         "whole number of documents (was the file edited?)")
    return names, np.round(M).astype(np.int64), np.array([idx[r.stratum] for r in rows])


def fallible(rows: list[SampleRow], qrels: dict, topic: str, sample: Path,
              assessments: Path) -> np.ndarray:
    q = qrels.get(topic, {})
    out = np.empty(len(rows), np.int64)
    for i, r in enumerate(rows):
        if r.docno not in q:
            raise AssayInputError(f"{sample}:{r.line}: docno {r.docno!r} (topic {topic}) has no "
                             f"assessment in {assessments}; expected one line "
                             f"'{topic} 0 {r.docno} REL'")
        out[i] = q[r.docno]
    return out


def read_appeals(path: Optional[Path]) -> dict[str, set[str]]:
    """Appeals file: 'topic docno' per appealed document."""
    appealed: dict[str, set[str]] = defaultdict(set)
    if path is not None:
        from assay.formats.trec import _lines
        for i, line in _lines(path):
            if line.strip():
                f = line.split()
                if len(f) != 2:
                    raise AssayInputError(f"{path}:{i}: expected 'topic docno', got {line!r}")
                appealed[f[0]].add(f[1])
    return appealed


def has_topic_column(path: Path) -> bool:
    from assay.formats.trec import _lines
    for _, line in _lines(path):
        if line.strip():
            return "topic" in [h.strip() for h in line.split("\t")]
    return False


def through_store(store: str, dataset: str, assessor: str, adjudicator: str, replace: bool,
                   qrels: dict, assessments: Optional[Path], rows: list[SampleRow],
                   adj_q: dict, adjudications: Optional[Path],
                   adj_rows: dict[str, dict[str, SampleRow]]) -> tuple[dict, dict]:
    """Record the files' judgments of the sampled documents in the label store (assessor and
    adjudicator roles) and read back everything stored: the store is the estimate's source."""
    from assay.labels.schema import Role
    from assay.labels.store import LabelStore
    from assay.stratified.judgments import record_qrels, stored_qrels
    st = LabelStore(store)
    try:
        if assessments is not None:
            record_qrels(st, dataset, qrels, [(r.topic, r.docno) for r in rows], assessor,
                         Role.ASSESSOR, str(assessments), replace)
        if adjudications is not None:
            record_qrels(st, dataset, adj_q, [(t, d) for t, ds in adj_rows.items() for d in ds],
                         adjudicator, Role.ADJUDICATOR, str(adjudications), replace)
        return stored_qrels(st, dataset, assessor), stored_qrels(st, dataset, adjudicator)
    finally:
        st.close()


def pattern_index(names: list[str], patterns: np.ndarray) -> np.ndarray | None:
    """Each stratum's row of ``patterns`` (G, K) where the strata are run-pattern names (one
    0/1 digit per run, as :func:`check_patterns` enforces); None for other strata.

    >>> pattern_index(["01", "10"], np.array([[True, False], [False, True]])).tolist()
    [1, 0]
    >>> pattern_index(["a", "b"], np.array([[True], [False]])) is None
    True
    """
    if not _pattern_names(names, np.asarray(patterns).shape[1]):
        return None
    row = {pattern_name(p): g for g, p in enumerate(np.asarray(patterns))}
    return np.array([row.get(n, -1) for n in names])


def _pattern_names(names: list[str], runs: int) -> bool:
    """The strata are run-pattern names: one 0/1 digit per run."""
    return all(len(n) == runs and set(n) <= {"0", "1"} for n in names)


def check_patterns(rows, bits, names, sample, order) -> None:
    """If strata are run-pattern names (one 0/1 digit per run), each document must match."""
    if not _pattern_names(names, len(order)):
        return
    for r, b in zip(rows, bits):
        pat = pattern_name(b)
        if pat != r.stratum:
            raise AssayInputError(f"{sample}:{r.line}: docno {r.docno!r} is in stratum {r.stratum} "
                             f"but the runs ({', '.join(order)}) give pattern {pat}; expected "
                             "the runs given to 'design', in the same order")


def check_number(option: str, value: float, low: float, high: float | None = None,
                 high_open: bool = False) -> None:
    """One line naming ``option`` unless ``value`` is finite and in [low, high] (or
    [low, high) with ``high_open``; no upper end with ``high`` None).

    >>> check_number("--bottom-share", 0.5, 0.0, 1.0)
    >>> check_number("--prior-fpr", float("nan"), 0.0, 1.0, high_open=True)
    Traceback (most recent call last):
    ...
    assay.errors.AssayInputError: --prior-fpr: expected a number in [0, 1), got nan
    """
    ok = math.isfinite(value) and value >= low and (
        high is None or (value < high if high_open else value <= high))
    if not ok:
        span = (f"a number ≥ {low:g}" if high is None else
                f"a number in [{low:g}, {high:g}{')' if high_open else ']'}")
        raise AssayInputError(f"{option}: expected {span}, got {value:g}")


def check_seed(seed: int) -> None:
    """``--seed`` in [0, 2^63 − 1] (numpy's generators take no negative seed)."""
    if not 0 <= seed < 2 ** 63:
        raise AssayInputError(f"--seed: expected an integer in [0, 2^63 − 1], got {seed}")
