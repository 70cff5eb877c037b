"""Exhaustive annotation with character offsets, drafts and k annotators per document: each
mention's span (start_char, end_char; NULL for mentions stored before, which had none), mentions
kept per annotator (the unique key gains the annotator), an annotator's work on a document
(draft mentions, submitted mentions, done with its relations) and a campaign's annotators per
document.

Revision ID: 0007
Revises: 0006
"""
from alembic import op
import sqlalchemy as sa

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assay_svc_mentions") as batch:
        batch.add_column(sa.Column("start_char", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("end_char", sa.Integer(), nullable=True))
        batch.drop_constraint("uq_svc_mention", type_="unique")
        batch.create_unique_constraint("uq_svc_mention",
                                       ["campaign", "unit", "annotator", "position"])
    op.create_table("assay_svc_exhaustive_work",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("unit", sa.String(200), primary_key=True, nullable=False),
        sa.Column("annotator", sa.String(200), primary_key=True, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("mentions", sa.Text(), nullable=False),
        sa.Column("relations", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_table("assay_svc_exhaustive_settings",
        sa.Column("campaign", sa.String(200), primary_key=True, nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("assay_svc_exhaustive_settings")
    op.drop_table("assay_svc_exhaustive_work")
    with op.batch_alter_table("assay_svc_mentions") as batch:
        batch.drop_constraint("uq_svc_mention", type_="unique")
        batch.create_unique_constraint("uq_svc_mention", ["campaign", "unit", "position"])
        batch.drop_column("end_char")
        batch.drop_column("start_char")
