"""``assay stratified design | adjudicate | estimate`` (formats in docs/stratified.md).

All I/O of the stratified package lives here and in :mod:`.trec`. Bad input prints one line
``error: FILE:LINE: ...`` to stderr and exits with code 2; outputs are written to a temporary
file and renamed, so nothing is half-written.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from functools import wraps
from pathlib import Path
from typing import List, Optional

import numpy as np
import typer

from assay.core.allocation import allocate_by_rule
from assay.core.rows import unique_rows
from assay.core.types import Code
from assay.stratified.design import draw_sample, stratify_by_labels, stratify_by_runs
from assay.core.double_sampling import (NOT_ADJUDICATED, allocate_adjudication, build_counts,
                              draw_adjudication, error_rates)
from assay.core.two_phase import (CELL_NOT_RELEVANT, CELL_RELEVANT, TopicEstimate, estimate,
                         mean_over_topics)
from assay.core.two_phase_bounds import pattern_strata_sizes, primary_assumes, unadjudicated
from assay.errors import AssayInputError
from assay.formats.trec import (SampleRow, atomic_write_text, read_collection, read_qrels,
                                read_runs, read_sample, write_sample)
from assay.interfaces import stratified_inputs as inputs
from assay.interfaces.stratified_report import free_bounds as _free
from assay.interfaces.stratified_report import report as _report
from assay.interfaces.stratified_report import summary_lines

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Stratified evaluation of many runs with assessor-error correction.")

_EXTRA = {"allow_extra_args": True}


def _guard(fn):
    """Turn AssayInputError / ValueError into one line on stderr and exit code 2."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AssayInputError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2)
        except typer.Exit:
            raise
        except Exception as exc:  # pragma: no cover - a bug; still no traceback for the user
            typer.echo(f"error: internal error ({type(exc).__name__}: {exc}); please report it",
                       err=True)
            raise typer.Exit(1)
    return wrapper


@app.command(context_settings=_EXTRA)
@_guard
def design(ctx: typer.Context,
           runs: List[Path] = typer.Option(..., "--runs", help="TREC run file(s): --runs A B C"),
           collection: Path = typer.Option(..., "--collection", help="Docnos, one per line"),
           budget: int = typer.Option(..., "--budget", help="Assessments per topic"),
           seed: int = typer.Option(..., "--seed", help="Seed of the random generator"),
           out: Path = typer.Option(..., "--out", help="SAMPLE.tsv to write"),
           allocation: str = typer.Option("legal", "--allocation",
                                          help="legal | proportional | neyman"),
           bottom_share: float = typer.Option(0.5, "--bottom-share",
                                              help="legal: cap of the bottom stratum's share"),
           minimum: int = typer.Option(2, "--min-per-stratum"),
           prior: List[str] = typer.Option([], "--prior",
                                           help="neyman: STRATUM=P prior proportion relevant"),
           strata: Optional[Path] = typer.Option(None, "--strata",
                                                 help="docno<TAB>stratum, user-given strata"),
           ) -> None:
    """Stratify the collection by run-return pattern, allocate and draw the sample."""
    inputs.check_seed(seed)
    inputs.check_number("--bottom-share", bottom_share, 0.0, 1.0)
    inputs.check_number("--min-per-stratum", minimum, 0.0)
    run_paths = inputs.run_files(runs, ctx)
    docs = read_collection(collection)
    dset = set(docs)
    rs = read_runs(run_paths)
    inputs.check_runs_in_collection(rs, dset, collection)
    user = inputs.read_strata_file(strata, dset) if strata else None
    if budget < 1:
        raise AssayInputError(f"--budget: expected a positive number of assessments, got {budget}")
    rng = np.random.default_rng(seed)
    rows: list[SampleRow] = []
    for topic in rs.topics():
        if user is not None:
            missing = [d for d in docs if d not in user]
            if missing:
                raise AssayInputError(f"{strata}: docno {missing[0]!r} of the collection has no "
                                 "stratum")
            st = stratify_by_labels(docs, [user[d] for d in docs])
        else:
            by_run = rs.returned[topic]
            st = stratify_by_runs(docs, {r: by_run.get(r, set()) for r in rs.order})
        pri = None
        if allocation == "neyman":
            given = {}
            for item in prior:
                name, _, val = item.partition("=")
                try:
                    given[name] = float(val)
                except ValueError:
                    raise AssayInputError(f"--prior: expected STRATUM=P, got {item!r}") from None
                inputs.check_number(f"--prior {name}", given[name], 0.0, 1.0)
            missing = [n for n in st.names if n not in given]
            if missing:
                raise AssayInputError(f"--prior: no prior proportion for stratum {missing[0]!r} "
                                 f"(strata: {', '.join(st.names)})")
            pri = [given[n] for n in st.names]
        n_l = allocate_by_rule(st.sizes, budget, allocation, prior=pri, minimum=minimum,
                       bottom=st.bottom, bottom_share=bottom_share)
        sample = draw_sample(docs, st, n_l, rng)
        rows.extend(SampleRow(d, s, float(p), topic) for d, s, p in
                    zip(sample.docnos, sample.strata, sample.inclusion_probability))
    write_sample(out, rows)
    typer.echo(f"wrote {len(rows)} documents ({len(rs.topics())} topic(s)) to {out}", err=True)


@app.command(context_settings=_EXTRA)
@_guard
def adjudicate(ctx: typer.Context,
               sample: Path = typer.Option(..., "--sample", help="SAMPLE.tsv from design"),
               assessments: Path = typer.Option(..., "--assessments", help="Fallible qrels"),
               budget: int = typer.Option(..., "--budget", help="Adjudications per topic"),
               seed: int = typer.Option(..., "--seed"),
               out: Path = typer.Option(..., "--out", help="ADJ.tsv to write"),
               runs: List[Path] = typer.Option([], "--runs",
                                               help="Runs, to target one run's recall/F1"),
               target_run: Optional[str] = typer.Option(None, "--target-run"),
               metric: str = typer.Option("recall", "--metric", help="recall | f1"),
               fpr: float = typer.Option(0.05, "--prior-fpr", help="Prior false-positive rate"),
               fnr: float = typer.Option(0.05, "--prior-fnr", help="Prior false-negative rate"),
               minimum: int = typer.Option(2, "--min-per-cell"),
               appeals: Optional[Path] = typer.Option(
                   None, "--appeals", help="Appealed documents 'topic docno' (sub-strata)"),
               ) -> None:
    """Choose the assessed documents the authority should re-assess (double sampling)."""
    inputs.check_seed(seed)
    inputs.check_number("--prior-fpr", fpr, 0.0, 1.0, high_open=True)
    inputs.check_number("--prior-fnr", fnr, 0.0, 1.0, high_open=True)
    inputs.check_number("--min-per-cell", minimum, 0.0)
    if target_run is not None and not runs:
        raise AssayInputError("--target-run: needs the run files (--runs) to know which "
                              "documents it returns")
    qrels, _ = read_qrels(assessments)
    default = None
    if not inputs.has_topic_column(sample):
        if len(qrels) != 1:
            raise AssayInputError(f"{sample}: no topic column, and {assessments} does not hold "
                             "exactly one topic")
        default = next(iter(qrels))
    rows_all = read_sample(sample, default_topic=default)
    run_paths = inputs.run_files(runs, ctx)
    rs = read_runs(run_paths) if run_paths else None
    if target_run is not None and (rs is None or target_run not in rs.order):
        raise AssayInputError(f"--target-run: run {target_run!r} is not among the --runs given")
    if metric not in ("recall", "f1"):
        raise AssayInputError(f"--metric: expected recall or f1, got {metric!r}")
    if budget < 0:
        raise AssayInputError(f"--budget: expected a non-negative number, got {budget}")
    appealed = inputs.read_appeals(appeals)
    rng = np.random.default_rng(seed)
    out_rows: list[SampleRow] = []
    for topic, rows in sorted(inputs.by_topic(rows_all).items()):
        names, M, s = inputs.strata_of(rows, sample)
        fal = inputs.fallible(rows, qrels, topic, sample, assessments)
        if rs is not None:
            order = rs.order
            by_run = rs.returned.get(topic, {})
            bits = np.array([[r.docno in by_run.get(k, set()) for k in order] for r in rows])
        else:
            order, bits = [], np.zeros((len(rows), 0), bool)
        pats, g = unique_rows(bits.reshape(len(rows), -1), return_inverse=True)
        ap = (np.array([r.docno in appealed.get(topic, set()) for r in rows])
              if appeals is not None else None)
        sc = build_counts(M, pats.reshape(len(pats), -1), s, g.ravel(), fal, appealed=ap,
                          run_ids=order, strata=names)
        run_k = order.index(target_run) if target_run is not None else None
        alloc = allocate_adjudication(sc, budget, run=run_k, metric=metric, fpr=fpr, fnr=fnr,
                                      minimum=minimum)
        cell = np.where(fal == 1, CELL_RELEVANT, np.where(fal == 0, CELL_NOT_RELEVANT, 0))
        if ap is not None:
            cell = np.where(ap & (fal >= 0), cell + 2, cell)
        chosen = draw_adjudication(s, cell, alloc, rng)
        N1 = np.zeros_like(alloc)
        np.add.at(N1, (s, cell), 1)
        for i in chosen:
            p2 = alloc[s[i], cell[i]] / N1[s[i], cell[i]]
            r = rows[i]
            out_rows.append(SampleRow(r.docno, r.stratum, float(r.inclusion_probability * p2),
                                      topic))
    write_sample(out, out_rows)
    typer.echo(f"wrote {len(out_rows)} documents to adjudicate to {out}", err=True)


@app.command("estimate", context_settings=_EXTRA)
@_guard
def estimate_cmd(ctx: typer.Context,
                 runs: List[Path] = typer.Option(..., "--runs", help="TREC run file(s)"),
                 collection: Path = typer.Option(..., "--collection"),
                 sample: Path = typer.Option(..., "--sample"),
                 assessments: Optional[Path] = typer.Option(
                     None, "--assessments", help="Fallible qrels (optional with a --store "
                                                 "that holds them)"),
                 adjudication_sample: Optional[Path] = typer.Option(None,
                                                                    "--adjudication-sample"),
                 adjudications: Optional[Path] = typer.Option(None, "--adjudications"),
                 confidence: float = typer.Option(0.95, "--confidence"),
                 interval_method: str = typer.Option(
                     "jeffreys", "--interval",
                     help="jeffreys (small-count safe, the default) | logit | wald"),
                 appeals: Optional[Path] = typer.Option(
                     None, "--appeals", help="Appealed documents 'topic docno' (sub-strata)"),
                 json_out: Path = typer.Option(..., "--json", help="JSON report to write"),
                 store: Optional[str] = typer.Option(
                     None, "--store", help="Label store (SQLite path or SQLAlchemy URL): "
                                           "assessments and adjudications are kept there as "
                                           "judgments and reused"),
                 dataset: str = typer.Option("trec", "--dataset", help="Dataset in the store"),
                 assessor: str = typer.Option("assessor", "--assessor",
                                              help="Whose assessments these are"),
                 adjudicator: str = typer.Option("adjudicator", "--adjudicator",
                                                 help="Whose adjudications these are"),
                 replace_stored: bool = typer.Option(False, "--replace-stored",
                                                     help="Files overwrite stored judgments"),
                 ) -> None:
    """Estimate yield and each run's recall, precision and F1 with CIs."""
    if adjudications is not None and adjudication_sample is None or (
            adjudication_sample is not None and adjudications is None and store is None):
        raise AssayInputError("--adjudication-sample and --adjudications go together (without "
                              "--adjudications, the adjudications must be in the --store)")
    if not 0 < confidence < 1:
        raise AssayInputError(f"--confidence: expected a number in (0, 1), got {confidence}")
    if interval_method not in ("jeffreys", "logit", "wald"):
        raise AssayInputError("--interval: expected jeffreys, logit or wald, got "
                              f"{interval_method!r}")
    run_paths = inputs.run_files(runs, ctx)
    docs = set(read_collection(collection))
    rs = read_runs(run_paths)
    inputs.check_runs_in_collection(rs, docs, collection)
    single = None if inputs.has_topic_column(sample) else (rs.topics()[0] if len(rs.topics()) == 1
                                                     else None)
    if single is None and not inputs.has_topic_column(sample):
        raise AssayInputError(f"{sample}: no topic column but the runs have several topics")
    rows_all = read_sample(sample, default_topic=single)
    if assessments is None and store is None:
        raise AssayInputError("--assessments: missing (or give a --store that holds them)")
    file_qrels = read_qrels(assessments)[0] if assessments is not None else {}
    adj_rows: dict[str, dict[str, SampleRow]] = defaultdict(dict)
    adj_q: dict = {}
    if adjudication_sample is not None:
        for r in read_sample(adjudication_sample, default_topic=single):
            adj_rows[r.topic][r.docno] = r
        adj_q = read_qrels(adjudications)[0] if adjudications is not None else {}
    qrels = file_qrels
    if store is not None:
        qrels, adj_q = inputs.through_store(store, dataset, assessor, adjudicator, replace_stored,
                                      file_qrels, assessments, rows_all, adj_q, adjudications,
                                      adj_rows)
    appealed = inputs.read_appeals(appeals)
    topics_out: dict[str, dict] = {}
    ds_list, nv_list, sc_list, size_list = [], [], [], []
    double = adjudication_sample is not None
    naive_assumes = primary_assumes(False, interval_method)
    blank = []           # per topic: (cells, documents) with no adjudication
    unsampled = sorted(set(rs.topics()) - {r.topic for r in rows_all})
    for topic, rows in sorted(inputs.by_topic(rows_all).items()):
        for r in rows:
            if r.docno not in docs:
                raise AssayInputError(f"{sample}:{r.line}: docno {r.docno!r} is not in the "
                                 f"collection {collection}")
        names, M, s = inputs.strata_of(rows, sample)
        fal = inputs.fallible(rows, qrels, topic, sample,
                        assessments if assessments is not None else f"the store {store}")
        by_run = rs.returned.get(topic, {})
        bits = np.array([[r.docno in by_run.get(k, set()) for k in rs.order] for r in rows])
        inputs.check_patterns(rows, bits, names, sample, rs.order)
        pats, g = unique_rows(bits, return_inverse=True)
        true = None
        notes: list[str] = []
        if adjudication_sample is not None:
            true = np.full(len(rows), NOT_ADJUDICATED, np.int64)
            pos = {r.docno: i for i, r in enumerate(rows)}
            aq = adj_q.get(topic, {})
            for d, ar in adj_rows.get(topic, {}).items():
                if d not in pos:
                    raise AssayInputError(f"{adjudication_sample}:{ar.line}: docno {d!r} (topic "
                                     f"{topic}) is not in the sample {sample}")
                if fal[pos[d]] == Code.UNASSESSABLE:
                    raise AssayInputError(f"{adjudication_sample}:{ar.line}: docno {d!r} was "
                                     "assessed unassessable; expected only assessable documents")
                if d not in aq:
                    raise AssayInputError(f"{adjudications}: no adjudication for docno {d!r} topic "
                                     f"{topic} listed at {adjudication_sample}:{ar.line}")
                true[pos[d]] = aq[d]
            extra = set(aq) - set(adj_rows.get(topic, {}))
            if extra:
                notes.append(f"{len(extra)} adjudication(s) of documents outside the "
                             "adjudication sample were not used (not a random subsample)")
        ap = None
        if appeals is not None:
            ap = np.array([r.docno in appealed.get(topic, set()) for r in rows])
        sc = build_counts(M, pats, s, g.ravel(), fal, true, ap, rs.order, names)
        sc_naive = sc.naive()
        nv = estimate(sc_naive, confidence, interval_method)
        ds = estimate(sc, confidence, interval_method)
        ds = TopicEstimate(ds.yield_, ds.unassessable_share, ds.runs, ds.strata,
                           tuple(notes) + ds.notes)
        ignored = len(set(file_qrels.get(topic, {})) - {r.docno for r in rows})
        sizes = inputs.pattern_index(names, pats)
        sizes = None if sizes is None else pattern_strata_sizes(sc, sizes)
        sc_list.append((sc, sc_naive))
        size_list.append(sizes)
        blank.append(unadjudicated(sc))
        rep = _report(ds, nv, (_free([sc], [sizes], confidence),
                               _free([sc_naive], [sizes], confidence)),
                      (primary_assumes(double, interval_method, blank[-1]), naive_assumes))
        if adjudication_sample is not None:
            rates = {e.stratum: e.to_dict() for e in error_rates(sc)}
            for st in rep["strata"]:
                if st["stratum"] in rates:
                    st["error_rates"] = rates[st["stratum"]]
        rep["assessments_outside_sample"] = ignored
        rep["unadjudicated"] = _cells_documents(blank[-1])
        topics_out[topic] = rep
        ds_list.append(ds)
        nv_list.append(nv)
    if len(topics_out) == 1:
        result = next(iter(topics_out.values()))
        result["topic"] = next(iter(topics_out))
    else:
        result = _report(mean_over_topics(ds_list, confidence, interval_method),
                         mean_over_topics(nv_list, confidence, interval_method),
                         tuple(_free([c[i] for c in sc_list], size_list, confidence)
                               for i in (0, 1)),
                         (primary_assumes(double, interval_method, _total(blank)),
                          naive_assumes))
        result.pop("strata")
        result["mean_over_topics"] = len(topics_out)
        result["topics"] = topics_out
    if unsampled:
        result.setdefault("notes", []).append(
            f"topic(s) {', '.join(unsampled)} in the runs have no sample and were not estimated")
    result["confidence"] = confidence
    result["interval"] = interval_method
    result["double_sampling"] = double
    result["unadjudicated"] = _cells_documents(_total(blank))
    atomic_write_text(json_out, json.dumps(result, indent=2) + "\n")
    for line in summary_lines(result):
        typer.echo(line, err=True)
    typer.echo(f"wrote {json_out}", err=True)


def _total(blank: list[tuple[int, int]]) -> tuple[int, int]:
    """(cells, documents) with no adjudication over the topics."""
    return (sum(c for c, _ in blank), sum(d for _, d in blank))


def _cells_documents(blank: tuple[int, int]) -> dict[str, int]:
    """The JSON's ``unadjudicated``."""
    return {"cells": int(blank[0]), "documents": int(blank[1])}


def main() -> None:  # pragma: no cover
    app(prog_name="assay stratified")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
