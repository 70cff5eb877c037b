"""Data of the Cold Start scorer: options, loaded entries, and one score line.

A :class:`ScoreLine` holds CS-Score's counts for one query (hop 0) or one hop-0 equivalence
class (hop 1). Precision, recall and F1 follow CS-Score 2.4.4 (README-Scoring, section 4.3):

* P = Right / (Submitted - Ignored) (v2.4.4's rule; ``fix_precision``: Right / (Right + Wrong),
  the rule its README states), 0 when the denominator is 0;
* R = Right / GT, 0 when GT is 0;
* F1 = 2PR / (P + R), 0 when P and R are both 0.

>>> s = ScoreLine("Q", "run", 0, gt=4, submitted=5, right=2, wrong=2, ignored=1)
>>> s.precision(), s.recall(), round(s.f1(), 4)
(0.5, 0.5, 0.5)
>>> s.precision(fix_precision=True)
0.5
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from assay.errors import AssayInputError
from assay.formats.kbp import Response, hop1_uuid

DEFAULT_FIELDS = ("EC:RUNID:LEVEL:GT:SUBMITTED:CORRECT:INCORRECT:INEXACT:INCORRECT_PARENT:"
                  "UNASSESSED:REDUNDANT:RIGHT:WRONG:IGNORED:P:R:F")
DEFAULT_RIGHT = "CORRECT"
DEFAULT_WRONG = "INCORRECT:INCORRECT_PARENT:INEXACT:DUPLICATE"
DEFAULT_IGNORE = "UNASSESSED"
# policy code -> the post-policy categories it may be given to
POLICY_CHOICES = {
    "CORRECT": ("RIGHT",),
    "DUPLICATE": ("RIGHT", "WRONG", "IGNORE"),
    "INCORRECT": ("WRONG",),
    "INCORRECT_PARENT": ("WRONG", "IGNORE"),
    "INEXACT": ("RIGHT", "WRONG", "IGNORE"),
    "UNASSESSED": ("WRONG", "IGNORE"),
}
DISCIPLINES = ("ASSESSED", "STRING_CASE", "STRING_EXACT")


@dataclass(frozen=True)
class Options:
    """How to score (CS-Score's switches, and assay's two v3.0 fixes)."""

    discipline: str = "ASSESSED"
    right: str = DEFAULT_RIGHT
    wrong: str = DEFAULT_WRONG
    ignore: str = DEFAULT_IGNORE
    expand: str | None = None
    fields: str = DEFAULT_FIELDS
    tabs: bool = False
    fix_duplicates: bool = False
    fix_precision: bool = False
    verbose: bool = False           # -verbose: list each answer whose category is not its judgment
    jobs: int = 0                   # processes scoring runs (0: 2 for a large case, else 1)

    def policy(self) -> dict[str, list[str]]:
        return {"RIGHT": self.right.split(":"), "WRONG": self.wrong.split(":"),
                "IGNORE": self.ignore.split(":")}


@dataclass(slots=True)
class Entry:
    """A loaded line with what the scorer derives from it."""

    r: Response
    quantity: str | None
    target: str | None          # ID of the query generated from this answer (None: not yet made)
    query_level: int
    query_full: str             # full ID of the entry's query (as the query set knows it)

    @property
    def target_id(self) -> str:
        """The ID of the query generated from this answer (:func:`hop1_uuid`), made once."""
        t = self.target
        if t is None:
            t = self.target = hop1_uuid(self.query_full, self.r.value,
                                        self.r.value_provenance.normal)
        return t


@dataclass(slots=True)
class ScoreLine:
    """CS-Score's counts for one query or equivalence class of one run."""

    ec: str
    runid: str
    level: int | str
    gt: int = 0
    submitted: int = 0
    correct: int = 0
    incorrect: int = 0
    inexact: int = 0
    incorrect_parent: int = 0
    unassessed: int = 0
    redundant: int = 0
    right: int = 0
    wrong: int = 0
    ignored: int = 0
    f1_value: float | None = None      # a stored F1 (LDC-MEAN lines)
    quantity: str | None = None
    components: list["ScoreLine"] = field(default_factory=list, repr=False)
    # -verbose: (category, line number, line, assessment line, judgment) of each categorised answer
    details: list[tuple[str, int, str, str, str]] | None = field(default=None, repr=False)

    def precision(self, fix_precision: bool = False) -> float:
        den = (self.right + self.wrong) if fix_precision else (self.submitted - self.ignored)
        return self.right / den if den else 0.0

    def recall(self) -> float:
        return self.right / self.gt if self.gt else 0.0

    def f1(self, fix_precision: bool = False) -> float:
        if self.f1_value is not None:
            return self.f1_value
        p, r = self.precision(fix_precision), self.recall()
        if not (p or r):
            return 0.0
        if p + r == 0:
            raise NegativePrecision(self, p, r)
        return 2 * p * r / (p + r)

    def add_counts(self, other: "ScoreLine") -> None:
        """Add ``other``'s counts (every field of COUNT_FIELDS, spelt out: called per line)."""
        self.gt += other.gt
        self.submitted += other.submitted
        self.correct += other.correct
        self.incorrect += other.incorrect
        self.inexact += other.inexact
        self.incorrect_parent += other.incorrect_parent
        self.unassessed += other.unassessed
        self.redundant += other.redundant
        self.right += other.right
        self.wrong += other.wrong
        self.ignored += other.ignored


class NegativePrecision(AssayInputError):
    """P + R = 0 with P = -R (Submitted - Ignored < 0, which v2.4.4's double-counted duplicates
    allow when DUPLICATE is ignored): CS-Score 2.4.4 stops with a division by zero."""

    def __init__(self, line: "ScoreLine", p: float, r: float) -> None:
        super().__init__(f"{line.ec} ({line.runid}): F1 is undefined: precision {p:.4f} "
                         f"(Right {line.right} / (Submitted {line.submitted} - Ignored "
                         f"{line.ignored})) and recall {r:.4f} sum to 0; CS-Score 2.4.4 stops "
                         "here (division by zero); --fix-duplicates or --fix-precision avoid it")


COUNT_FIELDS = tuple(f.name for f in fields(ScoreLine)
                     if f.name not in ("ec", "runid", "level", "f1_value", "quantity", "components",
                                       "details"))
assert COUNT_FIELDS == ("gt", "submitted", "correct", "incorrect", "inexact", "incorrect_parent",
                        "unassessed", "redundant", "right", "wrong", "ignored")   # add_counts

__all__ = ["NegativePrecision", "COUNT_FIELDS", "DEFAULT_FIELDS", "DEFAULT_IGNORE", "DEFAULT_RIGHT", "DEFAULT_WRONG",
           "DISCIPLINES", "Entry", "Options", "POLICY_CHOICES", "ScoreLine"]
