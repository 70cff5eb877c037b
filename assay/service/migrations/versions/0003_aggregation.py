"""A campaign's aggregation of its annotators' votes: majority or Dawid-Skene.

Revision ID: 0003
Revises: 0002
"""
from alembic import op
import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assay_svc_campaign_settings") as batch:
        batch.add_column(sa.Column("aggregation", sa.String(16), nullable=False,
                                   server_default="majority"))


def downgrade() -> None:
    with op.batch_alter_table("assay_svc_campaign_settings") as batch:
        batch.drop_column("aggregation")
