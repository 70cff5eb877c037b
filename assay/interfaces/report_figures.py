"""The report's figures that let a user see what an interval rests on (issue 11, must-have 6):
the model against the labels, stratum by stratum, and the two intervals side by side.

>>> stratum_rates([0, 0, 1, 1, 1], [1, 0, 0, 0, 0], 2)[0].tolist()
[2.0, 3.0]
"""
from __future__ import annotations

import io
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

MEASURE_ORDER = ("precision", "recall", "f1")
FEW_LABELS = 30     # a stratum with fewer labels cannot show a rate of a few percent
UNTESTED_FACTOR = 3.0


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def stratum_rates(stratum: Sequence[int], labels: Sequence[int], count: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(labelled items, matches) per stratum from distinct labelled items."""
    st = np.asarray(stratum, dtype=np.int64)
    lab = np.asarray(labels, dtype=float)
    return (np.bincount(st, minlength=count).astype(float),
            np.bincount(st, weights=lab, minlength=count))


def model_figure(strata: list[dict[str, Any]], stratum: Sequence[int],
                 labels: Sequence[int]) -> bytes | None:
    """Match rate per stratum from the labels (Jeffreys 95% interval) against the model's
    (``model_rate`` in the strata table, when the design has a model), strata with fewer than
    ``FEW_LABELS`` labels shaded: there the model's assumption is untested by the labels."""
    if not strata:
        return None
    k = len(strata)
    n, x = stratum_rates(stratum, labels, k)
    size = np.array([float(r.get("size", np.nan)) for r in strata])
    pos = np.arange(k)
    # Jeffreys, with the ends at 0 and 1 when no match / no non-match (Brown, Cai & DasGupta)
    lo = np.where(x > 0, stats.beta.ppf(0.025, x + 0.5, n - x + 0.5), 0.0)
    hi = np.where(x < n, stats.beta.ppf(0.975, x + 0.5, n - x + 0.5), 1.0)
    rate = np.divide(x, n, out=np.full(k, np.nan), where=n > 0)
    floor = 1e-5
    fig, ax = plt.subplots(figsize=(11, 3.8))
    has_model = all("model_rate" in r for r in strata)
    m = np.array([r["model_rate"] for r in strata]) if has_model else None
    full = n >= size
    if m is not None:       # the labels could not tell a rate UNTESTED_FACTOR × the model's
        untested = ~full & (hi > UNTESTED_FACTOR * m)
        what = (f"shaded: the labels cannot tell a rate {UNTESTED_FACTOR:g}× the model's, "
                "which is untested there")
    else:
        untested = ~full & (n < FEW_LABELS)
        what = f"shaded: fewer than {FEW_LABELS} labels"
    for h in np.flatnonzero(untested):
        ax.axvspan(h - 0.5, h + 0.5, color="tab:orange", alpha=0.12, lw=0)
    ok = n > 0
    ax.errorbar(pos[ok], np.maximum(rate[ok], floor),
                yerr=[np.maximum(np.maximum(rate[ok], floor) - np.maximum(lo[ok], floor), 0),
                      np.maximum(np.maximum(hi[ok], floor) - np.maximum(rate[ok], floor), 0)],
                fmt="o", color="tab:blue", capsize=3, label="labels: match rate, 95% (Jeffreys)")
    if m is not None:
        ax.step(pos, np.maximum(m, floor), where="mid", color="tab:red",
                label="rank model: mean match rate")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 1.5)
    audit = np.array([int(r.get("audit", 0)) for r in strata])
    ax.set_xticks(pos, [f"{h}\n{int(n[h])}/{int(size[h]) if np.isfinite(size[h]) else '?'}"
                        + (f"\naudit {audit[h]}" if audit[h] else "") for h in range(k)],
                  fontsize=7)
    if audit.sum():
        ax.plot([], [], " ", label=f"score-blind audit: {audit_note(strata, int(n.sum()))}")
    ax.set_xlabel(f"stratum (labelled / size{'; audit labels' if audit.sum() else ''}); {what}")
    ax.set_ylabel("match rate (0 drawn at 1e-5)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return _png(fig)


def audit_note(strata: list[dict[str, Any]], labels: int) -> str:
    """What the score-blind audit sample (``audit`` per stratum in the strata table) cost.

    >>> audit_note([{"audit": 30}, {"audit": 70}, {}], 1000)
    '100 labels (10.0% of 1,000), uniform over the ranks the census leaves out'
    """
    a = sum(int(r.get("audit", 0)) for r in strata)
    share = 100.0 * a / labels if labels else float("nan")
    return (f"{a:,} labels ({share:.1f}% of {labels:,}), uniform over the ranks the census "
            "leaves out")


def intervals_figure(estimates: dict[str, Any], truth: dict[str, float] | None = None
                     ) -> bytes:
    """Each measure's primary interval (what it assumes in the report's table) beside its
    assumption-free interval."""
    fig, ax = plt.subplots(figsize=(8, 2.8))
    named: set[str] = set()

    def once(name: str) -> str | None:
        if name in named:
            return None
        named.add(name)
        return name
    for i, m in enumerate(MEASURE_ORDER):
        e = estimates.get(m)
        if e is None or not e.defined:
            continue
        y = len(MEASURE_ORDER) - 1 - i
        if e.assumption_free is not None:
            ax.plot(e.assumption_free, [y - 0.15] * 2, color="tab:gray", lw=6, alpha=0.6,
                    solid_capstyle="butt", label=once("assumption-free"))
        ax.plot([e.ci_low, e.ci_high], [y + 0.15] * 2, color="tab:blue", lw=6,
                solid_capstyle="butt",
                label=once("primary (rests on an assumption)" if e.assumes else "primary"))
        ax.plot([e.estimate], [y + 0.15], "k|", ms=14)
        if truth and m in truth:
            ax.plot([truth[m]], [y], "k*", ms=9, label=once("truth"))
    ax.set_yticks(range(len(MEASURE_ORDER)), list(reversed(MEASURE_ORDER)))
    ax.set_xlim(0, 1)
    ax.grid(alpha=0.3, axis="x")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncol=3, frameon=False)
    fig.tight_layout()
    return _png(fig)


__all__ = ["intervals_figure", "model_figure", "stratum_rates"]
