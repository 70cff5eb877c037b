"""Label store schema version 2: the index on judgments (dataset, annotator) (session 12; the
service's flag check reads one annotator's labels at every item served).

``tests/data/store_v1.db`` was written at schema version 1 by the code of commit a782065 with
``tests/data/make_store_v1.py`` (its docstring gives the command and the contents): 98
judgments (campaign ``kb``: ann1 30, ann2 30, ann3 15; dataset ``other``: 20 judged and 3
skipped by ``gold``), a passive run with 10 draws, the service's tables at Alembic 0008.
"""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from assay.labels.schema import SCHEMA_VERSION
from assay.labels.store import Judgment, LabelStore, Status

DATA = Path(__file__).parent / "data"
V1 = DATA / "store_v1.db"
INDEX = "ix_judgment_dataset_annotator"


def _tables(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows, sorted (the schema table left out: it is what changes)."""
    raw = sqlite3.connect(db)
    names = [r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = {n: sorted(raw.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr)
           for n in names if n != "assay_schema"}
    raw.close()
    return out


def _plan(db: Path) -> str:
    raw = sqlite3.connect(db)
    plan = " ".join(r[3] for r in raw.execute(
        "EXPLAIN QUERY PLAN SELECT item, value FROM assay_judgments "
        "WHERE dataset = 'kb' AND annotator = 'ann1'"))
    raw.close()
    return plan


@pytest.fixture()
def v1_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "v1.db"
    shutil.copy(V1, dst)
    return dst


def test_the_v1_fixture_is_a_v1_store():
    raw = sqlite3.connect(V1)
    assert raw.execute("SELECT version FROM assay_schema").fetchone()[0] == 1
    assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (INDEX,)
                       ).fetchone()[0] == 0
    assert raw.execute("SELECT count(*) FROM assay_judgments").fetchone()[0] == 98
    raw.close()


def test_a_v1_store_gets_the_index_and_keeps_every_row(v1_copy):
    before = _tables(v1_copy)
    assert INDEX not in _plan(v1_copy)
    store = LabelStore(v1_copy)
    assert SCHEMA_VERSION == 2 and store.previous_version == 1
    store.close()
    assert _tables(v1_copy) == before                          # nothing else touched
    raw = sqlite3.connect(v1_copy)
    assert raw.execute("SELECT version FROM assay_schema").fetchall() == [(2,)]
    assert raw.execute("SELECT sql FROM sqlite_master WHERE name = ?", (INDEX,)
                       ).fetchone()[0] == (f"CREATE INDEX {INDEX} ON assay_judgments "
                                           "(dataset, annotator)")
    raw.close()
    assert f"USING INDEX {INDEX} (dataset=? AND annotator=?)" in _plan(v1_copy)
    again = LabelStore(v1_copy)
    assert again.previous_version == 2                         # opening again: nothing to do
    assert again.labels("kb", "ann1") == {f"q{i:02d}": int(i >= 15) for i in range(30)}
    assert again.statuses("other", "gold") == {f"s{i}": Status.SKIPPED for i in range(3)}
    again.close()


def test_the_service_on_a_migrated_v1_store(v1_copy):
    """The service's tables follow (Alembic from 0008 to head) and the flag check, now
    through the index, flags the annotator the fixture made disagree (15 of 30)."""
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from assay.ondemand.store import OnDemandStore
    from assay.service import flags, migrate
    store = LabelStore(v1_copy)
    assert migrate.upgrade(store.engine) == "0008" and migrate.current(store.engine) == \
        migrate.head()
    row = OnDemandStore(store).campaign("kb")
    with store.engine.connect() as conn:
        assert flags.disagreements(conn, row, "ann1") == (15, 30)
        assert flags.disagreements(conn, row, "ann2") == (0, 30)
        assert flags.disagreements(conn, row, "ann3") == (0, 15)
    assert flags.check(store, row, "ann1") and not flags.check(store, row, "ann2")
    assert flags.flags(store.engine, "kb")["ann1"].disagreements == 15
    store.close()


def test_a_new_store_has_the_index(tmp_path):
    store = LabelStore(tmp_path / "new.db")
    assert store.previous_version == -1
    store.record("kb", [Judgment("q1", "ann1", 1)])
    store.close()
    assert f"USING INDEX {INDEX}" in _plan(tmp_path / "new.db")
    assert LabelStore(tmp_path / "new.db").previous_version == 2


def test_a_store_of_a_newer_version_is_refused(v1_copy):
    raw = sqlite3.connect(v1_copy)
    raw.execute("UPDATE assay_schema SET version = 3")
    raw.commit()
    raw.close()
    from assay.errors import StoreError
    with pytest.raises(StoreError, match="schema version 3, newer than this assay"):
        LabelStore(v1_copy)


OPEN = """
import sys
from assay.labels.store import LabelStore
print(LabelStore(sys.argv[1]).previous_version)
"""


def test_four_processes_open_a_v1_store_at_once(v1_copy):
    """The migration runs once under the store's write lock: one opener finds version 1, the
    others version 2, none fails."""
    procs = [subprocess.Popen([sys.executable, "-c", OPEN, str(v1_copy)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [e for _, e in outs]
    assert sorted(int(o) for o, _ in outs) == [1, 2, 2, 2]


def test_a_v1_store_on_postgresql_gets_the_index(postgres_url, tmp_path):
    """A store at version 1 on PostgreSQL (the index dropped, the version set back, as the
    code of a782065 left it) is migrated with its rows kept."""
    eng = create_engine(postgres_url)
    schema = "v1_" + tmp_path.name[-8:].replace("-", "_").lower()
    with eng.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    eng.dispose()
    url = postgres_url + f"?options=-csearch_path%3D{schema}"
    store = LabelStore(url)
    store.record("kb", [Judgment(f"q{i}", a, i % 2) for i in range(40)
                        for a in ("ann1", "ann2")]
                 + [Judgment("s", "ann1", None, Status.SKIPPED)])
    with store.engine.begin() as conn:
        conn.execute(text(f"DROP INDEX {INDEX}"))
        conn.execute(text("UPDATE assay_schema SET version = 1"))
    store.close()
    store = LabelStore(url)
    assert store.previous_version == 1
    got = {ix["name"]: ix["column_names"] for ix in inspect(store.engine).get_indexes(
        "assay_judgments")}
    assert got[INDEX] == ["dataset", "annotator"]
    assert len(store.judgments("kb")) == 81
    assert store.labels("kb", "ann2") == {f"q{i}": i % 2 for i in range(40)}
    assert store.statuses("kb", "ann1") == {"s": Status.SKIPPED}
    store.close()
    assert LabelStore(url).previous_version == 2
