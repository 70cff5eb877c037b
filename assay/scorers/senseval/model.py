"""Typed records of the Senseval scorer: parsed inputs, options and scores as data."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from assay.errors import AssayInputError

Grain = Literal["fine", "coarse", "mixed"]
Policy = Literal["disjunctive", "conjunctive"]
GRAINS: tuple[str, ...] = ("fine", "coarse", "mixed")
POLICIES: tuple[str, ...] = ("disjunctive", "conjunctive")


class SensevalInputError(AssayInputError):
    """Bad input: an unreadable file or a malformed line, named by file and (1-based) line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(where, message)
        self.path, self.line, self.message = str(path), line, message


@dataclass(frozen=True)
class KeyEntry:
    """One key line ``lexelt instance sense+`` (seed 003, EXECUTION: the key format)."""

    lexelt: str
    instance: str
    tags: tuple[str, ...]
    line: int  # 1-based line number in the key file

    @property
    def id(self) -> str:
        """The instance id as scorer2 forms and prints it: ``lexelt_instance``."""
        return f"{self.lexelt}_{self.instance}"


@dataclass(frozen=True)
class AnswerLine:
    """One answer line ``lexelt instance tag[/weight]+ [!! comment]`` (answer-format.txt).

    ``weights[i]`` is the C ``atof`` value of the text after the first ``/`` of tag *i*, or
    ``None`` when the tag has no ``/``.  ``index`` is the 0-based line number scorer2 prints.
    """

    index: int
    id: str
    tags: tuple[str, ...]
    weights: tuple[float | None, ...]

    @property
    def line(self) -> int:
        """The 1-based line number (used in assay's own error messages)."""
        return self.index + 1


class Problem(str, Enum):
    """Why scorer2 could not score an answer line (its three stderr messages)."""

    DOES_NOT_EXIST = "Does not exist."
    INVALID_ANSWER = "Invalid answer."
    EXCLUDED = "Excluded or already scored."


@dataclass(frozen=True)
class UnscoredAnswer:
    """An answer line that earned nothing: unknown instance, no tags, excluded or repeated."""

    index: int  # 0-based answer line, as scorer2 prints it
    id: str
    problem: Problem

    @property
    def message(self) -> str:
        """scorer2's message for this line, without the trailing newline."""
        return f'Unable to score answer for "{self.id}" (line {self.index}): {self.problem.value}'

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.index, "id": self.id, "problem": self.problem.name.lower(),
                "message": self.message}


@dataclass(frozen=True)
class InstanceScore:
    """The score of one answered instance (scorer2 ``-v`` block): key tags, weighted guess."""

    index: int  # 0-based answer line
    id: str
    score: float
    attempted: float
    key: tuple[str, ...]
    guess: tuple[tuple[str, float], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.index, "id": self.id, "score": _num(self.score),
                "attempted": _num(self.attempted), "key": list(self.key),
                "guess": [{"tag": t, "weight": _num(w)} for t, w in self.guess]}


@dataclass(frozen=True)
class ScoringOptions:
    """How to score: granularity, ``-m``, multi-tag policy and the seed's two filters.

    ``instance_filter`` holds ``(lexelt, instance)`` pairs and bare instance ids; ``sense_filter``
    holds sense tags (seed 003, "Precision and recall measures can be relativized ...").
    """

    grain: Grain = "fine"
    minimal: bool = False
    policy: Policy = "disjunctive"
    instance_filter: frozenset[Any] | None = None
    sense_filter: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.grain not in GRAINS:
            raise ValueError(f"grain must be one of {GRAINS}, got {self.grain!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {self.policy!r}")


@dataclass(frozen=True)
class SensevalScore:
    """Totals and per-line results of one scoring run (seed 003, precision/recall definitions).

    Disjunctive policy: ``correct`` sums instance scores, ``attempted`` sums the answer weights of
    scored instances and ``total`` counts key instances, all as C ``float`` sums; ``precision``
    and ``recall`` are ``float`` quotients and ``attempted_percent`` a ``double`` one, exactly as
    scorer2 prints them.  Conjunctive policy: ``attempted`` is the expected number of tags
    returned and ``total`` the number of key tags (double precision).
    """

    answer_file: str
    key_file: str
    sensemap_file: str | None
    options: ScoringOptions
    correct: float
    attempted: float
    total: float
    precision: float
    recall: float
    attempted_percent: float
    scored: tuple[InstanceScore, ...] = field(default=(), repr=False)
    unscored: tuple[UnscoredAnswer, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; NaN and infinities become ``None``."""
        o = self.options
        return {
            "answer_file": self.answer_file, "key_file": self.key_file,
            "sensemap_file": self.sensemap_file, "grain": o.grain, "minimal": o.minimal,
            "policy": o.policy,
            "instance_filter": None if o.instance_filter is None else sorted(map(_filter_text, o.instance_filter)),
            "sense_filter": None if o.sense_filter is None else sorted(o.sense_filter),
            "precision": _num(self.precision), "recall": _num(self.recall),
            "attempted_percent": _num(self.attempted_percent),
            "correct": _num(self.correct), "attempted": _num(self.attempted),
            "total": _num(self.total),
            "scored": [s.to_dict() for s in self.scored],
            "unscored": [u.to_dict() for u in self.unscored],
        }


def _num(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else float(x)


def _filter_text(item: Any) -> str:
    return " ".join(item) if isinstance(item, tuple) else str(item)
