"""The flag check's count in one statement (session 12: ``flags.disagreements`` reads the
annotator's labels through the label store's index on dataset and annotator, and each item's
labels through the unique key) gives :func:`assay.service.quality.report`'s counts, on SQLite
and PostgreSQL."""
from __future__ import annotations

import pytest

from assay.labels.schema import now
from assay.service import flags


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_one_statement_count_is_the_quality_reports(backend, tmp_path, request):
    """Random votes (w1 mostly against the others): every annotator's (disagreements,
    compared) is the report's; ``since`` after every label leaves none, before all of them
    leaves all; the campaign's own annotator has none."""
    import datetime as dt
    import random

    from sqlalchemy import create_engine, text

    from assay.labels.store import Judgment, LabelStore, Status
    from assay.ondemand import OnDemandCampaign
    from assay.service import migrate, quality
    if backend == "sqlite":
        url = str(tmp_path / "s.db")
    else:
        base = request.getfixturevalue("postgres_url")
        schema = "fl_" + tmp_path.name[-8:].replace("-", "_").lower()
        eng = create_engine(base)
        with eng.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        eng.dispose()
        url = base + f"?options=-csearch_path%3D{schema}"
    store = LabelStore(url)
    migrate.upgrade(store.engine)
    row = OnDemandCampaign.create(store, "c", annotator="consensus").row
    rng = random.Random(12)
    who = ("w1", "w2", "w3", "w4")
    store.record("c", [Judgment(f"x{i}", w, int(rng.random() < (0.8 if w != "w1" else 0.3)))
                       for i in range(80) for w in who if rng.random() < 0.75]
                 + [Judgment("x0", "consensus", 0), Judgment("y", "w1", None, Status.SKIPPED)])
    rep = quality.report(store, row)
    assert {a.flagged for a in rep.annotators} == {True, False}
    with store.engine.connect() as conn:
        for a in rep.annotators:
            assert flags.disagreements(conn, row, a.name) == (a.disagreements, a.compared), a
        assert flags.disagreements(conn, row, "consensus") == (0, 0)
        later = now() + dt.timedelta(seconds=5)
        assert flags.disagreements(conn, row, "w1", since=later) == (0, 0)
        earlier = now() - dt.timedelta(days=1)
        w1 = next(a for a in rep.annotators if a.name == "w1")
        assert flags.disagreements(conn, row, "w1", since=earlier) == (w1.disagreements,
                                                                        w1.compared)
    store.close()
