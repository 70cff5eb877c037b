"""A self-contained HTML report of an on-demand campaign (issue 12, must-have 6): every system's
precision, open-world recall and F1 with their intervals, the closed-world pooled recall beside
the open-world one (so the pooling bias is visible), the labels each system cost and the
campaign's total, and a plot of every interval per system, embedded as a PNG (one file).

Plain string templating like :mod:`assay.interfaces.report`, whose table helpers it reuses;
written whole or not at all (:func:`assay.outputs.write_text`).

>>> cell(None)
'—'
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from assay.core.types import Estimate  # noqa: E402
from assay.interfaces.report import _table  # noqa: E402
from assay.interfaces.report_figures import _png  # noqa: E402
from assay.ondemand.campaign import CampaignReport  # noqa: E402
from assay.outputs import write_text  # noqa: E402

PANELS = (("precision", ("precision",)), ("recall", ("recall", "pooled_recall")),
          ("F1", ("f1",)))
STYLE = {"precision": ("tab:blue", "precision"), "recall": ("tab:green", "open-world recall"),
         "pooled_recall": ("tab:red", "pooled (closed-world) recall"),
         "f1": ("tab:purple", "F1")}


def cell(e: Estimate | None, digits: int = 3) -> str:
    """``estimate [low, high]`` (and the assumption-free interval when there is one); an em
    dash when undefined.

    >>> cell(Estimate("precision", 1.0, 0.9, 0.85, 0.95, 0.03, 0.9, "delta"))
    '0.900 [0.850, 0.950]'
    """
    if e is None or not e.defined:
        return "—"
    out = f"{e.estimate:.{digits}f}"
    if e.ci_low is not None and e.ci_high is not None:
        out += f" [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
    if e.assumption_free is not None:
        lo, hi = e.assumption_free
        out += f"; assumption-free [{lo:.{digits}f}, {hi:.{digits}f}]"
    return out


def campaign_figure(rep: CampaignReport) -> bytes:
    """PNG: one panel per measure, one row per system (in order of arrival), each interval a
    bar with its estimate a dot (seen even when the interval has no width); the recall panel shows the open-world and the pooled
    intervals of each system side by side."""
    names = [s.name for s in rep.systems]
    k = max(len(names), 1)
    fig, axes = plt.subplots(1, 3, figsize=(13, 1.2 + 0.42 * k), sharey=True)
    y = np.arange(len(names))[::-1].astype(float)
    named: set[str] = set()
    for ax, (title, measures) in zip(axes, PANELS):
        offsets = [0.0] if len(measures) == 1 else [0.15, -0.15]
        for measure, off in zip(measures, offsets):
            color, label = STYLE[measure]
            for yi, s in zip(y, rep.systems):
                e = s.estimates.get(measure)
                if e is None or not e.defined or e.ci_low is None:
                    continue
                first = label not in named
                named.add(label)
                ax.plot([e.ci_low, e.ci_high], [yi + off] * 2, color=color, lw=5, alpha=0.75,
                        solid_capstyle="butt", label=label if first else None)
                ax.plot([e.estimate], [yi + off], "o", color=color, mec="black", ms=5)
        ax.set_title(title)
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3, axis="x")
    axes[0].set_yticks(y, names)
    axes[0].set_ylim(-0.7, len(names) - 0.3)
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    labels = [lb for ax in axes for lb in ax.get_legend_handles_labels()[1]]
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=len(handles), fontsize=8,
                   frameon=False)
    fig.tight_layout(rect=(0, 0.08 if handles else 0, 1, 1))
    return _png(fig)


def rows(rep: CampaignReport) -> list[dict[str, Any]]:
    """The table: one row per system."""
    out = []
    for s in rep.systems:
        e = s.estimates
        ow, pooled = e.get("recall"), e.get("pooled_recall")
        gap = (f"{pooled.estimate - ow.estimate:+.3f}"
               if ow is not None and pooled is not None and ow.defined and pooled.defined
               else "—")
        out.append({"system": s.name, "output size": s.size, "draws": s.draws,
                    "labels it cost": s.labels_used,
                    "finished": "yes" if s.finished else "no",
                    "precision": cell(e.get("precision")),
                    "recall (open world)": cell(ow),
                    "pooled recall (closed world)": cell(pooled),
                    "pooled − open-world": gap, "F1": cell(e.get("f1"))})
    return out


def render_html(rep: CampaignReport) -> str:
    """The whole page."""
    c = rep.campaign
    png = base64.b64encode(campaign_figure(rep)).decode() if rep.systems else None
    plot = ("<p>(no system submitted yet)</p>" if png is None else
            f'<img alt="intervals per system" src="data:image/png;base64,{png}" '
            'style="width:100%">')
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in rep.notes)
    summary = (f"{len(rep.systems)} systems, <b>{rep.labels_total}</b> labels in all "
               f"(labels_total), {rep.units_annotated} units annotated exhaustively; "
               f"{c.confidence:.0%} intervals; target precision half-width {c.half_width:g}.")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>assay campaign {html.escape(c.name)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1300px}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;
text-align:right}}th{{background:#f3f3f3}}pre{{background:#f7f7f7;padding:1em}}</style></head>
<body><h1>assay campaign report: {html.escape(c.name)}</h1>
<p>{summary}</p>
<p>Recall (open world) is the pool's recall from the exhaustively annotated units times the
system's share of the pool's true items; the pooled (closed-world) recall counts only the true
items some system found, so it overstates recall: their difference is shown.</p>
<h2>Systems</h2>{_table(rows(rep)) if rep.systems else ""}
<h2>Intervals per system</h2>{plot}
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
<h2>Campaign</h2><pre>{html.escape(json.dumps(c.to_dict(), indent=2, default=str))}</pre>
</body></html>"""


def write_html(rep: CampaignReport, path: str | Path) -> None:
    """Write the page whole or not at all (``-`` is stdout)."""
    write_text(path, render_html(rep), "--html")


__all__ = ["campaign_figure", "cell", "render_html", "rows", "write_html"]
