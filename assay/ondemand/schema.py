"""The on-demand campaigns' own tables, beside the label store's (new tables only; the label
store's tables are untouched, and judgments stay in ``assay_judgments`` keyed by dataset, item
and annotator — never by a campaign or system).

* ``assay_od_campaigns`` — a campaign: its dataset and annotator in the label store, the corpus's
  number of units, confidence, target half-width, caps, seed;
* ``assay_od_systems`` — each submission in order of arrival, with the fingerprint of its output
  and whether its sampling is finished;
* ``assay_od_items`` — the universe's items by canonical key, with optional structure columns
  (unit/document, subject, relation, object; the object column is added to older stores on
  first use); ``assay_od_outputs`` — which system output which item;
* ``assay_od_units`` / ``assay_od_unit_truth`` — the exhaustively annotated units and their true
  items (a unit may have none);
* ``assay_od_draws`` — every draw: the item, the system and which of its sets it came from
  (``own``: its output; ``novel``: its output minus earlier systems'; ``fill``: the system's
  fill proposal), the probability it had,
  the submission round (unique per system, round and position, so a
  replayed plan inserts nothing twice);
* ``assay_od_fill`` — a system's fill proposal: the density it gives each item of its output
  that it can draw (written with the proposal's first draws, in one transaction; a table added
  after version 1 was released, created on first use in an older store).

:func:`ensure_ondemand_schema` creates what is missing (idempotent; version 1 of these tables).
"""
from __future__ import annotations

from sqlalchemy import (Column, DateTime, Float, ForeignKey, Integer, MetaData, String, Table,
                        Text, UniqueConstraint, inspect, text)
from sqlalchemy.engine import Connection

from assay.labels.schema import NAME_LENGTH

OD_SCHEMA_VERSION = 1
od_metadata = MetaData()

campaigns_table = Table(
    "assay_od_campaigns", od_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME_LENGTH), nullable=False, unique=True),
    Column("dataset", String(NAME_LENGTH), nullable=False),
    Column("annotator", String(NAME_LENGTH), nullable=False),
    Column("corpus_units", Integer, nullable=True),
    Column("confidence", Float, nullable=False),
    Column("half_width", Float, nullable=False),
    Column("submission_cap", Integer, nullable=False),
    Column("campaign_cap", Integer, nullable=True),
    Column("seed", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", DateTime, nullable=False),
)

systems_table = Table(
    "assay_od_systems", od_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", Integer, ForeignKey("assay_od_campaigns.id"), nullable=False),
    Column("name", String(NAME_LENGTH), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    Column("finished", Integer, nullable=False),       # 0 while sampling, 1 when done
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("campaign_id", "name", name="uq_od_system_name"),
)

items_table = Table(
    "assay_od_items", od_metadata,
    Column("campaign_id", Integer, ForeignKey("assay_od_campaigns.id"), primary_key=True),
    Column("item", Text, primary_key=True),
    Column("unit", Text, nullable=True),
    Column("subject", Text, nullable=True),
    Column("relation", Text, nullable=True),
    Column("object", Text, nullable=True),
)

outputs_table = Table(
    "assay_od_outputs", od_metadata,
    Column("system_id", Integer, ForeignKey("assay_od_systems.id"), primary_key=True),
    Column("item", Text, primary_key=True),
)

units_table = Table(
    "assay_od_units", od_metadata,
    Column("campaign_id", Integer, ForeignKey("assay_od_campaigns.id"), primary_key=True),
    Column("unit", Text, primary_key=True),
    Column("created_at", DateTime, nullable=False),
)

unit_truth_table = Table(
    "assay_od_unit_truth", od_metadata,
    Column("campaign_id", Integer, ForeignKey("assay_od_campaigns.id"), primary_key=True),
    Column("unit", Text, primary_key=True),
    Column("item", Text, primary_key=True),
)

fill_table = Table(
    "assay_od_fill", od_metadata,
    Column("system_id", Integer, ForeignKey("assay_od_systems.id"), primary_key=True),
    Column("item", Text, primary_key=True),
    Column("density", Float, nullable=False),
)

od_draws_table = Table(
    "assay_od_draws", od_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", Integer, ForeignKey("assay_od_campaigns.id"), nullable=False),
    Column("system_id", Integer, ForeignKey("assay_od_systems.id"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("proposal", String(8), nullable=False),     # own | novel | fill: the set drawn from
    Column("position", Integer, nullable=False),
    Column("item", Text, nullable=False),
    Column("probability", Float, nullable=False),
    UniqueConstraint("system_id", "round", "position", name="uq_od_draw"),
)


def ensure_ondemand_schema(conn: Connection) -> None:
    """Create the on-demand tables that are missing (inside the caller's transaction)."""
    names = set(inspect(conn).get_table_names())
    if not {t.name for t in od_metadata.sorted_tables} <= names:
        od_metadata.create_all(conn, checkfirst=True)
    if items_table.name in names:       # a store made before the object column was added
        cols = {c["name"] for c in inspect(conn).get_columns(items_table.name)}
        if "object" not in cols:
            conn.execute(text(f"ALTER TABLE {items_table.name} ADD COLUMN object TEXT"))


__all__ = ["OD_SCHEMA_VERSION", "campaigns_table", "ensure_ondemand_schema", "fill_table",
           "items_table",
           "od_draws_table", "od_metadata", "outputs_table", "systems_table",
           "unit_truth_table", "units_table"]
