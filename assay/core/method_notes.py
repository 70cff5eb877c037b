"""The plain-language note each interval method of :func:`assay.core.measures.f_measures`
prints beside its estimate: what the interval is and why it was chosen. Text only, no numbers
computed here.

>>> method_note("exact", 1.0, 3, 40, 38.0)[:60]
'exact interval (Clopper-Pearson at effective size 38): too f'
"""
from __future__ import annotations

__all__ = ["join_notes", "method_note", "unseen_note"]

_KINDS = ("true positives and false negatives", "true and false positives and false negatives",
          "true and false positives")   # the counts that enter F_α: α = 0, 0 < α < 1, α = 1


def method_note(method: str, alpha: float, k: int, labelled: int, n_eff: float | None,
                discount: str = "") -> str:
    """The note of an interval ``method`` for F_α with ``k`` of ``labelled`` labelled items in
    the numerator (``discount``: :func:`assay.core.rule_counts.discount_note`'s suffix for the
    exact interval); "" for the normal (delta) interval, which needs none.

    >>> method_note("census", 0.5, 3, 3, None)
    'census: every item the measure counts is labelled, so the estimate is exact'
    """
    counted = f"{k} of {labelled} labelled items in the numerator"
    if method == "census":
        return "census: every item the measure counts is labelled, so the estimate is exact"
    if method == "exact":
        return (f"exact interval (Clopper-Pearson at effective size {n_eff:.0f}): too few "
                f"successes or failures for the normal approximation ({counted}), so it errs "
                f"on the wide side{discount}")
    if method == "components":
        return (f"exact interval from the counts ({_KINDS[(alpha > 0) + (alpha == 1)]}: Poisson "
                "bounds on the draws of a kind drawn too few times, at heavy weights, for the "
                f"normal approximation; {counted}), joined with Clopper-Pearson's, so it errs "
                "on the wide side")
    if method == "tiers":
        return (f"interval from the counts: {counted}; the false negatives are a few heavily "
                "weighted draws, so their total is skewed: exact Poisson bounds on the sparse "
                "weight tiers, in gamma form, the rest normal")
    if method == "counts" and alpha == 1.0:
        return (f"interval from the counts: {counted}, few false positives among the predicted "
                "positives of strata labelled in part (exact Poisson bounds on them, in gamma "
                "form; one where none was seen)")
    if method == "counts":
        return (f"interval from the counts: {counted}, few false negatives (and false "
                "positives) in strata labelled in part (exact Poisson bounds on them, in gamma "
                "form) and those a stratum that showed none may hold where its neighbours show "
                "some")
    return ""


def unseen_note(unseen: dict[str, float]) -> str:
    """The design-based interval's note on strata where no positive was labelled (their
    count taken as none; what their labels allow: :func:`assay.core.totals.
    unseen_positive_bound`).

    >>> unseen_note({"unseen_strata": 2, "unseen_items": 900, "unseen_positive_bound": 12})[:40]
    'design-based: 2 strata (900 unlabelled i'
    """
    if not unseen.get("unseen_strata"):
        return ""
    return (f"design-based: {unseen['unseen_strata']} strata ({unseen['unseen_items']:,.0f} "
            "unlabelled items) where no positive was labelled are taken to hold none; their "
            f"labels allow up to {unseen['unseen_positive_bound']:,.0f}")


def join_notes(*notes: str) -> str:
    """Non-empty notes joined by "; ".

    >>> join_notes("a", "", "b")
    'a; b'
    """
    return "; ".join(n for n in notes if n)
