"""A self-contained HTML report: estimates and intervals against labels used (plot), the strata
table and the run's parameters. The plot is an embedded PNG, so the page is one file."""
from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from assay.evaluation import EvaluationResult  # noqa: E402
from assay.interfaces.report_figures import (MEASURE_ORDER, audit_note,  # noqa: E402
                                             intervals_figure,
                                             model_figure)
from assay.outputs import write_text  # noqa: E402



def history_figure(result: EvaluationResult, truth: dict[str, float] | None = None) -> bytes:
    """PNG of each measure's estimate and interval against distinct labels used."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, m in zip(axes, MEASURE_ORDER):
        pts = [(h.labels_used, h.estimates[m]) for h in result.history if h.estimates[m].defined]
        if pts:
            x = [p[0] for p in pts]
            ax.fill_between(x, [p[1].ci_low for p in pts], [p[1].ci_high for p in pts],
                            alpha=0.25, color="tab:blue", label=f"{result.confidence:.0%} CI")
            ax.plot(x, [p[1].estimate for p in pts], color="tab:blue", label="estimate")
        if truth and m in truth:
            ax.axhline(truth[m], color="black", ls="--", lw=1, label="truth")
        ax.set_title(m)
        ax.set_xlabel("distinct labels used")
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:      # nothing to name before any estimate
        axes[0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(this design has no strata)</p>"
    cols = list(dict.fromkeys(c for r in rows for c in r))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(r.get(c, ''))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return html.escape(str(v))


def render_html(result: EvaluationResult, truth: dict[str, float] | None = None) -> str:
    png = base64.b64encode(history_figure(result, truth)).decode()
    est_rows = []
    for m in MEASURE_ORDER:
        e = result.estimates[m]
        row = {"measure": m, "estimate": e.estimate if e.defined else "undefined",
               "ci_low": e.ci_low if e.defined else "—", "ci_high": e.ci_high if e.defined
               else "—", "interval": e.method, "note": e.note}
        if e.defined and e.assumption_free is not None:
            row["assumption-free"] = (f"[{e.assumption_free[0]:.4g}, "
                                      f"{e.assumption_free[1]:.4g}]")
            row["assumes"] = e.assumes or "nothing beyond the design"
        if "design_interval" in e.extra:   # a model-based estimate: the design-based one beside
            lo, hi = e.extra["design_interval"]
            row["design-based"] = f"{e.extra['design_estimate']:.4g} [{lo:.4g}, {hi:.4g}]"
            row["design-based assumes"] = (e.extra.get("design_assumes")
                                           or "nothing beyond the design")
        if truth:
            row["truth"] = truth.get(m, float("nan"))
        est_rows.append(row)
    params = {"pool": result.pool_source, "design": result.design, "seed": result.seed,
              "labels_used": result.labels_used, "new_labels": result.new_labels,
              "reused_labels": result.reused_labels, "draws": len(result.draws),
              "pool_size": result.pool_size, "confidence": result.confidence,
              "annotator": result.annotator, **result.params}
    seen: dict[int, tuple[int, int]] = {}
    for d, v in zip(result.draws, result.draw_labels):
        seen.setdefault(int(d.index), (int(d.stratum), int(v)))
    model_png = model_figure(result.strata, [s for s, _ in seen.values()],
                             [v for _, v in seen.values()]) if result.strata else None
    model_html = ("" if model_png is None else
                  "<h2>The model against the labels</h2><img alt=\"match rate per stratum: "
                  "labels against the model\" src=\"data:image/png;base64,"
                  f"{base64.b64encode(model_png).decode()}\" style=\"width:100%\">")
    if model_png is not None and any(r.get("audit") for r in result.strata):
        model_html += (f"<p>Score-blind audit: {audit_note(result.strata, result.labels_used)};"
                       " its labels test the tail's assumption wherever the score says little"
                       " is left (per stratum under the plot).</p>")
    both = base64.b64encode(intervals_figure(result.estimates, truth)).decode()
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>assay report</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;
text-align:right}}th{{background:#f3f3f3}}pre{{background:#f7f7f7;padding:1em}}</style></head>
<body><h1>assay evaluation report</h1>
<h2>Estimates</h2>{_table(est_rows)}
<h2>The two intervals</h2>
<img alt="primary and assumption-free intervals" src="data:image/png;base64,{both}">
{model_html}
<h2>Estimate and interval against labels used</h2>
<img alt="estimates against labels used" src="data:image/png;base64,{png}" style="width:100%">
<h2>Strata</h2>{_table(result.strata)}
<h2>Parameters</h2><pre>{html.escape(json.dumps(params, indent=2, default=str))}</pre>
</body></html>"""


def write_report(result: EvaluationResult, path: str | Path,
                 truth: dict[str, float] | None = None) -> None:
    """Write the report whole or not at all (:func:`assay.outputs.write_text`; ``-`` is
    stdout)."""
    write_text(path, render_html(result, truth), "--report")
