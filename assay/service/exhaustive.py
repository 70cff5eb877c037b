"""Exhaustive annotation of a document (seed 001), in two tasks per annotator:

1. **mentions** (``GET /exhaustive``): mark every entity mention of the document's text as a
   character span (select it with the mouse, or type it: its first unmarked occurrence), with
   its type (PER / ORG / GPE / DATE / TITLE), canonical mention and optional link. ``POST
   /exhaustive/draft`` saves them unsubmitted (the page reloads the draft), ``POST
   /exhaustive/mentions`` submits them (``assay_svc_mentions``);
2. **relations**: for each pair of submitted mentions in one sentence whose types a relation
   joins, one choice from the fixed list of :data:`~assay.service.exhaustive_model.RELATIONS`
   or none (keys 0-9 pick, the page moves to the next pair); ``POST /exhaustive`` finishes.

Up to k annotators do each document (``POST /exhaustive/settings``, admin; default
:func:`~assay.service.exhaustive_store.documents_k`); as soon as the ones done settle it (the
items more than half of the k give, :func:`~assay.service.exhaustive_model.settled`: a third of
three only when two disagree), the items (``subject canonical <TAB> relation <TAB> object
canonical``) are the unit's truth, recorded in the finish's own write transaction
(:func:`settle`, as :meth:`OnDemandCampaign.annotate_units` records units). The admin page shows the
annotators' agreement on mentions (mean pairwise span F1). ``POST /exhaustive`` with
``mentions`` and ``relations`` (JSON; relations as ``{"subject": i, "relation": r, "object":
j}`` by index) does both tasks at once (the API's form). Unlinked mentions are clustered across
documents at ``/clusters``. The documents are the campaign's kept records with a ``text``
field (``POST /api/records``). A flagged annotator (:mod:`assay.service.flags`; the rule is
checked on every one of these pages, as when the queue serves them) is refused (403) on all of
them, as their votes are; every write of these pages reads the flag again inside its own write
transaction, under the campaign's lock (:func:`_writing`), as a vote does, so an annotator
flagged after the first check and before the write gets nothing written. While the flag is live
the documents they finished count toward no document's truth and their drafts hold no document
(:mod:`assay.service.exhaustive_store`), and a truth their work made before the flag is
settled again without it (:mod:`assay.service.resettle`); when an admin clears it, the
documents they finished are settled afresh with them (:func:`assay.service.resettle.clear`).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator, Mapping
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select, update

from assay.errors import AssayError, AssayInputError
from assay.ondemand import OnDemandCampaign
from assay.service import exhaustive_store as xs
from assay.service import views
from assay.service.app import Caller, need, need_post, render, store_of, templates
from assay.service.auth import audit
from assay.service.exhaustive_model import (RELATIONS, REVERSED, TYPES, Mention, PairTask,
                                            check_relations, in_text_order, settled,
                                            pair_tasks, resolve, sentences, true_items)
from assay.service.queue import _lock
from assay.service.schema import mentions_table

router = APIRouter()


def _campaign(request: Request, name: str) -> OnDemandCampaign:
    if views.campaign_row(store_of(request), name) is None:
        raise HTTPException(404, "no such campaign")
    return OnDemandCampaign.open(store_of(request), name)


def _unflagged(request: Request, camp: OnDemandCampaign, c: Caller, what: str) -> None:
    """403 for a flagged annotator (:func:`assay.service.flags.check`: a live flag, or the
    seeds' rule holds on their labels now), as the queue refuses their votes and serves them
    nothing: no document is leased or shown to them and no annotation of theirs is taken."""
    from assay.service import flags
    if flags.check(store_of(request), camp.row, c.user.name):
        raise HTTPException(403, flags.refusal(camp.row.name, c.user.name, what))


@contextmanager
def _writing(request: Request, campaign: str, who: str, what: str) -> Iterator[Any]:
    """A write transaction of ``campaign`` (SQLite ``BEGIN IMMEDIATE``, PostgreSQL the
    campaign's advisory lock, :func:`assay.service.queue._lock`, which a flag's write takes
    too) that first reads ``who``'s flag (:func:`assay.service.flags.live`) and answers 403,
    nothing written, when it is live — as :func:`assay.service.queue.vote_in` does."""
    from assay.service import flags
    with store_of(request).engine.begin() as conn:
        _lock(conn, campaign)
        if flags.live(conn, campaign, who):
            raise HTTPException(403, flags.refusal(campaign, who, what))
        yield conn


def _offered(request: Request, camp: OnDemandCampaign, c: Caller) -> dict[str, str]:
    return xs.offered(store_of(request).engine, camp.row.name, c.user.name,
                      set(camp.od.units(camp.row.id)))


def _segments(text: str, task: PairTask, ms: list[Mention]) -> list[tuple[str, bool]]:
    """The pair's sentence in pieces, its two mentions marked."""
    a, b = sentences(text)[task.sentence]
    m1, m2 = ms[task.first], ms[task.second]
    return [(text[a:m1.start], False), (m1.text, True), (text[m1.end:m2.start], False),
            (m2.text, True), (text[m2.end:b], False)]


@router.get("/exhaustive", response_class=HTMLResponse)
def page(request: Request, campaign: str, message: str | None = None) -> Response:
    c = need(request, "annotator", "admin")
    camp = _campaign(request, campaign)
    _unflagged(request, camp, c, "exhaustive annotation")
    docs = _offered(request, camp, c)
    engine = store_of(request).engine
    unit = xs.lease(engine, campaign, c.user.name, list(docs))
    ctx: dict[str, Any] = {"campaign": campaign, "types": TYPES, "left": len(docs),
                           "message": message, "doc": None, "stage": "mentions"}
    if unit is not None:
        w = xs.work(engine, campaign, unit, c.user.name)
        ms = [] if w is None else w.mentions
        ctx.update(doc=(unit, docs[unit]), mentions=[m.as_dict() for m in ms],
                   k=xs.documents_k(engine, campaign))
        if w is not None and w.state == "mentions":
            tasks = pair_tasks(ms, docs[unit])
            ctx.update(stage="relations", tasks=[
                (t, _segments(docs[unit], t, ms)) for t in tasks])
    return render(request, "exhaustive.html", c, **ctx)


async def _document(request: Request
                    ) -> tuple[Caller, dict[str, Any], OnDemandCampaign, str, str]:
    """The caller, the form, the campaign and the document (unit, text) it names: one offered
    to the caller, else 404; a flagged caller 403."""
    c, form = await need_post(request, "annotator", "admin")
    camp = _campaign(request, str(form.get("campaign", "")))
    _unflagged(request, camp, c, "exhaustive annotation")
    unit = str(form.get("unit", ""))
    docs = _offered(request, camp, c)
    if unit not in docs:
        raise HTTPException(404, "no such document to annotate")
    return c, form, camp, unit, docs[unit]


def _mentions_of(form: Mapping[str, Any], text: str) -> list[Mention]:
    try:
        raw = json.loads(str(form.get("mentions") or "[]"))
        return in_text_order(resolve(raw, text))[0]
    except (ValueError, AssayError) as exc:
        raise HTTPException(400, " ".join(str(exc).split())) from None


def _back(campaign: str, message: str) -> Response:
    return RedirectResponse(f"/exhaustive?campaign={quote(campaign)}&message={quote(message)}",
                            status_code=303)


async def _save_mentions(request: Request, stage: str
                         ) -> tuple[Caller, Any, str, list[Mention], str]:
    """The document's marked mentions saved at ``stage`` (``draft`` or ``mentions``) while
    the annotator's work on it is still a draft (checked in the write transaction: a draft
    never overwrites mentions submitted meanwhile), with its audit entry."""
    c, form, camp, unit, text = await _document(request)
    ms = _mentions_of(form, text)
    engine = store_of(request).engine
    with _writing(request, camp.row.name, c.user.name, "exhaustive annotation") as conn:
        w = xs.work_in(conn, camp.row.name, unit, c.user.name)
        if w is not None and w.state != "draft":
            raise HTTPException(409, f"document {unit}: its mentions are already submitted")
        xs.save(conn, camp.row.name, unit, c.user.name, stage, ms)
        audit(engine, c.user.name, f"exhaustive-{stage}", camp.row.name, unit,
              {"mentions": len(ms)}, conn=conn)
    return c, camp, unit, ms, text


@router.post("/exhaustive/draft")
async def draft(request: Request) -> Response:
    """Save the mentions marked so far without submitting them."""
    _, camp, unit, ms, _ = await _save_mentions(request, "draft")
    return _back(camp.row.name, f"draft of {unit} saved ({len(ms)} mentions)")


@router.post("/exhaustive/mentions")
async def submit_mentions(request: Request) -> Response:
    """Submit the document's mentions: its relation task is next."""
    _, camp, unit, ms, text = await _save_mentions(request, "mentions")
    n = len(pair_tasks(ms, text))
    return _back(camp.row.name, f"{len(ms)} mentions of {unit} submitted: now the relation "
                                f"of each of {n} pairs")


def _relations_by_index(raw: Any, where: list[int]) -> dict[tuple[int, int], str]:
    """The API's relations (indices into the mentions as given) as pair -> option value."""
    out = {}
    for k, r in enumerate(raw if isinstance(raw, list) else [None]):
        try:
            s, o = where[int(r["subject"])], where[int(r["object"])]
        except (KeyError, ValueError, IndexError, TypeError):
            raise AssayInputError(f"relation {k + 1}", "names no marked mention") from None
        rel = str(r.get("relation", "")).strip()
        if rel not in {x[0] for x in RELATIONS}:
            raise AssayInputError(f"relation {k + 1}", f"{rel!r}",
                                  expected=" / ".join(x[0] for x in RELATIONS))
        if s == o:
            raise AssayInputError(f"relation {k + 1}", "joins a mention to itself")
        out[(min(s, o), max(s, o))] = rel if s < o else rel + REVERSED
    return out


@router.post("/exhaustive")
async def finish(request: Request) -> Response:
    """Finish the document: its relations (with its mentions, the API's form). The form's own
    checks come first; the ones on what is stored (the document still open to the caller:
    no truth, fewer than k counted annotators done; their stage; the corpus's size) are made
    inside the write transaction, under the campaign's lock (:func:`_writing`), so no
    concurrent finish slips between a check and the write. The caller's lease of the document
    is released in that transaction, and the document's truth recorded when the annotators
    done settle it (:func:`settle`): one transaction, so two finishes of different documents
    cannot both pass the corpus-size check."""
    c, form, camp, unit, text = await _document(request)
    engine, name, who = store_of(request).engine, camp.row.name, c.user.name
    both = "mentions" in form           # both tasks at once (the API's form)
    ms: list[Mention] = []
    chosen: dict[tuple[int, int], str] = {}
    try:
        if both:
            raw = json.loads(str(form.get("mentions") or "[]"))
            ms, where = in_text_order(resolve(raw, text))
            chosen = _relations_by_index(json.loads(str(form.get("relations") or "[]")), where)
    except (ValueError, AssayError) as exc:
        raise HTTPException(400, " ".join(str(exc).split())) from None
    k = xs.documents_k(engine, name)
    with _writing(request, name, who, "exhaustive annotation") as conn:
        _still_open(conn, camp, unit, who, k)
        w = xs.work_in(conn, name, unit, who)
        if (None if w is None else w.state) not in ((None, "draft") if both else ("mentions",)):
            raise HTTPException(409, f"document {unit}: its mentions are "
                                     f"{'already' if both else 'not yet'} submitted")
        if not both:
            assert w is not None
            ms = w.mentions
            chosen = {(t.first, t.second): str(form.get(t.name) or "")
                      for t in pair_tasks(ms, text)}
        try:
            chosen = check_relations(ms, text, chosen)
            keys = true_items(ms, chosen, text)
            corpus = camp.row.corpus_units
            if corpus is None or len(xs.recorded(conn, camp.row.id)) + 1 > corpus:
                raise AssayInputError(f"campaign {name!r}", f"its corpus's number of units is "
                                      f"{corpus}", expected="more units than annotated (set "
                                      "with assay campaign new --corpus-units)")
        except (ValueError, AssayError) as exc:
            raise HTTPException(400, " ".join(str(exc).split())) from None
        if both:
            xs.save(conn, name, unit, who, "mentions", ms)
        xs.save(conn, name, unit, who, "done", ms, chosen)
        xs.release(conn, name, unit, who)
        done = xs.counted_works(conn, name, unit)       # flagged annotators' left out
        audit(engine, who, "exhaustive", name, unit,
              {"mentions": len(ms), "relations": [[a, b, v] for (a, b), v in chosen.items()],
               "true_items": len(keys)}, conn=conn)
        try:
            truth = settle(conn, camp.row, unit, text, done, k)
        except AssayError as exc:                       # the transaction is rolled back
            raise HTTPException(409, " ".join(str(exc).split())) from None
    if truth is None:
        left = k - len(done)
        return _back(name, f"document {unit} done: waiting for {left} more "
                           f"annotator{'s' if left > 1 else ''}")
    return _back(name, f"document {unit} done ({len(truth)} true items)")


def _still_open(conn: Any, camp: OnDemandCampaign, unit: str, who: str, k: int) -> None:
    """409 unless the document is still open to ``who`` (read in the caller's transaction):
    no truth recorded, not done by them, and fewer than k annotators counted done
    (:func:`~assay.service.exhaustive_store.counted_works`)."""
    done = xs.counted_works(conn, camp.row.name, unit)
    if unit in xs.recorded(conn, camp.row.id) or who in done or len(done) >= k:
        raise HTTPException(409, f"document {unit} is settled or done by its {k} annotators "
                                 "meanwhile; nothing written")


def settle(conn: Any, row: Any, unit: str, text: str, done: Mapping[str, xs.Work],
           k: int) -> list[str] | None:
    """The document's truth when the counted annotators done with it settle it
    (:func:`~assay.service.exhaustive_model.settled` over max(k, their number)), recorded in
    the caller's write transaction (:func:`~assay.service.exhaustive_store.record_truth`: the
    corpus-size check and the write in one step); None (nothing recorded) when they do not.
    ``row``: the campaign's row."""
    truth = settled([true_items(d.mentions, d.relations, text) for d in done.values()],
                    max(k, len(done)))
    if truth is not None:
        xs.record_truth(conn, row, unit, truth)
    return truth


@router.post("/exhaustive/settings")
async def settings(request: Request) -> Response:
    """Annotators per document of a campaign (admin)."""
    c, form = await need_post(request, "admin")
    name = str(form.get("campaign", ""))
    _campaign(request, name)
    try:
        k = int(str(form.get("k", "")))
        xs.set_documents_k(store_of(request).engine, name, k)
    except ValueError:
        raise HTTPException(400, "k: annotators per document, an integer of at least 1"
                            ) from None
    audit(store_of(request).engine, c.user.name, "exhaustive-settings", name, detail={"k": k})
    return RedirectResponse(f"/admin?message={quote(f'{name}: {k} annotators per document')}",
                            status_code=303)


def _summaries(request: Request) -> list[xs.Summary]:
    """The admin page's exhaustive annotation table (a template global: ``admin.html``)."""
    store = store_of(request)
    return xs.summaries(store.engine, views.campaigns(store))


templates.env.globals["exhaustive_summaries"] = _summaries


# -- cross-document clustering of unlinked mentions ------------------------------------------
@router.get("/clusters", response_class=HTMLResponse)
def clusters(request: Request, campaign: str) -> Response:
    """Every submitted mention with no link, across the campaign's documents, with its cluster
    (default suggestion: its canonical mention); the clusters given so far are offered. A
    flagged annotator's mentions are left out while the flag is live (their work counts
    nowhere then), and ``POST /clusters`` does not change them."""
    from assay.service.flags import flagged
    c = need(request, "annotator", "admin")
    _unflagged(request, _campaign(request, campaign), c, "clustering")
    t = mentions_table
    with store_of(request).engine.connect() as conn:
        rows = conn.execute(select(t).where(
            (t.c.campaign == campaign) & t.c.link.is_(None)
            & t.c.annotator.not_in(list(flagged(conn, campaign))))
            .order_by(t.c.type, t.c.canonical, t.c.unit, t.c.position)).all()
    names = sorted({r.cluster for r in rows if r.cluster})
    return render(request, "clusters.html", c, campaign=campaign, rows=rows, names=names)


@router.post("/clusters")
async def clusters_post(request: Request) -> Response:
    c, form = await need_post(request, "annotator", "admin")
    campaign = str(form.get("campaign", ""))
    _unflagged(request, _campaign(request, campaign), c, "clustering")
    given = {int(k[len("cluster_"):]): str(v).strip() for k, v in form.items()
             if k.startswith("cluster_") and k[len("cluster_"):].isdigit()}
    t, engine = mentions_table, store_of(request).engine
    from assay.service.flags import flagged
    with _writing(request, campaign, c.user.name, "clustering") as conn:
        out = list(flagged(conn, campaign))
        for mid, name in given.items():
            conn.execute(update(t).where((t.c.id == mid) & (t.c.campaign == campaign)
                                         & t.c.link.is_(None) & t.c.annotator.not_in(out))
                         .values(cluster=name or None))
        audit(engine, c.user.name, "clusters", campaign, detail={"mentions": len(given)},
              conn=conn)
    return RedirectResponse(f"/clusters?campaign={quote(campaign)}", status_code=303)


__all__ = ["RELATIONS", "TYPES", "router", "settle"]
