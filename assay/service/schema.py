"""The service's own tables, beside the label store's and the campaigns' (prefix ``assay_svc_``).

* ``users`` — login name, role (admin | submitter | annotator), team (a submitter's), argon2 hash
  of the password, whether the account is active;
* ``tokens`` — API tokens: only the sha256 of the secret is stored, with a revocation time;
* ``sessions`` — server-side browser sessions (sha256 of the cookie's secret), each with its CSRF
  token and a revocation time;
* ``audit`` — who did what when (a label, an undo, a login, a submission, a token revoked);
* ``campaign_settings`` — the service's settings of a campaign: annotators per item (k), a
  team's daily submission limit, and how votes become the campaign's label (majority or
  Dawid–Skene, revision 0003), and the fewest items an output may have (revision 0006);
* ``submissions`` — the job queue: one row per uploaded output, its state
  (pending → running → waiting ⇄ pending … → done | failed) and the items it waits for
  (``job_items``);
* ``queue`` — the annotation queue: one row per (campaign, item) still to be labelled, how many
  annotators it needs now and, once resolved, the aggregated value;
* ``records`` — what an annotator is shown of an item's records (an ER pair side by side);
* ``mentions`` — the entity mentions marked in exhaustively annotated documents, and the
  cross-document cluster given to each unlinked one (revision 0004); each one's character span
  and its annotator in the unique key (revision 0007; the annotators' drafts and per-document
  settings in :mod:`assay.service.exhaustive_store`);
* ``leases`` — an item served to an annotator, held for them until the lease expires, so
  concurrent annotators are served different items (revision 0005);
* ``gold`` — gold questions: items whose label is known, shown to annotators among the queued
  ones (they cannot tell which) to measure each annotator's accuracy (revision 0002).

A human annotator's label is a judgment in the label store (dataset of the campaign, item, the
annotator's login) — never kept here. The schema is created and migrated by Alembic
(:mod:`assay.service.migrate`, revisions in ``migrations/versions``).
"""
from __future__ import annotations

from sqlalchemy import (Column, DateTime, Float, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint)

ROLES = ("admin", "submitter", "annotator")
NAME = 200
service_metadata = MetaData()

users_table = Table(
    "assay_svc_users", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("team", String(NAME), nullable=True),
    Column("password_hash", Text, nullable=False),
    Column("active", Integer, nullable=False, default=1),
    Column("created_at", DateTime, nullable=False),
)

tokens_table = Table(
    "assay_svc_tokens", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, nullable=False),
    Column("digest", String(64), nullable=False, unique=True),
    Column("label", String(NAME), nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("revoked_at", DateTime, nullable=True),
)

sessions_table = Table(
    "assay_svc_sessions", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, nullable=False),
    Column("digest", String(64), nullable=False, unique=True),
    Column("csrf", String(64), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("expires_at", DateTime, nullable=False),
    Column("revoked_at", DateTime, nullable=True),
)

audit_table = Table(
    "assay_svc_audit", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime, nullable=False),
    Column("user", String(NAME), nullable=True),
    Column("action", String(40), nullable=False),
    Column("campaign", String(NAME), nullable=True),
    Column("item", Text, nullable=True),
    Column("detail", Text, nullable=True),
)

campaign_settings_table = Table(
    "assay_svc_campaign_settings", service_metadata,
    Column("campaign", String(NAME), primary_key=True),
    Column("k", Integer, nullable=False),
    Column("daily_limit", Integer, nullable=False),
    Column("aggregation", String(16), nullable=False,            # revision 0003
           server_default="majority"),                          # majority | dawid-skene
    Column("min_output", Integer, nullable=False,                # revision 0006
           server_default="20"),                                # fewest items of an output
)

submissions_table = Table(
    "assay_svc_submissions", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign", String(NAME), nullable=False),
    Column("team", String(NAME), nullable=False),
    Column("system", String(NAME), nullable=False),     # the campaign's name: team/system
    Column("user", String(NAME), nullable=False),
    Column("filename", String(NAME), nullable=False),
    Column("items", Text, nullable=False),              # JSON list of canonical keys
    Column("structure", Text, nullable=True),           # JSON records of structure columns
    Column("state", String(16), nullable=False),
    Column("error", Text, nullable=True),
    Column("worker", String(80), nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    UniqueConstraint("campaign", "system", name="uq_svc_submission_system"),
)

job_items_table = Table(
    "assay_svc_job_items", service_metadata,
    Column("submission_id", Integer, primary_key=True),
    Column("item", Text, primary_key=True),
)

queue_table = Table(
    "assay_svc_queue", service_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign", String(NAME), nullable=False),
    Column("item", Text, nullable=False),
    Column("needed", Integer, nullable=False),          # annotators it needs now
    Column("value", Integer, nullable=True),            # the aggregated label once resolved
    Column("created_at", DateTime, nullable=False),
    Column("resolved_at", DateTime, nullable=True),
    UniqueConstraint("campaign", "item", name="uq_svc_queue_item"),
)

gold_table = Table(
    "assay_svc_gold", service_metadata,                 # revision 0002
    Column("campaign", String(NAME), primary_key=True),
    Column("item", Text, primary_key=True),
    Column("value", Integer, nullable=False),           # the known label of a gold question
)

mentions_table = Table(
    "assay_svc_mentions", service_metadata,             # revision 0004
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign", String(NAME), nullable=False),
    Column("unit", String(NAME), nullable=False),
    Column("position", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("type", String(8), nullable=False),
    Column("canonical", Text, nullable=False),
    Column("link", Text, nullable=True),
    Column("cluster", Text, nullable=True),             # cross-document cluster of an unlinked one
    Column("annotator", String(NAME), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("start_char", Integer, nullable=True),       # revision 0007: the span in the text
    Column("end_char", Integer, nullable=True),         # (NULL: stored before 0007)
    UniqueConstraint("campaign", "unit", "annotator", "position", name="uq_svc_mention"),
)

leases_table = Table(
    "assay_svc_leases", service_metadata,               # revision 0005
    Column("campaign", String(NAME), primary_key=True),
    Column("item", Text, primary_key=True),
    Column("annotator", String(NAME), primary_key=True),
    Column("expires_at", DateTime, nullable=False),     # served to annotator until then
)

records_table = Table(
    "assay_svc_records", service_metadata,
    Column("campaign", String(NAME), primary_key=True),
    Column("record", String(NAME), primary_key=True),
    Column("data", Text, nullable=False),               # JSON object of the record's fields
)

prices_table = Table(
    "assay_svc_prices", service_metadata,               # revision 0008
    Column("campaign", String(NAME), primary_key=True),
    Column("task", String(40), primary_key=True),       # verification | exhaustive
    Column("price", Float, nullable=False),             # per answer | per document done
    Column("updated_at", DateTime, nullable=False),
    Column("updated_by", String(NAME), nullable=True),
)

flags_table = Table(
    "assay_svc_flags", service_metadata,                # revision 0008
    Column("campaign", String(NAME), primary_key=True),
    Column("annotator", String(NAME), primary_key=True),
    Column("flagged_at", DateTime, nullable=False),
    Column("disagreements", Integer, nullable=False),   # with the majority, when flagged
    Column("compared", Integer, nullable=False),        # labels compared with a majority
    Column("cleared_at", DateTime, nullable=True),      # NULL: live (no item served)
    Column("cleared_by", String(NAME), nullable=True),
)

Index("ix_assay_svc_tokens_user_id", tokens_table.c.user_id)
Index("ix_assay_svc_sessions_user_id", sessions_table.c.user_id)
Index("ix_assay_svc_queue_open", queue_table.c.campaign, queue_table.c.resolved_at)

__all__ = ["NAME", "ROLES", "audit_table", "campaign_settings_table", "flags_table",
           "gold_table", "job_items_table", "leases_table", "mentions_table", "prices_table",
           "queue_table", "records_table", "service_metadata", "sessions_table",
           "submissions_table", "tokens_table", "users_table"]
