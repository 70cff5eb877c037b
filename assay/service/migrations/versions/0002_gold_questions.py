"""Gold questions: items whose label is known, shown among the queued ones.

Revision ID: 0002
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("assay_svc_gold",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("item", sa.Text(), primary_key=True, nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("assay_svc_gold")
