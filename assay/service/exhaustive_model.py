"""What an exhaustive annotation of a document is (seed 001), with no I/O: entity mentions as
character spans of the document's text, the per-pair relation task over mentions of one
sentence, a document's true item keys, and the agreement of annotators on mentions.

* A **mention** is ``text[start:end]`` with a type (PER / ORG / GPE / DATE / TITLE), its
  canonical mention (coreference within the document: the name of the entity, by default the
  mention as written) and an optional link (a KB id). Spans may not overlap (the seed's
  interfaces allow no nested spans) and the stored text must equal the span's text.
* **Sentences** are NLTK's Punkt (Kiss & Strunk 2006; no trained model, so no data file) with
  :data:`ABBREVIATIONS` and initials as non-final periods: a split after ``.``, ``!`` or ``?``
  (closing quotes or brackets kept) followed by white space, but not after "Mr.", "Inc.",
  "U.S." or "J." before a capital. A split inside a sentence would hide its pairs (a relation
  never offered is missing from the truth); one missed after such a word at a sentence's end
  only offers more pairs. Every pair of mentions whose starts fall in one sentence and whose
  types a relation of :data:`RELATIONS` joins (either way round) is one relation task: the
  annotator picks one compatible relation, or none.
* A document's **true items** are ``subject canonical <TAB> relation <TAB> object canonical``
  (the key of ``assay campaign submit --key subject,relation,object``); with k annotators an
  item is true when more than half of the k give it, decided as soon as the rest cannot change
  it (:func:`settled`).
* **Agreement** on mentions: span-level F1 between two annotators of a document, a mention
  matching only one with the same start, end and type, F1 = 2|A ∩ B| / (|A| + |B|) (1 when both
  marked nothing); :func:`mention_agreement` averages it over every pair of annotators of every
  document annotated by two or more.

>>> ms = resolve([{"text": "Ann", "type": "PER", "canonical": "Ann Lee"},
...               {"text": "Acme", "type": "ORG"}], "Ann joined Acme.")
>>> [(m.start, m.end) for m in ms]
[(0, 3), (11, 15)]
>>> [(p.first, p.second, [o.value for o in p.options]) for p in pair_tasks(ms, "Ann joined Acme.")]
[(0, 1, ['per:employee_of', 'per:member_of', 'org:founded_by<', 'org:top_members_employees<'])]
>>> true_items(ms, {(0, 1): "per:employee_of"}, "Ann joined Acme.")
['Ann Lee\\tper:employee_of\\tAcme']
>>> span_f1({(0, 3, "PER"), (11, 15, "ORG")}, {(0, 3, "PER"), (11, 15, "GPE")})
0.5
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

from assay.errors import AssayInputError
from assay.formats.pool import KEY_SEPARATOR

TYPES = ("PER", "ORG", "GPE", "DATE", "TITLE")
# (relation, subject type, object type): TAC-KBP slots between the seed's five types
RELATIONS: tuple[tuple[str, str, str], ...] = (
    ("per:employee_of", "PER", "ORG"), ("per:member_of", "PER", "ORG"),
    ("per:title", "PER", "TITLE"), ("per:spouse", "PER", "PER"),
    ("per:siblings", "PER", "PER"), ("per:parents", "PER", "PER"),
    ("per:residence", "PER", "GPE"), ("per:origin", "PER", "GPE"),
    ("per:date_of_birth", "PER", "DATE"), ("per:date_of_death", "PER", "DATE"),
    ("org:founded_by", "ORG", "PER"), ("org:top_members_employees", "ORG", "PER"),
    ("org:headquarters", "ORG", "GPE"), ("org:date_founded", "ORG", "DATE"),
    ("org:parents", "ORG", "ORG"), ("org:subsidiaries", "ORG", "ORG"),
    ("gpe:part_of", "GPE", "GPE"),
)
REVERSED = "<"      # an option's value ending so: the second mention is the subject
# words whose period ends no sentence (Punkt's abbreviation types: lower case, no final period)
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st mt ft gen col lt sgt capt adm gov sen rep rev hon pres supt "
    "jr sr inc corp co ltd bros dept univ assn "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "u.s u.k u.n e.u ph.d e.g i.e "
    "no vs approx est".split())


@dataclass(frozen=True)
class Mention:
    """One marked mention: ``text == document[start:end]``."""

    start: int
    end: int
    text: str
    type: str
    canonical: str
    link: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text, "type": self.type,
                "canonical": self.canonical, "link": self.link or ""}


@dataclass(frozen=True)
class Option:
    """A relation the annotator may pick for a pair: ``value`` names it (suffix
    :data:`REVERSED`: the pair's second mention is the subject); ``label`` shows it."""

    value: str
    label: str


@dataclass(frozen=True)
class PairTask:
    """Mentions ``first`` < ``second`` (indices) of sentence ``sentence``, and their options."""

    first: int
    second: int
    sentence: int
    options: tuple[Option, ...]

    @property
    def name(self) -> str:
        return f"rel_{self.first}_{self.second}"


@lru_cache(maxsize=1)
def _punkt() -> Any:
    """Punkt with :data:`ABBREVIATIONS` (NLTK is imported on the first call: ~1.5 s)."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    return PunktSentenceTokenizer(params)


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, end to end: a sentence runs to the next
    one's start (the white space between them is the earlier one's), the first from 0.

    >>> sentences("Ann left. Bo stayed!  Done")
    [(0, 10), (10, 22), (22, 26)]
    >>> t = "Mr. Lee met J. R. Ewing of Acme Inc. in the U.S. on Jan. 5. Bo left."
    >>> [t[a:b] for a, b in sentences(t)]
    ['Mr. Lee met J. R. Ewing of Acme Inc. in the U.S. on Jan. 5. ', 'Bo left.']
    >>> sentences("")
    [(0, 0)]
    """
    return list(_spans(text))


@lru_cache(maxsize=64)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    """:func:`sentences`, kept for the last 64 texts (Punkt takes ~2 ms per 1,000 characters;
    a page asks for a document's sentences once per pair shown)."""
    starts = [a for a, _ in _punkt().span_tokenize(text)]
    if not starts:
        return ((0, len(text)),)
    starts[0] = 0
    return tuple(zip(starts, starts[1:] + [len(text)]))


def sentence_of(spans: list[tuple[int, int]], position: int) -> int:
    for k, (a, b) in enumerate(spans):
        if a <= position < b:
            return k
    return len(spans) - 1


def _int(v: Any) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool) or not isinstance(v, (int, str)) or not str(v).lstrip("-").isdigit():
        raise ValueError(v)
    return int(v)


def resolve(raw: Sequence[Mapping[str, Any]], text: str) -> list[Mention]:
    """Mentions checked against ``text``, in the order given: each span inside the text, its text
    equal to the span's, a known type, no two spans overlapping. A mention given without
    ``start``/``end`` (the API's older form) takes the first occurrence of its text that
    overlaps no mention before it. Anything else is an :class:`AssayInputError` naming the
    mention (its position as given, from 1)."""
    if not isinstance(raw, (list, tuple)):
        raise AssayInputError("mentions", "not a list")
    taken: list[tuple[int, int]] = []
    out = []
    for k, m in enumerate(raw):
        where = f"mention {k + 1}"
        if not isinstance(m, Mapping):
            raise AssayInputError(where, "not an object")
        mt = str(m.get("text", ""))
        if not mt.strip():
            raise AssayInputError(where, "no text")
        if m.get("type") not in TYPES:
            raise AssayInputError(where, f"type {m.get('type')!r}", expected=" / ".join(TYPES))
        try:
            start, end = _int(m.get("start")), _int(m.get("end"))
        except ValueError:
            raise AssayInputError(where, f"offsets {m.get('start')!r}, {m.get('end')!r}",
                                  expected="character offsets (integers)") from None
        if start is None and end is None:
            start = _first_free(text, mt, taken)
            if start is None:
                raise AssayInputError(where, f"{mt!r} is not in the text"
                                      + (" (every occurrence already marked)"
                                         if mt in text else ""))
            end = start + len(mt)
        if start is None or end is None or not 0 <= start < end <= len(text):
            raise AssayInputError(where, f"span {start}..{end}",
                                  expected=f"0 <= start < end <= {len(text)}")
        if text[start:end] != mt:
            raise AssayInputError(where, f"{mt!r} is not the text at {start}..{end} "
                                  f"({text[start:end]!r})")
        clash = [(a, b) for a, b in taken if a < end and start < b]
        if clash:
            raise AssayInputError(where, f"span {start}..{end} overlaps {clash[0][0]}.."
                                  f"{clash[0][1]}", expected="no overlapping or nested spans")
        taken.append((start, end))
        link = str(m.get("link") or "").strip() or None
        out.append(Mention(start, end, mt, str(m["type"]),
                           str(m.get("canonical") or "").strip() or mt.strip(), link))
    return out


def in_text_order(mentions: Sequence[Mention]) -> tuple[list[Mention], list[int]]:
    """The mentions sorted by start, and where each one given went (its new index).

    >>> in_text_order([Mention(5, 6, "b", "PER", "b"), Mention(0, 1, "a", "PER", "a")])[1]
    [1, 0]
    """
    order = sorted(range(len(mentions)), key=lambda k: mentions[k].start)
    where = [0] * len(mentions)
    for new, old in enumerate(order):
        where[old] = new
    return [mentions[k] for k in order], where


def _first_free(text: str, mt: str, taken: list[tuple[int, int]]) -> int | None:
    at = text.find(mt)
    while at >= 0:
        if not any(a < at + len(mt) and at < b for a, b in taken):
            return at
        at = text.find(mt, at + 1)
    return None


def options(first: Mention, second: Mention) -> tuple[Option, ...]:
    """The relations compatible with the pair's types, either way round."""
    out = [Option(r, f"{first.text} — {r} — {second.text}") for r, s, o in RELATIONS
           if (s, o) == (first.type, second.type)]
    out += [Option(r + REVERSED, f"{second.text} — {r} — {first.text}") for r, s, o in RELATIONS
            if (s, o) == (second.type, first.type)]
    return tuple(out)


def pair_tasks(mentions: Sequence[Mention], text: str) -> list[PairTask]:
    """Every pair of ``mentions`` in one sentence with at least one compatible relation."""
    spans = sentences(text)
    sent = [sentence_of(spans, m.start) for m in mentions]
    out = []
    for i, j in combinations(range(len(mentions)), 2):
        if sent[i] == sent[j]:
            opts = options(mentions[i], mentions[j])
            if opts:
                out.append(PairTask(i, j, sent[i], opts))
    return out


def check_relations(mentions: Sequence[Mention], text: str,
                    chosen: Mapping[tuple[int, int], str]) -> dict[tuple[int, int], str]:
    """The chosen relations (pair -> option value, none left out), each pair a task of the
    document and each value one of its options; else an :class:`AssayInputError`."""
    tasks = {(p.first, p.second): p for p in pair_tasks(mentions, text)}
    out = {}
    for pair, value in chosen.items():
        if not value:
            continue
        p = tasks.get(pair)
        if p is None:
            raise AssayInputError(f"relation {pair[0] + 1}-{pair[1] + 1}",
                                  "names no pair of mentions of one sentence with a relation")
        if value not in {o.value for o in p.options}:
            raise AssayInputError(f"relation {pair[0] + 1}-{pair[1] + 1}", repr(value),
                                  expected=" / ".join(o.value for o in p.options))
        out[pair] = value
    return out


def true_items(mentions: Sequence[Mention], chosen: Mapping[tuple[int, int], str],
               text: str) -> list[str]:
    """The document's true item keys from its mentions and checked relations."""
    keys = []
    for (i, j), value in sorted(check_relations(mentions, text, chosen).items()):
        s, o = mentions[i], mentions[j]
        if value.endswith(REVERSED):
            value, s, o = value[:-len(REVERSED)], o, s
        keys.append(KEY_SEPARATOR.join([s.canonical, value, o.canonical]))
    return list(dict.fromkeys(keys))


def settled(per_annotator: Sequence[Iterable[str]], k: int) -> list[str] | None:
    """The document's truth once no further annotator of the k can change it, else None: with
    n of k done and r = k − n to come, an item c of them gave is true when 2c > k and false
    when 2(c + r) ≤ k; an item nobody gave (c = 0) is false only when 2r ≤ k, so no document
    is settled while the ones to come could still make an item true that nobody gave yet (one
    annotator who marks nothing does not settle a document of k = 3); as the queue's rule for
    items, two who agree settle a document of k = 3 and a third is asked only when they
    disagree.

    >>> settled([["a"], ["a"]], 3), settled([["a"], []], 3), settled([["a"], [], []], 3)
    (['a'], None, [])
    >>> settled([[]], 3), settled([[], []], 3), settled([[]], 2), settled([[], []], 5)
    (None, [], [], None)
    """
    lists = [list(dict.fromkeys(x)) for x in per_annotator]
    left = k - len(lists)
    if left < 0:
        raise ValueError(f"{len(lists)} annotators of a document of k = {k}")
    counts: dict[str, int] = {}
    for x in lists:
        for item in x:
            counts[item] = counts.get(item, 0) + 1
    if 2 * left > k or any(not (2 * c > k or 2 * (c + left) <= k) for c in counts.values()):
        return None
    return [item for item, c in counts.items() if 2 * c > k]


def span_f1(a: set[tuple[int, int, str]], b: set[tuple[int, int, str]]) -> float:
    """F1 of two annotators' typed spans, 2|A ∩ B| / (|A| + |B|), 1.0 when both are empty."""
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


@dataclass(frozen=True)
class Agreement:
    """Mean pairwise span F1 over ``pairs`` annotator pairs of ``documents`` documents
    (``f1`` is NaN when no document has two annotators)."""

    f1: float
    documents: int
    pairs: int


def mention_agreement(spans: Mapping[str, Mapping[str, set[tuple[int, int, str]]]]
                      ) -> Agreement:
    """:func:`span_f1` averaged over every pair of annotators of every document
    (``spans``: document -> annotator -> typed spans).

    >>> mention_agreement({"d1": {"x": {(0, 3, "PER")}, "y": {(0, 3, "PER")}},
    ...                    "d2": {"x": {(0, 2, "ORG")}, "y": set(), "z": {(0, 2, "ORG")}}})
    Agreement(f1=0.5, documents=2, pairs=4)
    """
    scores, docs = [], 0
    for by in spans.values():
        names = sorted(by)
        if len(names) < 2:
            continue
        docs += 1
        scores += [span_f1(set(by[x]), set(by[y])) for x, y in combinations(names, 2)]
    return Agreement(sum(scores) / len(scores) if scores else float("nan"), docs, len(scores))


def relation_kappa(choices: Mapping[Any, Mapping[str, str]]) -> tuple[float, int]:
    """Fleiss' κ of the annotators' relation choices (:func:`assay.service.quality.fleiss_kappa`,
    categories: each relation either way round, and none) over the pair tasks two or more of
    them had (``choices``: task -> annotator -> chosen value, ``""`` for none), and how many
    such tasks; NaN when undefined.

    >>> relation_kappa({1: {"x": "r", "y": "r"}, 2: {"x": "", "y": ""}, 3: {"x": "r"}})
    (1.0, 2)
    """
    import numpy as np

    from assay.service.quality import fleiss_kappa
    tasks = [by for by in choices.values() if len(by) >= 2]
    cats = sorted({v for by in tasks for v in by.values()})
    counts = np.zeros((len(tasks), max(len(cats), 1)))
    for i, by in enumerate(tasks):
        for v in by.values():
            counts[i, cats.index(v)] += 1
    return fleiss_kappa(counts), len(tasks)


__all__ = ["Agreement", "Mention", "Option", "PairTask", "RELATIONS", "REVERSED", "TYPES",
           "check_relations", "in_text_order", "mention_agreement", "options", "pair_tasks",
           "relation_kappa",
           "resolve", "sentence_of", "sentences", "settled", "span_f1", "true_items"]
