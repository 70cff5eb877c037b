"""Senseval ``scorer2``: a faithful, safer re-implementation of the Senseval scoring program.

Seed 003 (the scorer2 documentation) is the spec, corrected by measurements of the original
program; ``docs/senseval.md`` lists every deliberate difference.  Entry point :func:`main`
(``scorer2`` and ``assay senseval``); library API :func:`score`, :func:`score_text`.
"""
from __future__ import annotations

from .api import score, score_parsed, score_text
from .cli import main, parse_args
from .cnum import atof, c_format, f32
from .model import (AnswerLine, InstanceScore, KeyEntry, Problem, ScoringOptions, SensevalInputError,
                    SensevalScore, UnscoredAnswer)
from .readers import (SenseEntry, SenseMap, parse_answer_line, parse_answers, parse_key,
                      parse_sensemap, read_lines)
from .report import json_text, stderr_text, stdout_text, summary

__all__ = [
    "main", "parse_args", "score", "score_text", "score_parsed",
    "AnswerLine", "InstanceScore", "KeyEntry", "Problem", "ScoringOptions", "SensevalInputError",
    "SensevalScore", "UnscoredAnswer", "SenseEntry", "SenseMap",
    "parse_answer_line", "parse_answers", "parse_key", "parse_sensemap", "read_lines",
    "json_text", "stderr_text", "stdout_text", "summary", "atof", "c_format", "f32",
]
