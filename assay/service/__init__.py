"""The on-demand evaluation service (issue 15): submissions in, annotation pages, crowd quality
control, scores out — a FastAPI application on the label store (:func:`create_app`)."""
from __future__ import annotations


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """See :func:`assay.service.app.create_app` (imported lazily: FastAPI is an extra)."""
    from assay.service.app import create_app as make
    return make(*args, **kwargs)


__all__ = ["create_app"]
