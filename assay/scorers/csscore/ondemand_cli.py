"""``python -m assay.scorers.csscore.ondemand_cli``: Cold Start runs scored on demand beside
CS-Score's pooled score (:mod:`assay.scorers.csscore.ondemand`).

    python -m assay.scorers.csscore.ondemand_cli --store od.db --campaign cs15 \\
        [--gold labels.tsv] [--half-width 0.05] [--confidence 0.90] [--seed 0] \\
        [--never-assessed FILE] [--expand BASE] [--queries FILE] queries.xml pool.tab run1 ...

Prints a tab-separated table (run, instances, answers never assessed, pooled P/R/F1, on-demand
precision and recall with their intervals, draws). Labels of drawn instances the pool did not
assess come from ``--gold``: ``QUERYID<TAB>slot<TAB>filler<TAB>provenance<TAB>0|1`` lines (the
instance key of :func:`~assay.scorers.csscore.ondemand.instance_key`; the filler is normalised
on reading). ``--never-assessed`` writes each run's never-assessed answers (run, file, line,
instance key). Bad input: one line on stderr, exit code 2, nothing written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assay.errors import AssayInputError
from assay.labels.sources import CallableLabels
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.outputs import check_output, write_text

from .model import Options
from .ondemand import format_comparison, normalise_filler, read_runs, score_on_demand

PROG = "python -m assay.scorers.csscore.ondemand_cli"


def read_gold(path: str) -> dict[str, int]:
    """Instance key -> 0/1 from a five-column gold file."""
    out: dict[str, int] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise AssayInputError(path, f"cannot read: {exc}") from None
    for n, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split("\t")
        if len(f) != 5 or f[4] not in ("0", "1"):
            raise AssayInputError(path, f"line {n}: {len(f)} columns, label {f[-1]!r}",
                                  expected="QUERYID, slot, filler, provenance, 0 or 1 "
                                           "(tab-separated)")
        out["\t".join((f[0], f[1], normalise_filler(f[2]), f[3]))] = int(f[4])
    return out


def _gold_labels(gold: dict[str, int], path: str | None):
    def label(key: str) -> int:
        if key not in gold:
            raise AssayInputError(path or "--gold", f"no label for instance {key!r}",
                                  expected="a label for every drawn instance the pool did not "
                                           "assess")
        return gold[key]
    return CallableLabels(label, "gold")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="label store (SQLite file or URL)")
    ap.add_argument("--campaign", required=True, help="campaign name (made if new)")
    ap.add_argument("--gold", help="labels of instances the pool did not assess")
    ap.add_argument("--half-width", type=float, default=0.05)
    ap.add_argument("--confidence", type=float, default=0.90)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--never-assessed", help="write the never-assessed answers here")
    ap.add_argument("--expand", help="as cs-score's -expand")
    ap.add_argument("--queries", help="as cs-score's -queries")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    try:
        if a.never_assessed:
            check_output(a.never_assessed, "--never-assessed")
        gold = read_gold(a.gold) if a.gold else {}
        runs = read_runs(a.files, Options(expand=a.expand), a.queries)
        store = LabelStore(a.store)
        try:
            camp = OnDemandCampaign.open(store, a.campaign)
        except AssayInputError:
            camp = OnDemandCampaign.create(store, a.campaign, half_width=a.half_width,
                                           confidence=a.confidence, seed=a.seed)
        rows = score_on_demand(camp, runs, _gold_labels(gold, a.gold))
    except AssayInputError as exc:
        sys.stderr.write(f"{PROG}: {str(exc).splitlines()[0] if str(exc) else exc}\n")
        return 2
    if a.never_assessed:
        write_text(a.never_assessed, "".join(
            f"{r.runid}\t{u.source}\t{u.line}\t{u.key}\n" for r in rows for u in r.never_assessed),
            "--never-assessed")
    sys.stdout.write(format_comparison(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
