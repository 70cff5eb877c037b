"""Costs and flagged annotators: a campaign's price per task type (item verification per answer,
exhaustive annotation per document done), and the annotators flagged by the quality rule, given
no item until an admin clears the flag.

Revision ID: 0008
Revises: 0007
"""
from alembic import op
import sqlalchemy as sa

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("assay_svc_prices",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("task", sa.String(40), primary_key=True, nullable=False),
        sa.Column("price", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("updated_by", sa.String(200), nullable=True),
    )
    op.create_table("assay_svc_flags",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("annotator", sa.String(200), primary_key=True, nullable=False),
        sa.Column("flagged_at", sa.DateTime(), nullable=False),
        sa.Column("disagreements", sa.Integer(), nullable=False),
        sa.Column("compared", sa.Integer(), nullable=False),
        sa.Column("cleared_at", sa.DateTime(), nullable=True),
        sa.Column("cleared_by", sa.String(200), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("assay_svc_flags")
    op.drop_table("assay_svc_prices")
