"""``assay campaign new | exhaustive | submit | report``: an on-demand, open-world evaluation of
many systems kept in a label store (:mod:`assay.ondemand`).

Files (CSV/TSV/Parquet, read as text):

* a submission: one row per output item, its canonical key in ``--key`` (one column, or several
  joined by a tab, e.g. ``--key subject,relation,object``); optional structure columns
  ``unit``, ``subject``, ``relation``, ``object`` (``report --level relation|entity`` scores
  from them); duplicate keys are one item;
* a gold file (the label source for tests and demos): the same key column(s) and ``label`` (0/1);
* exhaustive annotations: ``unit`` and the key column(s) of each true item of the unit; a unit
  with no true item has one row with an empty key.

Every check is made before the first write: a bad file, row or option is one line naming it,
exit 2, and nothing is written. ``report --json`` and ``report --html`` (a self-contained page
with a plot, :mod:`assay.interfaces.campaign_report`) are checked before the report is computed
and each written atomically (``-`` is stdout).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pandas as pd
import typer
from rich.table import Table

from assay.errors import AssayInputError
from assay.formats.pool import KEY_SEPARATOR, binary_column, read_table, where
from assay.interfaces.cli_errors import OneLineGroup, StdoutConsole, user_errors
from assay.labels.sources import CallableLabels
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.ondemand.campaign import MEASURES
from assay.ondemand.store import STRUCTURE
from assay.outputs import STDOUT, check_output, write_text

app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  help="On-demand open-world evaluation of many systems (kept in a store).")
out = StdoutConsole()

STORE = typer.Option("assay.db", "--store", help="Label store: SQLite path or SQLAlchemy URL")
KEY = typer.Option("item", "--key", help="Key column(s) of an item, comma-separated")


def _keys(df: pd.DataFrame, key: str, name: str, kind: str, allow_blank: bool = False
          ) -> pd.Series:
    cols = [c.strip() for c in key.split(",") if c.strip()]
    missing = [c for c in cols if c not in df.columns]
    if not cols or missing:
        raise AssayInputError(name, f"no column {missing[0] if missing else key!r}",
                              expected=f"--key naming columns of {sorted(map(str, df.columns))}")
    parts = df[cols].astype("string").fillna("")
    blank = (parts.apply(lambda c: c.str.strip() == "")).any(axis=1).to_numpy()
    if not allow_blank and blank.any():
        r = int(blank.nonzero()[0][0])
        raise AssayInputError(name, "empty key", where=where(kind, r),
                              expected=f"a value in {', '.join(cols)}")
    keys = parts.agg(KEY_SEPARATOR.join, axis=1) if len(cols) > 1 else parts[cols[0]]
    return keys.where(~pd.Series(blank, index=keys.index), "")


def _open(store: str, name: str) -> tuple[LabelStore, OnDemandCampaign]:
    labels = LabelStore(store)
    return labels, OnDemandCampaign.open(labels, name)


@app.command()
@user_errors
def new(name: str = typer.Argument(..., help="Campaign name"), store: str = STORE,
        dataset: Optional[str] = typer.Option(None, "--dataset",
                                              help="Dataset of its labels (default: NAME)"),
        annotator: str = typer.Option("gold", "--annotator", help="Whose labels"),
        corpus_units: Optional[int] = typer.Option(None, "--corpus-units",
                                                   help="Units (documents) in the corpus"),
        confidence: float = typer.Option(0.90, "--confidence"),
        half_width: float = typer.Option(0.05, "--half-width",
                                         help="Target half-width of each precision interval"),
        submission_cap: int = typer.Option(1000, "--submission-cap",
                                           help="Most draws for one submission"),
        campaign_cap: Optional[int] = typer.Option(None, "--campaign-cap",
                                                   help="Most labels for the whole campaign"),
        seed: int = typer.Option(0, "--seed", min=0, max=2**63 - 1)) -> None:
    """Create a campaign."""
    OnDemandCampaign.create(LabelStore(store), name, dataset=dataset, annotator=annotator,
                            corpus_units=corpus_units, confidence=confidence,
                            half_width=half_width, submission_cap=submission_cap,
                            campaign_cap=campaign_cap, seed=seed)
    out.print(f"campaign {name!r} created")


@app.command()
@user_errors
def exhaustive(name: str = typer.Argument(..., help="Campaign name"),
               units: Path = typer.Argument(..., help="unit,key rows: every true item of "
                                            "each exhaustively annotated unit"),
               store: str = STORE, key: str = KEY,
               unit_column: str = typer.Option("unit", "--unit-column"),
               corpus_units: Optional[int] = typer.Option(None, "--corpus-units")) -> None:
    """Record exhaustively annotated units (a simple random sample of the corpus's units)."""
    df, src, kind = read_table(units, "units")
    if unit_column not in df.columns:
        raise AssayInputError(src, f"no column {unit_column!r}", expected="--unit-column")
    u = df[unit_column].astype("string").fillna("")
    bad = (u.str.strip() == "").to_numpy()
    if bad.any():
        raise AssayInputError(src, "empty unit", where=where(kind, int(bad.nonzero()[0][0])))
    keys = _keys(df, key, src, kind, allow_blank=True)
    truth: dict[str, list[str]] = {}
    for unit, k in zip(u.tolist(), keys.tolist()):
        truth.setdefault(str(unit), [])
        if k:
            truth[str(unit)].append(str(k))
    _, camp = _open(store, name)
    camp.annotate_units(truth, corpus_units)
    out.print(f"{len(truth)} units recorded ({sum(map(len, truth.values()))} true items)")


@app.command()
@user_errors
def submit(name: str = typer.Argument(..., help="Campaign name"),
           output: Path = typer.Argument(..., help="The system's output items"),
           system: str = typer.Option(..., "--system", help="The system's name"),
           gold: Path = typer.Option(..., "--gold", help="Gold labels: key column(s), label"),
           store: str = STORE, key: str = KEY,
           sampling: str = typer.Option("instance", "--sampling",
                                        help="Draw the system's sample by its instance, "
                                        "relation or entity distribution (the latter two need "
                                        "relation/subject columns)")) -> None:
    """Evaluate a system: label the sample it needs, then re-estimate every system."""
    df, src, kind = read_table(output, "submission")
    if len(df) == 0:
        raise AssayInputError(src, "no rows", expected="one row per output item")
    keys = _keys(df, key, src, kind)
    structure = df[[c for c in STRUCTURE if c in df.columns]].copy()
    first = ~keys.duplicated().to_numpy()
    g, gsrc, gkind = read_table(gold, "gold")
    if "label" not in g.columns:
        raise AssayInputError(gsrc, "no column 'label'", expected="key column(s) and label")
    gkeys = _keys(g, key, gsrc, gkind)
    values = binary_column(g, "label", gsrc, gkind)
    table: dict[str, int] = {}
    for r, (k, v) in enumerate(zip(gkeys.tolist(), values.tolist())):
        if table.setdefault(k, v) != v:
            raise AssayInputError(gsrc, f"item {k!r} has labels 0 and 1", where=where(gkind, r))
    missing = [k for k in keys.tolist() if k not in table]
    if missing:
        raise AssayInputError(gsrc, f"no label for item {missing[0]!r} of {src}",
                              expected="a label for every item of the submission")
    _, camp = _open(store, name)
    rep = camp.submit(system, keys[first].tolist(), CallableLabels(table.__getitem__, "gold"),
                      structure[first].reset_index(drop=True), sampling=sampling)
    e = rep.estimates["precision"]
    out.print(f"{system}: {rep.draws} draws, {rep.labels_used} new labels; precision "
              f"{e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]")


@app.command()
@user_errors
def report(name: str = typer.Argument(..., help="Campaign name"), store: str = STORE,
           json_out: Optional[str] = typer.Option(None, "--json",
                                                  help="Write the report as JSON (- = stdout)"),
           html_out: Optional[str] = typer.Option(None, "--html",
                                                  help="Write an HTML report with a plot of "
                                                  "every system's intervals (- = stdout)"),
           level: str = typer.Option("instance", "--level",
                                     help="instance (micro), relation or entity (macro "
                                     "precision, from the submissions' relation/subject "
                                     "columns)"),
           ) -> None:
    """Every system's joint precision, open-world recall, F1 and pooled recall."""
    if json_out is not None:
        check_output(json_out, "--json")
    if html_out is not None:
        check_output(html_out, "--html")
        if html_out == json_out:
            raise AssayInputError("--html", f"{html_out}", expected="a path other than --json's")
    _, camp = _open(store, name)
    rep = camp.report(level=level)
    if html_out is not None:
        from assay.interfaces.campaign_report import render_html
        page = render_html(rep)          # rendered before anything is written
    if json_out is not None:
        write_text(json_out, json.dumps(rep.to_dict(), indent=2) + "\n", "--json")
    if html_out is not None:
        write_text(html_out, page, "--html")
    if STDOUT in (json_out, html_out):
        return
    t = Table(title=f"campaign {name}: {rep.labels_total} labels, {rep.units_annotated} "
              f"units annotated exhaustively ({camp.row.confidence:.0%} intervals)")
    t.add_column("system")
    t.add_column("labels", justify="right")
    for m in MEASURES:
        t.add_column(m.replace("_", " "))
    for s in rep.systems:
        cells = []
        for m in MEASURES:
            e = s.estimates[m]
            cells.append("—" if not e.defined or e.ci_low is None else
                         f"{e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]")
        t.add_row(s.name, str(s.labels_used), *cells)
    out.print(t)
    for note in rep.notes:
        out.print(note)


__all__ = ["app"]
