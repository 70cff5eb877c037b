"""On-demand scoring of Cold Start runs beside CS-Score's pooled score (issue 13, point 4).

The files ``cs-score`` reads (queries, assessments, runs) feed an on-demand campaign
(:class:`assay.ondemand.OnDemandCampaign`; seeds 000/001): each answer is a *relation instance*
keyed by (query, slot, normalised filler, provenance) — :func:`instance_key` — so one label
serves every run that gave the instance. Per run, :func:`score_on_demand` gives

* the official pooled score: CS-Score v2.4.4's SF ALL-Micro precision, recall and F1 under the
  cs-score options (closed world: an answer no assessor saw is UNASSESSED, ignored by default);
* the campaign's estimate of precision with its interval (and of recall and F1 once queries are
  annotated exhaustively, :meth:`OnDemandCampaign.annotate_units`);
* the run's answers never assessed (no assessment line for the exact answer: query, value and
  both provenances, what the ASSESSED discipline matches), each with its file and line.

Labels: an instance the pool assessed takes its pool judgment (value judgment C → 1; W, X, S,
L → 0, inexact counted wrong as in CS-Score's default policy; I → skip; several lines of one
instance: 1 if any is correct); any other drawn instance is asked of the label source given.

>>> normalise_filler("  Acme\\u00a0 CORP ")
'acme corp'
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Mapping, Sequence

from assay.core.types import Estimate
from assay.errors import AssayInputError
from assay.formats.kbp import ASSESSMENT, Response
from assay.labels.sources import SKIP, LabelSource
from assay.ondemand import OnDemandCampaign

from .api import _files, _gc_paused, queries_to_score, sf_lines
from .load import load
from .model import Options
from .variants import micro

POOL_LABEL = {"CORRECT": 1, "INCORRECT": 0, "INEXACT": 0, "INEXACT_SHORT": 0,
              "INEXACT_LONG": 0, "IGNORE": SKIP}


def normalise_filler(value: str) -> str:
    """The filler as instances are compared: NFKC, case-folded, white space collapsed."""
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


def instance_key(r: Response) -> str:
    """Query (full ID), slot, normalised filler and provenance (relation, then filler
    provenance, each normalised), tab-separated.

    >>> from assay.formats.kbp import parse_responses
    >>> r = parse_responses("CSSF15_ENG_0458206f71\\tper:title\\trun1\\tD2:5-9,D1:0-3\\t"
    ...                     "Mayor\\tSTRING\\tD1:1-3\\t0.9\\n", "run")[0]
    >>> instance_key(r).split("\\t")
    ['CSSF15_ENG_0458206f71', 'per:title', 'mayor', 'D1:0-3,D2:5-9;D1:1-3']
    """
    return "\t".join((r.full_query_id, r.slot, normalise_filler(r.value),
                      f"{r.relation_provenance.normal};{r.value_provenance.normal}"))


def _answer(r: Response) -> tuple[str, str, str, str]:
    return (r.full_query_id, r.value, r.relation_provenance.normal, r.value_provenance.normal)


@dataclass(frozen=True)
class PooledScore:
    """A run's official SF ALL-Micro line (CS-Score v2.4.4, the options given)."""

    precision: float
    recall: float
    f1: float
    gt: int
    submitted: int
    right: int
    wrong: int
    ignored: int
    unassessed: int


@dataclass(frozen=True)
class Unassessed:
    """An answer of a run no assessment line matches."""

    source: str
    line: int
    key: str


@dataclass(frozen=True)
class KBPRuns:
    """What the campaign needs of the files: each run's instance keys (by query in order of
    first appearance, then line order; repeats collapsed), its answers never assessed (by file
    and line), its pooled score, and the pool's labels."""

    runids: tuple[str, ...]
    keys: Mapping[str, tuple[str, ...]]
    never_assessed: Mapping[str, tuple[Unassessed, ...]]
    pooled: Mapping[str, PooledScore]
    pool_labels: Mapping[str, int]


def read_runs(paths: Sequence[str], opts: Options = Options(),
              queries: str | None = None) -> KBPRuns:
    """Read query, assessment and run files as ``cs-score`` does (same errors) and score each
    run the official way."""
    with _gc_paused():
        query_files, response_files = _files(list(paths))
        ld = load(query_files, response_files, opts.expand)
        to_score, _ = queries_to_score(ld, queries)
        assessed: set[tuple[str, str, str, str]] = set()
        labels: dict[str, int] = {}
        for entries in ld.by_base[ASSESSMENT].values():
            for a in entries:
                assessed.add(_answer(a.r))
                key, v = instance_key(a.r), POOL_LABEL[a.r.judgment or "IGNORE"]
                old = labels.get(key)
                if old is None or old == SKIP or v == 1:
                    labels[key] = v
        keys: dict[str, list[str]] = {r: [] for r in ld.runids}
        never: dict[str, list[Unassessed]] = {r: [] for r in ld.runids}
        for (runid, _base), entries in ld.by_run.items():
            for e in entries:
                key = instance_key(e.r)
                keys[runid].append(key)
                if _answer(e.r) not in assessed:
                    never[runid].append(Unassessed(e.r.source, e.r.line, key))
        pooled = {}
        for runid in ld.runids:
            lines = sf_lines(ld, opts, runid, to_score)
            total = [a for a in micro(lines, runid) if a.level == "ALL"]
            pooled[runid] = _pooled(total[0] if total else None, opts)
    return KBPRuns(tuple(ld.runids), {r: tuple(dict.fromkeys(k)) for r, k in keys.items()},
                   {r: tuple(sorted(v, key=lambda u: (u.source, u.line))) for r, v in never.items()},
                   pooled, labels)


def _pooled(line, opts: Options) -> PooledScore:
    if line is None:
        return PooledScore(0.0, 0.0, 0.0, 0, 0, 0, 0, 0, 0)
    return PooledScore(line.precision(opts.fix_precision), line.recall(),
                       line.f1(opts.fix_precision), line.gt, line.submitted, line.right,
                       line.wrong, line.ignored, line.unassessed)


class PoolFirst(LabelSource):
    """Labels from the pool's judgments where the pool assessed the instance; the others from
    ``source`` (counted in :attr:`asked`)."""

    def __init__(self, pool: Mapping[str, int], source: LabelSource) -> None:
        self.pool, self.source, self.annotator = pool, source, source.annotator
        self.asked = 0

    def label(self, index: int, key: str) -> int:
        v = self.pool.get(key)
        if v is not None:
            return v
        self.asked += 1
        return self.source.label(index, key)


@dataclass(frozen=True)
class RunComparison:
    """One run: its pooled score beside the on-demand estimates, and what the pool never saw."""

    runid: str
    instances: int
    never_assessed: tuple[Unassessed, ...]
    pooled: PooledScore
    ondemand: Mapping[str, Estimate]      # precision, recall, f1, pooled_recall
    draws: int
    labels_used: int


def score_on_demand(campaign: OnDemandCampaign, runs: KBPRuns, source: LabelSource,
                    runids: Sequence[str] | None = None) -> list[RunComparison]:
    """Submit each run's instances to the campaign (labels: the pool's, then ``source``'s) and
    compare its estimates with the pooled score."""
    labels = PoolFirst(runs.pool_labels, source)
    chosen = list(runids or runs.runids)
    unknown = [r for r in chosen if r not in runs.keys]
    if unknown:
        raise AssayInputError("runids", f"no run {unknown[0]!r} in the files",
                              expected=", ".join(runs.runids) or "a run in the files")
    for runid in chosen:
        if runs.keys[runid]:
            campaign.submit(runid, runs.keys[runid], labels)
    by_name = {s.name: s for s in campaign.report().systems}
    out = []
    for runid in chosen:
        s = by_name.get(runid)
        out.append(RunComparison(runid, len(runs.keys[runid]), runs.never_assessed[runid],
                                 runs.pooled[runid], dict(s.estimates) if s else {},
                                 s.draws if s else 0, s.labels_used if s else 0))
    return out


def _interval(e: Estimate | None) -> str:
    if e is None or e.estimate is None:
        return "-"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.estimate:.4f}"
    return f"{e.estimate:.4f} [{e.ci_low:.4f}, {e.ci_high:.4f}]"


def format_comparison(rows: Sequence[RunComparison]) -> str:
    """A tab-separated table: run, instances, never assessed, pooled P/R/F1, on-demand P and R
    (estimate [interval]), draws."""
    head = ["run", "instances", "never_assessed", "pooled_P", "pooled_R", "pooled_F1",
            "ondemand_P", "ondemand_R", "draws"]
    out = ["\t".join(head)]
    for r in rows:
        out.append("\t".join([r.runid, str(r.instances), str(len(r.never_assessed)),
                              f"{r.pooled.precision:.4f}", f"{r.pooled.recall:.4f}",
                              f"{r.pooled.f1:.4f}", _interval(r.ondemand.get("precision")),
                              _interval(r.ondemand.get("recall")), str(r.draws)]))
    return "\n".join(out) + "\n"


__all__ = ["KBPRuns", "POOL_LABEL", "PoolFirst", "PooledScore", "RunComparison", "Unassessed",
           "format_comparison", "instance_key", "normalise_filler", "read_runs",
           "score_on_demand"]
