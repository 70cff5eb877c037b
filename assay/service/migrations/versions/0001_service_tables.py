"""The service's tables, version 1 (a store of the previous release has none of them).

Revision ID: 0001
Revises:
"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("assay_svc_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("user", sa.String(200), nullable=True),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("campaign", sa.String(200), nullable=True),
        sa.Column("item", sa.Text(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
    )
    op.create_table("assay_svc_campaign_settings",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("daily_limit", sa.Integer(), nullable=False),
    )
    op.create_table("assay_svc_job_items",
        sa.Column("submission_id", sa.Integer(), primary_key=True, nullable=False),
        sa.Column("item", sa.Text(), primary_key=True, nullable=False),
    )
    op.create_table("assay_svc_queue",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("campaign", sa.String(200), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.Column("needed", sa.Integer(), nullable=False),
        sa.Column("value", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("resolved_at", sa.DateTime(), nullable=True),
        sa.UniqueConstraint("campaign", "item", name="uq_svc_queue_item"),
    )
    op.create_table("assay_svc_records",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("record", sa.String(200), primary_key=True, nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
    )
    op.create_table("assay_svc_sessions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
    )
    op.create_table("assay_svc_submissions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("campaign", sa.String(200), nullable=False),
        sa.Column("team", sa.String(200), nullable=False),
        sa.Column("system", sa.String(200), nullable=False),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("structure", sa.Text(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("worker", sa.String(80), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("campaign", "system", name="uq_svc_submission_system"),
    )
    op.create_table("assay_svc_tokens",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("label", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
    )
    op.create_table("assay_svc_users",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("team", sa.String(200), nullable=True),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("active", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_assay_svc_tokens_user_id", "assay_svc_tokens", ["user_id"])
    op.create_index("ix_assay_svc_sessions_user_id", "assay_svc_sessions", ["user_id"])
    op.create_index("ix_assay_svc_queue_open", "assay_svc_queue", ["campaign", "resolved_at"])


def downgrade() -> None:
    op.drop_table("assay_svc_users")
    op.drop_table("assay_svc_tokens")
    op.drop_table("assay_svc_submissions")
    op.drop_table("assay_svc_sessions")
    op.drop_table("assay_svc_records")
    op.drop_table("assay_svc_queue")
    op.drop_table("assay_svc_job_items")
    op.drop_table("assay_svc_campaign_settings")
    op.drop_table("assay_svc_audit")
