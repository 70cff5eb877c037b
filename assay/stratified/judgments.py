"""TREC assessments and adjudications as judgments in the label store.

A judgment belongs to an item and an annotator with a role, never to a run or a file: an
assessor's qrels line ``topic 0 docno rel`` becomes the judgment of item ``topic⇥docno`` by the
assessor (role *assessor*; ``rel = −1`` is the status *unassessable*, not a value), an
adjudication the judgment of the same item by the authority (role *adjudicator*). Once stored,
every later ``assay stratified estimate`` on the same store and dataset reuses them; a file that
disagrees with what is stored is a :class:`~assay.errors.LabelConflict` naming the counts, unless
the user asks to replace.

>>> item_key("101", "D0007")
'101\\tD0007'
"""
from __future__ import annotations

from typing import Iterable, Mapping

from assay.core.types import Code
from assay.errors import LabelConflict
from assay.labels.schema import Role, Status
from assay.labels.store import Judgment, LabelStore

ID_COLUMNS = ["topic", "docno"]


def item_key(topic: str, docno: str) -> str:
    """The store key of a document judged for a topic."""
    return f"{topic}\t{docno}"


def _judgment(topic: str, docno: str, rel: int, annotator: str, role: Role) -> Judgment:
    if rel == Code.UNASSESSABLE:
        return Judgment(item_key(topic, docno), annotator, None, Status.UNASSESSABLE, role)
    return Judgment(item_key(topic, docno), annotator, int(rel), Status.JUDGED, role)


def record_qrels(store: LabelStore, dataset: str, qrels: Mapping[str, Mapping[str, int]],
                 wanted: Iterable[tuple[str, str]], annotator: str, role: Role, source: str,
                 replace: bool = False) -> int:
    """Store the judgments of ``qrels`` for the (topic, docno) pairs in ``wanted`` (those in
    the file); returns how many were new. Stored judgments that differ from the file are a
    :class:`LabelConflict` (with ``replace`` the file's overwrite them)."""
    store.claim_dataset(dataset, ID_COLUMNS)
    js = [_judgment(t, d, qrels[t][d], annotator, role) for t, d in wanted
          if d in qrels.get(t, {})]
    before = {(j.item, j.annotator) for j in store.judgments(dataset, annotator)}
    held = store.record(dataset, js, replace=replace)
    differ = [j for j in js if (held[(j.item, j.annotator)].value, held[(j.item, j.annotator)]
                                .status) != (j.value, j.status)]
    if differ:
        raise LabelConflict(source, f"{len(differ)} of {len(js)} {role.value} judgments differ "
                            f"from those stored for annotator {annotator!r} in dataset "
                            f"{dataset!r} (first: {differ[0].item.replace(chr(9), ' ')})",
                            expected="--replace-stored to overwrite them, or another "
                                     "--assessor/--adjudicator name")
    return sum((j.item, j.annotator) not in before for j in js)


def stored_qrels(store: LabelStore, dataset: str, annotator: str) -> dict[str, dict[str, int]]:
    """The stored judgments of ``annotator`` as qrels (topic → docno → 0/1, or −1 where the
    document was unassessable); skipped and pending entries are not judgments."""
    out: dict[str, dict[str, int]] = {}
    for j in store.judgments(dataset, annotator):
        topic, _, docno = j.item.partition("\t")
        if j.status == Status.JUDGED:
            out.setdefault(topic, {})[docno] = int(j.value)  # type: ignore[arg-type]
        elif j.status == Status.UNASSESSABLE:
            out.setdefault(topic, {})[docno] = int(Code.UNASSESSABLE)
    return out


__all__ = ["ID_COLUMNS", "item_key", "record_qrels", "stored_qrels"]
