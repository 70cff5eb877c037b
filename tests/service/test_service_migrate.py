"""The on-demand campaigns' tables are made by the migration path (``migrate.upgrade``, hence
``assay serve migrate``), not by ``create_app`` on the side (session 12 review leftover)."""
from __future__ import annotations

from sqlalchemy import inspect, text
from typer.testing import CliRunner

from assay.labels.store import Judgment, LabelStore
from assay.ondemand.schema import od_metadata
from assay.service import migrate

OD_TABLES = {t.name for t in od_metadata.sorted_tables}


def _tables(store: LabelStore) -> set[str]:
    return set(inspect(store.engine).get_table_names())


def test_upgrade_creates_the_campaign_tables(tmp_path):
    store = LabelStore(tmp_path / "s.db")             # a label store only: no campaign tables
    store.record("d", [Judgment("a", "gold", 1)])
    assert not OD_TABLES & _tables(store)
    assert migrate.upgrade(store.engine) is None
    assert OD_TABLES <= _tables(store)
    assert store.labels("d", "gold") == {"a": 1}
    with store.engine.begin() as conn:                 # at head already, the tables gone
        for t in reversed(od_metadata.sorted_tables):
            conn.execute(text(f"DROP TABLE {t.name}"))
    assert migrate.upgrade(store.engine) == migrate.head()
    assert OD_TABLES <= _tables(store)


def test_upgrade_adds_the_object_column_to_an_old_items_table(tmp_path):
    store = LabelStore(tmp_path / "s.db")
    migrate.upgrade(store.engine)
    with store.engine.begin() as conn:                 # the items table before 'object'
        conn.execute(text("ALTER TABLE assay_od_items DROP COLUMN object"))
    migrate.upgrade(store.engine)
    cols = {c["name"] for c in inspect(store.engine).get_columns("assay_od_items")}
    assert "object" in cols


def test_serve_migrate_makes_the_campaign_tables(tmp_path):
    from assay.interfaces.cli import app
    db = tmp_path / "s.db"
    LabelStore(db).close()
    res = CliRunner().invoke(app, ["serve", "migrate", "--store", str(db)])
    assert res.exit_code == 0, res.output
    assert OD_TABLES <= _tables(LabelStore(db))


def test_create_app_leaves_the_tables_to_the_migration(tmp_path, monkeypatch):
    """create_app migrates through migrate.upgrade only: with it stubbed out, a bare label
    store gets no campaign table from create_app."""
    from assay.service import app as app_module
    calls = []
    monkeypatch.setattr(app_module.migrate, "upgrade", lambda engine: calls.append(engine))
    store = LabelStore(tmp_path / "s.db")
    app_module.create_app(store)
    assert calls == [store.engine]
    assert not OD_TABLES & _tables(store)
