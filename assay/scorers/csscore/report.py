"""CS-Score 2.4.4's report, character for character: the SF, LDC-MAX and LDC-MEAN tables of a
run, each with its micro and macro lines, then the summary.

Columns are padded to the widest text seen so far for that column in this run's report (widths
only grow, section by section: the summary uses the final widths); numbers are right-justified,
text and P/R/F1 left-justified; ``-tabs`` separates columns by one tab with no padding. The
summary prefixes class names with the variant (``SF-ALL-Micro``).
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Callable

from .model import COUNT_FIELDS, ScoreLine
from .variants import ec_sort_key, macro_f1, micro


@dataclass(frozen=True)
class Column:
    key: str          # CS-Score's internal name (widths are shared by it)
    header: str
    fmt: str
    right: bool       # right-justified
    value: Callable[[ScoreLine, bool], object]


def _count(attr: str) -> Callable[[ScoreLine, bool], object]:
    return lambda s, fix: getattr(s, attr)


COLUMNS: dict[str, Column] = {
    "EC": Column("EC", "QID/EC", "%s", False, lambda s, fix: s.ec),
    "RUNID": Column("RUNID", "Run ID", "%s", False, lambda s, fix: s.runid),
    "LEVEL": Column("LEVEL", "Hop", "%s", False, lambda s, fix: s.level),
    "GT": Column("NUM_GROUND_TRUTH", "GT", "%4d", True, _count("gt")),
    "CORRECT": Column("NUM_CORRECT_PRE_POLICY", "Correct", "%4d", True, _count("correct")),
    "INCORRECT": Column("NUM_INCORRECT_PRE_POLICY", "Incorrect", "%4d", True, _count("incorrect")),
    "INEXACT": Column("NUM_INEXACT_PRE_POLICY", "Inexact", "%4d", True, _count("inexact")),
    "REDUNDANT": Column("NUM_REDUNDANT_POST_POLICY", "Dup", "%4d", True, _count("redundant")),
    "RIGHT": Column("NUM_CORRECT_POST_POLICY", "Right", "%4d", True, _count("right")),
    "WRONG": Column("NUM_INCORRECT_POST_POLICY", "Wrong", "%4d", True, _count("wrong")),
    "IGNORED": Column("NUM_IGNORED_POST_POLICY", "Ignored", "%4d", True, _count("ignored")),
    "SUBMITTED": Column("NUM_SUBMITTED", "Submitted", "%4d", True, _count("submitted")),
    "UNASSESSED": Column("NUM_UNASSESSED", "Unassessed", "%4d", True, _count("unassessed")),
    "INCORRECT_PARENT": Column("INCORRECT_PARENT", "PIncorrect", "%4d", True,
                               _count("incorrect_parent")),
    "P": Column("PRECISION", "Prec", "%6.4f", False, lambda s, fix: s.precision(fix)),
    "R": Column("RECALL", "Recall", "%6.4f", False, lambda s, fix: s.recall()),
    "F": Column("F1", "F1", "%6.4f", False, lambda s, fix: s.f1(fix)),
}
METRICS = (("SF", "SF", "SF: Slot-filling score variant considering all entrypoints as a separate query"),
           ("LDCMAX", "LDC-MAX", "LDC-MAX: LDC level score variant considering the run's best "
            "entrypoint per LDC query"),
           ("LDCMEAN", "LDC-MEAN", "LDC-MEAN: LDC level score variant considering averaging scores "
            "for all coressponding entrypoints"))
MEAN_COLUMNS = [COLUMNS[k] for k in ("EC", "RUNID", "LEVEL", "F")]

Line = dict[str, str]
_SEP = "\x00"
_COMPUTED = ("P", "R", "F")             # precision, recall, F1: computed by ScoreLine's methods
_ATTRS = {"EC": "ec", "RUNID": "runid", "LEVEL": "level", "NUM_GROUND_TRUTH": "gt",
          "NUM_CORRECT_PRE_POLICY": "correct", "NUM_INCORRECT_PRE_POLICY": "incorrect",
          "NUM_INEXACT_PRE_POLICY": "inexact", "NUM_REDUNDANT_POST_POLICY": "redundant",
          "NUM_CORRECT_POST_POLICY": "right", "NUM_INCORRECT_POST_POLICY": "wrong",
          "NUM_IGNORED_POST_POLICY": "ignored", "NUM_SUBMITTED": "submitted",
          "NUM_UNASSESSED": "unassessed", "INCORRECT_PARENT": "incorrect_parent",
          "PRECISION": "P", "RECALL": "R", "F1": "F"}


_TEXT_ATTRS = ("ec", "runid", "level")
_COUNTS_OF = attrgetter(*COUNT_FIELDS)
_TEXTS: dict[tuple[tuple[str, ...], bool], dict[tuple[int, ...], tuple[list[str], str]]] = {}


def _count_texts(keys: tuple[str, ...], fix: bool) -> dict[tuple[int, ...], tuple[list[str], str]]:
    """Counts -> the texts of the count, P, R and F1 columns (and them joined by tabs), for one
    choice of columns and precision rule; shared by the runs (at most 2**16 counts kept)."""
    cache = _TEXTS.get((keys, fix))
    if cache is None or len(cache) > 1 << 16:
        if len(_TEXTS) > 16:
            _TEXTS.clear()
        cache = _TEXTS[(keys, fix)] = {}
    return cache


class Report:
    """The report of one run; :meth:`render` returns its text."""

    def __init__(self, columns: list[Column], tabs: bool, fix_precision: bool) -> None:
        self.columns, self.tabs, self.fix = columns, tabs, fix_precision
        self.widths = {c.key: len(c.header) for c in columns}
        self.summary: dict[str, list[Line]] = {}
        self._keys = [c.key for c in columns]
        self._row_fmt = _SEP.join(c.fmt for c in columns)     # one % operation a line
        attrs = [_ATTRS.get(c.key, "") for c in columns]
        self._plain = all(attrs)        # every column an attribute, P, R or F1
        names = sorted({a for a in attrs if a and a not in _COMPUTED})
        self._get = attrgetter(*names) if len(names) > 1 else None
        where = {a: i for i, a in enumerate(names)}
        where.update({a: len(names) + i for i, a in enumerate(_COMPUTED)})
        self._pick = [where[a] for a in attrs] if self._plain else []
        # the text columns (class, run, hop) when they come first and every other column is
        # a count, P, R or F1 (:meth:`lines` keeps the others' texts per counts)
        nhead = 0
        while nhead < len(attrs) and attrs[nhead] in _TEXT_ATTRS:
            nhead += 1
        rest_ok = self._plain and all(a not in _TEXT_ATTRS for a in attrs[nhead:])
        self._nhead = nhead if nhead and rest_ok else 0
        self._head = attrgetter(*attrs[:nhead]) if nhead > 1 else (
            (lambda s, a=attrs[0]: (getattr(s, a),)) if nhead == 1 else None)

    def lines(self, scores: list[ScoreLine], rendered: bool = False) -> list[Line | str]:
        """:meth:`line` of each score (the same texts, built with one format operation a line);
        the widths are grown once, at the end (equal: they are only read when a section is
        rendered). ``rendered`` (``-tabs``, every column shown): each line as
        :meth:`render_line` would print it (tabs: no widths to keep)."""
        if not self._plain or self._get is None:
            return [self.line(s) for s in scores]
        fix, keys, get, pick, fmt = self.fix, self._keys, self._get, self._pick, self._row_fmt
        out: list[Line | str] = []
        texts_of: list[list[str]] = []
        ncols = len(keys)
        nhead, head_of = self._nhead, self._head
        cache = _count_texts(tuple(keys), fix) if nhead else None
        for s in scores:
            if cache is not None and s.f1_value is None:
                # the count columns' texts depend on the counts alone: made once per counts
                counts = _COUNTS_OF(s)
                nums = cache.get(counts)
                if nums is not None:
                    head = [str(v) for v in head_of(s)]
                    if None not in head_of(s):
                        joined = "\t".join(head)
                        if joined.count("\t") == nhead - 1 and _SEP not in joined:
                            if rendered:
                                out.append(f"{joined}\t{nums[1]}\n")
                                continue
                            texts = head + nums[0]
                            texts_of.append(texts)
                            out.append(dict(zip(keys, texts)))
                            continue
            else:
                counts = None
            base = get(s) + (s.precision(fix), s.recall(), s.f1(fix))
            values = tuple([base[i] for i in pick])
            if None in values:
                out.append(self.line(s))
                continue
            text = fmt % values
            if counts is not None and text.count(_SEP) == ncols - 1:
                tail = text.split(_SEP)[nhead:]
                cache[counts] = (tail, "\t".join(tail))   # type: ignore[index]
            if rendered and text.count(_SEP) == ncols - 1 and "\t" not in text:
                out.append(text.replace(_SEP, "\t") + "\n")
                continue
            texts = text.split(_SEP)
            if len(texts) != ncols:              # a separator inside a value: cell by cell
                out.append(self.line(s))
                continue
            texts_of.append(texts)
            out.append(dict(zip(keys, texts)))
        widths = self.widths
        if texts_of:
            for i, key in enumerate(keys):
                longest = max([len(t[i]) for t in texts_of])
                if longest > widths.get(key, 0):
                    widths[key] = longest
        return out

    def _grow(self, key: str, text: str) -> None:
        if len(text) > self.widths.get(key, 0):
            self.widths[key] = len(text)

    def line(self, s: ScoreLine) -> Line:
        out: Line = {}
        widths, fix = self.widths, self.fix
        for c in self.columns:
            value = c.value(s, fix)
            text = c.fmt % (0 if value is None else value)
            out[c.key] = text
            if len(text) > widths.get(c.key, 0):
                widths[c.key] = len(text)
        return out

    def macro_line(self, agg: ScoreLine) -> Line:
        out: Line = {}
        for c in self.columns:
            if c.key in ("EC", "RUNID", "LEVEL"):
                value: object = c.value(agg, self.fix)
                if c.key == "EC":
                    value = "ALL-Macro"
                text = c.fmt % value
            elif c.key == "F1":
                text = c.fmt % macro_f1(agg, self.fix)
            else:
                text = c.fmt.replace("d", "s", 1).replace("f", "s", 1) % ""
            out[c.key] = text
            self._grow(c.key, text)
        return out

    def render_line(self, line: Line | str | None, columns: list[Column], metric: str = "") -> str:
        if isinstance(line, str):           # rendered by :meth:`lines`
            return line
        if self.tabs and line is not None and not metric:
            return "\t".join([line.get(c.key, "") for c in columns]) + "\n"
        parts = []
        widths = self.widths
        for c in columns:
            value = c.header if line is None else line.get(c.key, "")
            if metric and c.key == "EC":
                value = f"{metric}-{value}"
            if not self.tabs:
                width = widths.get(c.key, 0)
                value = value.rjust(width) if c.right else value.ljust(width)
            parts.append(value)
        return ("\t" if self.tabs else " ").join(parts) + "\n"

    def section(self, metric: str, scores: list[ScoreLine], runid: str,
                aggregates: tuple[str, ...], rendered: bool = False) -> list[Line | str]:
        ordered = sorted(scores, key=ec_sort_key)
        lines = self.lines(ordered, rendered and self.tabs)
        aggs = micro(ordered, runid, presorted=True)
        summary = self.summary.setdefault(metric, [])
        if "MICRO" in aggregates:
            for a in aggs:
                lines.append(self.line(a))
                summary.append(lines[-1])
        if "MACRO" in aggregates:
            for a in aggs:
                lines.append(self.macro_line(a))
                summary.append(lines[-1])
        return lines


def details(scores: list[ScoreLine]) -> str:
    """-verbose: per SF class (in text order), each answer counted in a category other than its
    judgment: its line, its assessment's line, the judgment and the categories (sorted)."""
    out = []
    for s in sorted(scores, key=lambda s: s.ec):
        summary: dict[int, tuple[str, str, str, list[str]]] = {}
        for label, linenum, text, aline, pre in s.details or []:
            if pre == label:
                continue
            if linenum in summary:
                summary[linenum][3].append(label)
            else:
                summary[linenum] = (text, aline, pre, [label])
        out.append("=" * 80 + f"\n{s.ec}\n")
        for linenum in sorted(summary):
            text, aline, pre, labels = summary[linenum]
            out.append(f"\tSUBMISSION:\t{text}\n\tASSESSMENT:\t{aline}\n\n"
                       f"\tPREPOLICY ASSESSMENT:\t{pre}\n"
                       f"\tPOSTPOLICY ASSESSMENT:\t{','.join(sorted(labels))}\n" + "." * 80 + "\n")
    out.append("\n")
    return "".join(out)


def render(report: Report, sections: list[tuple[str, str, list[ScoreLine], tuple[str, ...],
                                                 bool]], runid: str, verbose: bool = False) -> str:
    """Sections are (metric key, title, scores, aggregates, F1-only columns)."""
    out = []
    names = {k: name for k, name, _ in METRICS}
    titles = {k: t for k, _, t in METRICS}
    for key, _title, scores, aggregates, mean_only in sections:
        lines = report.section(key, scores, runid, aggregates, rendered=not mean_only)
        cols = MEAN_COLUMNS if mean_only else report.columns
        if verbose and key == "SF":
            out.append(details(scores))
        out.append(f"{titles[key]}\n\n")
        if lines:
            out.append(report.render_line(None, cols))
        out.extend(report.render_line(line, cols) for line in lines)
        out.append("\n")
    out.append("SUMMARY: Summary of scores\n\n")
    out.append(report.render_line(None, MEAN_COLUMNS))
    for key, _title, _s, _a, _m in sections:
        out.extend(report.render_line(line, MEAN_COLUMNS, names[key])
                   for line in report.summary.get(key, []))
    return "".join(out)


__all__ = ["COLUMNS", "Column", "METRICS", "MEAN_COLUMNS", "Report", "details", "render"]
