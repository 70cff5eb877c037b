"""Leases: an item served to an annotator is held for them a short while, so concurrent
annotators are not all served the same item.

Revision ID: 0005
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("assay_svc_leases",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("item", sa.Text(), primary_key=True, nullable=False),
        sa.Column("annotator", sa.String(200), primary_key=True, nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("assay_svc_leases")
