"""Mentions marked in exhaustively annotated documents, with their cross-document cluster.

Revision ID: 0004
Revises: 0003
"""
from alembic import op
import sqlalchemy as sa

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("assay_svc_mentions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("campaign", sa.String(200), nullable=False),
        sa.Column("unit", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("type", sa.String(8), nullable=False),
        sa.Column("canonical", sa.Text(), nullable=False),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("cluster", sa.Text(), nullable=True),
        sa.Column("annotator", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("campaign", "unit", "position", name="uq_svc_mention"),
    )


def downgrade() -> None:
    op.drop_table("assay_svc_mentions")
