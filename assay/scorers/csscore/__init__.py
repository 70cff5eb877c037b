"""``cs-score``: a faithful re-implementation of the TAC KBP Cold Start scorer CS-Score v2.4.4
(2015 formats; jamesmayfield/ColdStart, branch release-2015.11), byte for byte on well-formed
input, with assay's readers (:mod:`assay.formats.kbp`) and two opt-in v3.0 fixes.

Entry point :func:`main`; library API :func:`score_files`. ``docs/csscore.md`` lists what
depends on perl's hash order in the original and what assay does there.
"""
from __future__ import annotations

from .api import Result, queries_to_score, score_files
from .cli import main, parse_args
from .model import Options, ScoreLine

__all__ = ["Options", "Result", "ScoreLine", "main", "parse_args", "queries_to_score", "score_files"]
