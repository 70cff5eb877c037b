"""Exhaustive annotation over HTTP (seed 001): mentions as character spans checked against the
text, drafts distinct from submitted mentions, the per-pair relation task of one sentence, k
annotators per document with the document's truth their majority, the annotators' span F1 on
the admin page, and the migration of mentions stored before revision 0007."""
from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import unquote

import pytest
from sqlalchemy import select

from assay.ondemand import OnDemandCampaign
from assay.service import exhaustive_store as xs
from assay.service import migrate, queue, views
from assay.service.schema import mentions_table

from service_helpers import csrf_of

TEXT = "Ann Lee joined Acme Corp in 2010. Bo Chan lives in Paris."
ANN = {"start": 0, "end": 7, "text": "Ann Lee", "type": "PER"}
ACME = {"start": 15, "end": 24, "text": "Acme Corp", "type": "ORG", "canonical": "Acme"}
Y2010 = {"start": 28, "end": 32, "text": "2010", "type": "DATE"}
BO = {"start": 34, "end": 41, "text": "Bo Chan", "type": "PER"}
PARIS = {"start": 51, "end": 56, "text": "Paris", "type": "GPE", "link": "Q90"}


def _docs(service, corpus=10):
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=corpus)
    views.add_records(service.store, "docs", [{"id": "d1", "text": TEXT},
                                              {"id": "d2", "text": "It rained."}])
    xs.set_documents_k(service.store.engine, "docs", 1)
    return OnDemandCampaign.open(service.store, "docs")


def _post(c, path, tok, **fields):
    return c.post(path, data={"csrf": tok, "campaign": "docs", **fields})


def _draft_on_page(html: str) -> list[dict]:
    return json.loads(unescape(re.search(r'<script type="application/json" id="draft">(.*?)'
                                         r'</script>', html, re.S).group(1)))


def test_spans_are_checked_against_the_text(service):
    _docs(service)
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    for bad, said in (([{**ANN, "end": 6}], "'Ann Lee' is not the text at 0..6 ('Ann Le')"),
                      ([{**ANN, "start": 50, "end": 57}], "is not the text at 50..57"),
                      ([{**ANN, "start": 0, "end": 99}], "span 0..99"),
                      ([ANN, {**ANN, "text": "Lee", "start": 4}], "overlaps 0..7"),
                      ([{**ANN, "start": "x"}], "offsets 'x'"),
                      ([{**ANN, "type": "CAT"}], "type 'CAT'"),
                      ([{**ANN, "text": " "}], "no text")):
        for path in ("/exhaustive/draft", "/exhaustive/mentions"):
            r = _post(ann, path, tok, unit="d1", mentions=json.dumps(bad))
            assert r.status_code == 400 and said in unescape(r.text), (bad, r.text[:300])
    assert xs.work(service.store.engine, "docs", "d1", "ann1") is None       # nothing written
    r = _post(ann, "/exhaustive/draft", tok, unit="nope", mentions="[]")
    assert r.status_code == 404


def test_draft_reloads_then_submitted_mentions_then_relation_per_pair(service):
    docs = _docs(service)
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    r = _post(ann, "/exhaustive/draft", tok, unit="d1", mentions=json.dumps([ACME, ANN]))
    assert r.status_code == 303 and "draft" in unquote(r.headers["location"])
    page = ann.get("/exhaustive?campaign=docs").text
    assert 'data-unit="d1"' in page
    got = _draft_on_page(page)
    assert [(m["start"], m["end"], m["type"], m["canonical"]) for m in got] == [
        (0, 7, "PER", "Ann Lee"), (15, 24, "ORG", "Acme")]             # in text order
    with service.store.engine.connect() as conn:                         # a draft is not
        assert conn.execute(select(mentions_table)).all() == []          # submitted
    assert 'id="relations-form"' not in page
    # a second annotator does not see ann1's draft
    other = service.client("ann2")
    assert _draft_on_page(other.get("/exhaustive?campaign=docs").text) == []
    r = _post(ann, "/exhaustive/mentions", tok, unit="d1",
              mentions=json.dumps([ANN, ACME, Y2010, BO, PARIS]))
    assert r.status_code == 303, r.text
    with service.store.engine.connect() as conn:
        rows = conn.execute(select(mentions_table.c.text, mentions_table.c.start_char,
                                   mentions_table.c.end_char, mentions_table.c.annotator)
                            .order_by(mentions_table.c.position)).all()
    assert [tuple(r) for r in rows] == [("Ann Lee", 0, 7, "ann1"), ("Acme Corp", 15, 24, "ann1"),
                                        ("2010", 28, 32, "ann1"), ("Bo Chan", 34, 41, "ann1"),
                                        ("Paris", 51, 56, "ann1")]
    # submitted: a draft may no longer replace them; reloading shows the relation task
    assert _post(ann, "/exhaustive/draft", tok, unit="d1", mentions="[]").status_code == 409
    page = ann.get("/exhaustive?campaign=docs").text
    assert 'id="relations-form"' in page
    pairs = re.findall(r'<fieldset class="pair-task" id="pair-(\d+)-(\d+)"', page)
    # one sentence each: Ann Lee/Acme (employee_of ...) and Ann Lee/2010 (date of birth ...);
    # Acme/2010 (org:date_founded); Bo Chan/Paris; never Ann Lee/Bo Chan (two sentences)
    assert pairs == [("0", "1"), ("0", "2"), ("1", "2"), ("3", "4")]
    assert 'value="per:employee_of"' in page and 'value="per:residence"' in page
    # an option of another pair, a pair across sentences: refused, nothing written
    r = _post(ann, "/exhaustive", tok, unit="d1", rel_0_1="per:residence")
    assert r.status_code == 400 and "per:employee_of" in unescape(r.text)
    r = _post(ann, "/exhaustive", tok, unit="d1", rel_0_3="per:siblings")
    assert r.status_code == 303        # not a task of the page: not read (no such field)
    assert docs.od.units(docs.row.id) == {"d1": set()}


def test_relations_chosen_make_the_truth(service):
    docs = _docs(service)
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    _post(ann, "/exhaustive/mentions", tok, unit="d1",
          mentions=json.dumps([ANN, ACME, Y2010, BO, PARIS]))
    r = _post(ann, "/exhaustive", tok, unit="d1", rel_0_1="per:employee_of",
              rel_1_2="org:date_founded", rel_3_4="per:residence", rel_0_2="")
    assert r.status_code == 303 and "d1 done (3 true items)" in unquote(r.headers["location"])
    assert docs.od.units(docs.row.id)["d1"] == {"Ann Lee\tper:employee_of\tAcme",
                                                "Acme\torg:date_founded\t2010",
                                                "Bo Chan\tper:residence\tParis"}
    assert 'data-unit="d2"' in ann.get("/exhaustive?campaign=docs").text    # the next one
    # the API's form: both tasks at once, relations by index into the mentions as given
    bad = [{"subject": 0, "relation": "per:knows", "object": 1}]
    two = [{"text": "It", "type": "PER"}, {"text": "rained", "type": "GPE"}]
    r = _post(ann, "/exhaustive", tok, unit="d2", mentions=json.dumps(two),
              relations=json.dumps(bad))
    assert r.status_code == 400 and "'per:knows'" in unescape(r.text)


def test_reversed_relation_and_api_form(service):
    docs = _docs(service)
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    ms = [PARIS, BO]                                    # given out of text order
    rel = [{"subject": 1, "relation": "per:residence", "object": 0}]
    r = _post(ann, "/exhaustive", tok, unit="d1", mentions=json.dumps(ms),
              relations=json.dumps(rel))
    assert r.status_code == 303, r.text
    assert docs.od.units(docs.row.id)["d1"] == {"Bo Chan\tper:residence\tParis"}
    across = [{"subject": 0, "relation": "per:residence", "object": 1}]
    r = _post(ann, "/exhaustive", tok, unit="d2", mentions=json.dumps(
        [{"text": "It", "type": "PER"}, {"text": "rained", "type": "GPE"}]),
        relations=json.dumps(across))
    assert r.status_code == 303          # one sentence, PER -> GPE: a task
    r = _post(service.client("ann2"), "/exhaustive", csrf_of(service.client("ann2")),
              unit="d2", mentions="[]", relations="[]")
    assert r.status_code in (403, 404)


def test_k_annotators_majority_truth_and_agreement_on_admin(service):
    docs = _docs(service)
    root = service.client("root")
    r = root.post("/exhaustive/settings", data={"csrf": csrf_of(root, "/admin"),
                                               "campaign": "docs", "k": "x"})
    assert r.status_code == 400
    r = root.post("/exhaustive/settings", data={"csrf": csrf_of(root, "/admin"),
                                               "campaign": "docs", "k": "2"})
    assert r.status_code == 303 and xs.documents_k(service.store.engine, "docs") == 2
    ann1, ann2 = service.client("ann1"), service.client("ann2")
    t1, t2 = csrf_of(ann1, "/exhaustive?campaign=docs"), csrf_of(ann2, "/exhaustive?campaign=docs")
    assert 'data-unit="d1"' in ann1.get("/exhaustive?campaign=docs").text
    assert 'data-unit="d2"' in ann2.get("/exhaustive?campaign=docs").text   # while enough:
    _post(ann1, "/exhaustive/mentions", t1, unit="d1", mentions=json.dumps([ANN, ACME, Y2010]))
    r = _post(ann1, "/exhaustive", t1, unit="d1", rel_0_1="per:employee_of")  # different ones
    assert "waiting for 1 more annotator" in unquote(r.headers["location"])
    assert docs.od.units(docs.row.id) == {}                             # not yet the truth
    assert 'data-unit="d2"' in ann1.get("/exhaustive?campaign=docs").text  # not d1 again
    assert 'data-unit="d1"' in root.get("/exhaustive?campaign=docs").text  # d1 needs one more
    # ann2 marks Acme as a GPE and misses 2010: span F1 = 2*1/(3+2) = 0.4
    _post(ann2, "/exhaustive/mentions", t2, unit="d1",
          mentions=json.dumps([ANN, {**ACME, "type": "GPE"}]))
    page = root.get("/admin").text
    assert re.search(r'<td class="agreement">0\.400</td><td>1 \(1 pairs\)', page), page[-2000:]
    r = _post(ann2, "/exhaustive", t2, unit="d1")
    assert "d1 done (0 true items)" in unquote(r.headers["location"])
    assert docs.od.units(docs.row.id) == {"d1": set()}   # employee_of: 1 of 2, not a majority
    # relations: one pair task both had (Ann Lee / Acme Corp's spans): employee_of vs none,
    # Fleiss' kappa (0 - 0.5) / (1 - 0.5) = -1
    page = root.get("/admin").text
    assert re.search(r'<td class="kappa">-1\.000</td><td>1</td>', page), page[-2000:]
    # a third annotator is not offered d1
    assert 'data-unit="d1"' not in root.get("/exhaustive?campaign=docs").text


def test_documents_k_defaults_to_the_campaign_queue_k(service):
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=10)
    assert xs.documents_k(service.store.engine, "docs") == queue.DEFAULT_K == 3   # no setting
    queue.set_settings(service.store, "docs", queue.Settings(k=1))
    assert xs.documents_k(service.store.engine, "docs") == 1
    xs.set_documents_k(service.store.engine, "docs", 2)
    assert xs.documents_k(service.store.engine, "docs") == 2


def test_three_annotators_a_third_only_when_two_disagree(service):
    docs = _docs(service)
    xs.set_documents_k(service.store.engine, "docs", 3)
    who = {n: service.client(n) for n in ("ann1", "ann2", "root")}
    tok = {n: csrf_of(c, "/exhaustive?campaign=docs") for n, c in who.items()}

    def annotate(n, unit, ms, **rel):
        r = _post(who[n], "/exhaustive/mentions", tok[n], unit=unit, mentions=json.dumps(ms))
        assert r.status_code == 303, r.text
        return unquote(_post(who[n], "/exhaustive", tok[n], unit=unit, **rel
                             ).headers["location"])
    # d1: two agree (employee_of): settled, the third is not asked
    assert "waiting for 2 more" in annotate("ann1", "d1", [ANN, ACME], rel_0_1="per:employee_of")
    assert "d1 done (1 true items)" in annotate("ann2", "d1", [ANN, ACME],
                                                rel_0_1="per:employee_of")
    assert docs.od.units(docs.row.id) == {"d1": {"Ann Lee\tper:employee_of\tAcme"}}
    # d2: two disagree: the third decides
    it = [{"text": "It", "type": "PER"}, {"text": "rained", "type": "GPE"}]
    assert "waiting for 2 more" in annotate("ann1", "d2", it, rel_0_1="per:origin")
    assert "waiting for 1 more" in annotate("ann2", "d2", it)
    assert 'data-unit="d2"' in who["root"].get("/exhaustive?campaign=docs").text
    assert "d2 done (1 true items)" in annotate("root", "d2", it, rel_0_1="per:origin")
    assert docs.od.units(docs.row.id)["d2"] == {"It\tper:origin\trained"}


def test_migration_0006_keeps_mentions_without_spans(tmp_path):
    import datetime as dt

    from sqlalchemy import text

    from assay.labels.store import LabelStore
    store = LabelStore(tmp_path / "s.db")
    migrate.upgrade(store.engine, "0006")
    with store.engine.begin() as conn:
        conn.execute(text("INSERT INTO assay_svc_mentions (campaign, unit, position, text, type,"
                          " canonical, annotator, created_at) VALUES ('c', 'u', 0, 'Ann', 'PER',"
                          " 'Ann', 'a1', :t)"), {"t": dt.datetime(2026, 1, 1)})
    assert migrate.upgrade(store.engine) == "0006"
    assert migrate.current(store.engine) == "0008"
    with store.engine.connect() as conn:
        row = conn.execute(select(mentions_table)).one()
    assert (row.text, row.start_char, row.end_char, row.annotator) == ("Ann", None, None, "a1")
    with store.engine.begin() as conn:     # another annotator's mentions of the same unit
        conn.execute(mentions_table.insert().values(
            campaign="c", unit="u", position=0, text="Ann", type="PER", canonical="Ann",
            annotator="a2", created_at=dt.datetime(2026, 1, 1), start_char=0, end_char=3))
    assert xs.agreement(store.engine, "c").pairs == 0      # no work rows: nothing compared


def test_model_doctests_and_sentences():
    import doctest

    from assay.service import exhaustive_model as em
    assert doctest.testmod(em).failed == 0
    spans = em.sentences(TEXT)
    assert [TEXT[a:b] for a, b in spans] == ["Ann Lee joined Acme Corp in 2010. ",
                                             "Bo Chan lives in Paris."]
    ms = em.resolve([ANN, BO], TEXT)
    assert em.pair_tasks(ms, TEXT) == []                       # two sentences: no task
    ms = em.in_text_order(em.resolve([PARIS, BO, ANN], TEXT))[0]
    assert [m.text for m in ms] == ["Ann Lee", "Bo Chan", "Paris"]
    (task,) = em.pair_tasks(ms, TEXT)
    assert (task.first, task.second) == (1, 2)
    assert em.true_items(ms, {(1, 2): "per:origin"}, TEXT) == ["Bo Chan\tper:origin\tParis"]
    city = em.resolve([{"text": "Paris", "type": "GPE"}, {"text": "Bo Chan", "type": "PER"}],
                      "Paris elected Bo Chan.")
    (t2,) = em.pair_tasks(city, "Paris elected Bo Chan.")
    assert "per:residence<" in [o.value for o in t2.options]    # the second is the subject
    assert em.true_items(city, {(0, 1): "per:residence<"}, "Paris elected Bo Chan.") == [
        "Bo Chan\tper:residence\tParis"]
    # typed mentions: the first occurrence no earlier mention covers
    got = em.resolve([{"text": "Lee", "type": "PER"}, {"text": "Lee", "type": "PER"}],
                     "Lee met Lee.")
    assert [(m.start, m.end) for m in got] == [(0, 3), (8, 11)]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_k_annotators_finishing_at_once(tmp_path, request, backend):
    """Two annotators (k = 2) finish one document at the same moment: the document's truth is
    recorded once, from both (SQLite: IMMEDIATE transactions; PostgreSQL: the advisory lock)."""
    import threading
    import uuid

    from fastapi.testclient import TestClient

    from assay.labels.store import LabelStore
    from assay.service import auth
    from assay.service.app import create_app
    from service_helpers import PASSWORD, USERS, login
    url = (str(tmp_path / "s.db") if backend == "sqlite"
           else request.getfixturevalue("postgres_url"))
    store = LabelStore(url)
    migrate.upgrade(store.engine)
    name = f"docs{uuid.uuid4().hex[:6]}"
    OnDemandCampaign.create(store, name, annotator="consensus", corpus_units=10)
    views.add_records(store, name, [{"id": "d1", "text": TEXT}])
    xs.set_documents_k(store.engine, name, 2)
    for who, role, team in USERS:
        if auth.user_by_name(store.engine, who) is None:
            auth.add_user(store.engine, who, role, PASSWORD, team)
    clients, toks = {}, {}
    for who in ("ann1", "ann2"):
        clients[who] = TestClient(create_app(store), follow_redirects=False)
        login(clients[who], who)
        toks[who] = csrf_of(clients[who], f"/exhaustive?campaign={name}")
        r = clients[who].post("/exhaustive/mentions", data={
            "csrf": toks[who], "campaign": name, "unit": "d1",
            "mentions": json.dumps([ANN, ACME, BO, PARIS])})
        assert r.status_code == 303, r.text
    gate, got = threading.Barrier(2), {}

    def finish(who: str) -> None:
        gate.wait()
        got[who] = clients[who].post("/exhaustive", data={
            "csrf": toks[who], "campaign": name, "unit": "d1", "rel_0_1": "per:employee_of",
            "rel_2_3": "per:residence" if who == "ann1" else ""})
    threads = [threading.Thread(target=finish, args=(w,)) for w in ("ann1", "ann2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    said = sorted(unquote(r.headers["location"]).split("message=")[1] for r in got.values())
    assert [r.status_code for r in got.values()] == [303, 303]
    assert said == ["document d1 done (1 true items)",
                    "document d1 done: waiting for 1 more annotator"]
    camp = OnDemandCampaign.open(store, name)
    assert camp.od.units(camp.row.id) == {"d1": {"Ann Lee\tper:employee_of\tAcme"}}
    assert xs.agreement(store.engine, name).f1 == 1.0


def test_every_pair_has_at_most_nine_options():
    """Keys 1-9 reach every option of a pair task (0 is none)."""
    from assay.service import exhaustive_model as em
    for a in em.TYPES:
        for b in em.TYPES:
            got = em.options(em.Mention(0, 1, "a", a, "a"), em.Mention(2, 3, "b", b, "b"))
            assert len(got) <= 9, (a, b, len(got))


def test_a_flagged_annotator_is_refused_on_the_exhaustive_pages(service):
    """As on the verification queue and the Label Studio import: a flagged annotator (a live
    flag, or the seeds' rule holding on their labels when they ask) is refused (403, the
    message on the page) on every exhaustive page, nothing of theirs written; others go on,
    and after an admin's clear they go on too."""
    from assay.labels.schema import judgments_table, now
    from assay.service import flags
    docs = _docs(service)
    ann, ann2 = service.client("ann1"), service.client("ann2")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    _post(ann, "/exhaustive/draft", tok, unit="d1", mentions=json.dumps([ANN]))
    rows = [{"dataset": docs.row.dataset, "item": f"x{i}", "annotator": w, "role": "assessor",
             "value": int(w != "ann1"), "status": "judged", "created_at": now()}
            for i in range(11) for w in ("ann1", "ann2", "root")]     # 11 of 11 against 2-1
    with service.store.engine.begin() as conn:
        conn.execute(judgments_table.insert(), rows)
    assert flags.flags(service.store.engine, "docs") == {}            # not flagged yet
    pages = [("GET", "/exhaustive?campaign=docs", {}),
             ("POST", "/exhaustive/draft", {"unit": "d1", "mentions": json.dumps([ANN, ACME])}),
             ("POST", "/exhaustive/mentions", {"unit": "d1", "mentions": json.dumps([ANN])}),
             ("POST", "/exhaustive", {"unit": "d1", "mentions": json.dumps([ANN]),
                                      "relations": "[]"}),
             ("GET", "/clusters?campaign=docs", {}),
             ("POST", "/clusters", {"cluster_1": "x"})]
    for method, path, fields in pages:
        r = ann.get(path) if method == "GET" else _post(ann, path, tok, **fields)
        assert r.status_code == 403, (method, path, r.status_code)
        assert "'ann1' is flagged in campaign 'docs'" in unescape(r.text), (method, path)
    flag = flags.flags(service.store.engine, "docs")["ann1"]          # the rule, on the GET
    assert flag.live and (flag.disagreements, flag.compared) == (11, 11)
    w = xs.work(service.store.engine, "docs", "d1", "ann1")          # the draft as it was
    assert w is not None and w.state == "draft" and len(w.mentions) == 1
    assert "d1" not in docs.od.units(docs.row.id)                     # no truth recorded
    with service.store.engine.connect() as conn:                      # no lease, no mention
        from assay.service.schema import leases_table
        assert conn.execute(select(leases_table).where(
            leases_table.c.annotator == "ann1")).all() == []
        assert conn.execute(select(mentions_table)).all() == []
    assert ann2.get("/exhaustive?campaign=docs").status_code == 200   # others go on
    assert ann2.get("/clusters?campaign=docs").status_code == 200
    assert ann.get("/clusters?campaign=nope").status_code == 404
    assert flags.clear(service.store.engine, "docs", "ann1", "root")
    assert ann.get("/exhaustive?campaign=docs").status_code == 200    # the rule afresh
    r = _post(ann, "/exhaustive/mentions", tok, unit="d1", mentions=json.dumps([ANN]))
    assert r.status_code == 303


def test_no_sentence_split_after_an_abbreviation_or_an_initial():
    """A split inside a sentence hides its pairs: "Mr.", "Inc." and initials end no sentence
    (the naive split before Punkt cut these two in six and offered 1 of the 4 pairs)."""
    from assay.service import exhaustive_model as em
    text = "Mr. Lee joined Acme Inc. in 2010. J. R. Ewing lives in Dallas."
    assert [text[a:b] for a, b in em.sentences(text)] == [
        "Mr. Lee joined Acme Inc. in 2010. ", "J. R. Ewing lives in Dallas."]
    ms = em.resolve([{"text": "Lee", "type": "PER"}, {"text": "Acme Inc.", "type": "ORG"},
                     {"text": "2010", "type": "DATE"}, {"text": "J. R. Ewing", "type": "PER"},
                     {"text": "Dallas", "type": "GPE"}], text)
    assert [(t.first, t.second) for t in em.pair_tasks(ms, text)] == [
        (0, 1), (0, 2), (1, 2), (3, 4)]
    assert em.sentences("It rained.") == [(0, 10)] and em.sentences("") == [(0, 0)]
