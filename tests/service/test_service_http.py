"""The service over HTTP (FastAPI's TestClient): the whole submission flow, who may reach what
(every endpoint for every role), CSRF, revoked tokens and sessions, bad uploads (one line naming
the file and line, nothing kept), the daily limit, undo and k annotators per item."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from assay.service import jobs, queue
from assay.service.auth import user_by_name
from assay.service.schema import audit_table, submissions_table

from service_helpers import csrf_of, make_service


def _submit(c, svc, k=0, system="sysA", name="a.csv", data=None):
    return c.post("/submit", data={"csrf": csrf_of(c, "/submit"), "campaign": "kb",
                                   "system": system, "key": "item"},
                  files={"file": (name, data if data is not None else svc.output_csv(k),
                                  "text/csv")})


def _label_all(c, svc, who="ann1"):
    """Label every item the page offers, by the truth; returns how many."""
    token = re.search(r'"X-CSRF-Token": "([^"]+)"', c.get("/annotate?campaign=kb").text).group(1)
    n = 0
    while True:
        page = c.get("/annotate/item?campaign=kb").text
        m = re.search(r'data-item="([^"]*)"', page)
        if m is None:
            return n
        item = m.group(1).replace("&#9;", "\t")
        r = c.post("/annotate/label", data={"campaign": "kb", "item": item,
                                            "value": "y" if svc.truth[item] else "n"},
                   headers={"X-CSRF-Token": token})
        assert r.status_code == 200, r.text
        n += 1


def test_submission_flow_to_scores(service):
    alice, ann = service.client("alice"), service.client("ann1")
    r = _submit(alice, service)
    assert r.status_code == 303 and r.headers["location"].startswith("/submissions/")
    sid = int(r.headers["location"].rsplit("/", 1)[1])
    for _ in range(8):
        jobs.run_pending(service.store)
        if jobs.submission(service.store.engine, sid).state == "done":
            break
        assert _label_all(ann, service) > 0
    assert jobs.submission(service.store.engine, sid).state == "done"
    page = alice.get("/scores?campaign=kb")
    assert page.status_code == 200 and "t1/sysA" in page.text
    assert re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", page.text)
    png = alice.get("/scores/plot.png?campaign=kb")
    assert png.status_code == 200 and png.content[:4] == b"\x89PNG"
    assert "t1/sysA" not in service.client("bob").get("/scores?campaign=kb").text
    for level in ("relation", "entity"):                # seed 001's other levels, same labels
        page = alice.get(f"/scores?campaign=kb&level={level}")
        assert page.status_code == 200 and "t1/sysA" in page.text, page.text[-400:]
        got = alice.get(f"/api/scores?campaign=kb&level={level}").json()
        assert [s["system"] for s in got["systems"]] == ["t1/sysA"]
        assert alice.get(f"/scores/plot.png?campaign=kb&level={level}").status_code == 200
    r = alice.get("/api/scores?campaign=kb&level=document")
    assert r.status_code == 400 and "instance, relation, entity" in r.json()["error"]
    # the annotator never saw a system name; every label is in the audit log and the store
    with service.store.engine.connect() as conn:
        logged = conn.execute(select(func.count()).select_from(audit_table).where(
            audit_table.c.action == "label")).scalar_one()
    assert logged == len(service.store.judgments("kb", "ann1")) > 0
    import csv, io                                          # the log, exported (admins only)
    root = service.client("root")
    got = list(csv.DictReader(io.StringIO(root.get("/api/audit?campaign=kb&user=ann1").text)))
    assert sum(r["action"] == "label" for r in got) == logged
    assert {r["item"] for r in got if r["action"] == "label"} == {
        j.item for j in service.store.judgments("kb", "ann1")}
    page = list(csv.DictReader(io.StringIO(root.get(
        f"/api/audit?campaign=kb&user=ann1&after={got[0]['id']}&limit=2").text)))
    assert [r["id"] for r in page] == [r["id"] for r in got[1:3]]
    assert root.get("/api/audit?limit=0").status_code == 400


ENDPOINTS = [("GET", "/annotate"), ("GET", "/annotate/item?campaign=kb"),
             ("GET", "/scores?campaign=kb"), ("GET", "/submit"), ("GET", "/admin"),
             ("GET", "/api/labels?campaign=kb"), ("GET", "/api/quality?campaign=kb"),
             ("GET", "/api/queue/next?campaign=kb"), ("GET", "/api/scores?campaign=kb"),
             ("GET", "/exhaustive?campaign=kb")]
# who may reach each endpoint (else 403; anonymous: 303 to the log-in page or 401)
ALLOWED = {"/annotate": {"root", "ann1"}, "/annotate/item": {"root", "ann1"},
           "/scores": {"root", "alice"}, "/submit": {"root", "alice"}, "/admin": {"root"},
           "/api/labels": {"root"}, "/api/quality": {"root"}, "/api/queue/next": {"root", "ann1"},
           "/api/scores": {"root", "alice"}, "/exhaustive": {"root", "ann1"}}


@pytest.mark.parametrize("who", ["root", "alice", "ann1", None])
def test_every_endpoint_for_every_role(service, who):
    c = service.client(who)
    for method, path in ENDPOINTS:
        r = c.request(method, path)
        base = path.split("?")[0]
        if who is None:
            assert r.status_code in (303, 401), (path, r.status_code)
        elif who in ALLOWED[base]:
            assert r.status_code == 200, (who, path, r.status_code, r.text[:200])
        else:
            assert r.status_code == 403, (who, path, r.status_code)


def test_submitter_never_sees_a_label_or_another_teams_output(service):
    alice, bob, ann = service.client("alice"), service.client("bob"), service.client("ann1")
    _submit(alice, service, 0)
    _submit(bob, service, 1, system="sysB")
    jobs.run_pending(service.store)
    _label_all(ann, service)
    jobs.run_pending(service.store)
    for path in ("/api/labels?campaign=kb", "/api/quality?campaign=kb",
                 "/api/queue/next?campaign=kb", "/annotate/item?campaign=kb"):
        assert alice.get(path).status_code == 403
    got = alice.get("/api/scores?campaign=kb").json()
    assert [s["system"] for s in got["systems"]] == ["t1/sysA"]
    assert "consensus" not in str(got) and "seed" not in got["campaign"]
    sid_bob = next(s for s in range(1, 3)
                   if jobs.submission(service.store.engine, s).team == "t2")
    assert alice.get(f"/api/submissions/{sid_bob}").status_code == 404
    assert alice.get(f"/submissions/{sid_bob}").status_code == 404
    item = next(iter(queue.decided(service.store, "kb")))
    assert item not in alice.get("/scores?campaign=kb").text


def test_csrf_rejected(service):
    alice, ann = service.client("alice"), service.client("ann1")
    r = alice.post("/submit", data={"campaign": "kb", "system": "x"},
                   files={"file": ("a.csv", service.output_csv(0), "text/csv")})
    assert r.status_code == 403 and "CSRF" in r.text
    r = ann.post("/annotate/label", data={"campaign": "kb", "item": "x", "value": "y"},
                 headers={"X-CSRF-Token": "wrong"})
    assert r.status_code == 403
    assert service.client().post("/login", data={"name": "alice", "password": "x"}
                                 ).status_code == 403
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(submissions_table)).scalar() == 0


def test_revoked_token_and_session_fail(service):
    alice = service.client("alice")
    page = alice.post("/tokens", data={"csrf": csrf_of(alice), "label": "ci"})
    secret = re.search(r'id="secret">([^<]+)<', page.text).group(1)
    api = service.client()
    head = {"Authorization": f"Bearer {secret}"}
    assert api.get("/api/scores?campaign=kb", headers=head).status_code == 200
    tid = int(re.search(r"<tr><td>(\d+)</td><td>ci</td>", page.text).group(1))
    r = api.post(f"/tokens/{tid}/revoke", headers=head)
    assert r.status_code == 200
    assert api.get("/api/scores?campaign=kb", headers=head).status_code == 401
    from assay.service.auth import revoke_sessions
    assert revoke_sessions(service.store.engine, "alice") == 1
    assert alice.get("/scores?campaign=kb").status_code == 303


def test_bad_uploads_one_line_nothing_kept(service, monkeypatch):
    alice = service.client("alice")
    r = _submit(alice, service, data=b"item,unit\nk1,u1\n ,u2\n", name="out.csv")
    assert r.status_code == 400
    err = re.search(r'id="error">([^<]*)<', r.text).group(1)
    assert err.startswith("out.csv, line 3: empty key") and "\n" not in err
    r = alice.post("/api/submissions", headers={"X-CSRF-Token": csrf_of(alice)},
                   data={"campaign": "kb", "system": "s", "key": "nope"},
                   files={"file": ("o.csv", b"item\nk1\n", "text/csv")})
    assert r.status_code == 400 and r.json()["error"].startswith("o.csv: no column 'nope'")
    monkeypatch.setattr(jobs, "MAX_UPLOAD_BYTES", 10)
    r = _submit(alice, service, name="big.csv")
    assert r.status_code == 400 and "big.csv" in r.text and "at most 10 bytes" in r.text
    r = _submit(alice, service, data=b"\x00\x01", name="x.exe")
    assert r.status_code == 400 and "x.exe" in r.text
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(submissions_table)).scalar() == 0


def test_oversized_bodies_refused_before_they_are_read(service, monkeypatch):
    """A body past the cap is answered 413 with one line, whether its length is declared or it
    streams (chunked, no Content-Length), on the pages and the API; nothing is kept."""
    from assay.service import limits
    monkeypatch.setattr(jobs, "MAX_UPLOAD_BYTES", 1000)
    monkeypatch.setattr(limits, "OVERHEAD", 1000)
    alice = service.client("alice")
    big = b"item\n" + b"k" * 5000 + b"\n"
    r = _submit(alice, service, data=big, name="big.csv")           # declared length
    assert r.status_code == 413 and r.text.count("\n") == 1 and "at most 2,000 bytes" in r.text
    root = service.client("root")
    token = csrf_of(root)

    def chunks():
        for _ in range(50):
            yield b"x" * 100
    for path, ctype in (("/api/submissions", "multipart/form-data; boundary=b"),
                        ("/api/labels", "application/json"),
                        ("/api/labelstudio/import?campaign=kb", "application/json")):
        r = root.post(path, headers={"X-CSRF-Token": token, "content-type": ctype},
                      content=chunks())                                # streamed, no length
        assert r.status_code == 413, (path, r.status_code)
        assert "request body too large" in r.json()["error"]
    r = root.post("/api/labels", headers={"X-CSRF-Token": token, "content-length": "12x"},
                  content=b"{}")
    assert r.status_code == 413
    monkeypatch.undo()
    assert _submit(alice, service).status_code == 303                  # within the cap: as before
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(submissions_table)).scalar() == 1


def test_daily_limit_per_team(service):
    alice = service.client("alice")
    assert _submit(alice, service, 0, system="a1").status_code == 303
    assert _submit(alice, service, 1, system="a2").status_code == 303
    r = _submit(alice, service, 0, system="a3")
    assert r.status_code == 400 and "at most 2 a day" in r.text
    assert _submit(service.client("bob"), service, 0, system="b1").status_code == 303


def test_three_annotators_third_only_on_disagreement_and_undo(tmp_path):
    svc = make_service(tmp_path, k=3)
    alice = svc.client("alice")
    _submit(alice, svc)
    jobs.run_pending(svc.store)
    first = queue.next_item(svc.store, svc.camp.row, "ann1")
    queue.vote(svc.store, svc.camp.row, "ann1", first, 1)
    assert queue.undo(svc.store, svc.camp.row, "ann1") == first
    queue.vote(svc.store, svc.camp.row, "ann1", first, 1)
    queue.vote(svc.store, svc.camp.row, "ann1", first, 0)      # a re-post: the first stays
    assert svc.store.labels("kb", "ann1")[first] == 1
    queue.vote(svc.store, svc.camp.row, "ann2", first, 0)      # disagreement: a third
    assert first not in queue.decided(svc.store, "kb")
    queue.vote(svc.store, svc.camp.row, "root", first, 1)
    assert queue.decided(svc.store, "kb")[first] == 1
    with pytest.raises(queue.QueueError):
        queue.undo(svc.store, svc.camp.row, "root")             # decided: no undo
    second = queue.next_item(svc.store, svc.camp.row, "ann1")
    for who in ("ann1", "ann2"):
        queue.vote(svc.store, svc.camp.row, who, second, 0)
    assert queue.decided(svc.store, "kb")[second] == 0          # two agree: decided
    q = svc.client("root").get("/api/quality?campaign=kb").json()
    assert q["labels"] == 5 and {a["name"] for a in q["annotators"]} == {"ann1", "ann2", "root"}


def test_relation_item_shows_its_sentence_highlighted(service):
    from assay.service import views
    data = (b"item,unit,subject,relation,object\n"
            + b"".join(f"r{i},d{i},Ann Lee,employer,Acme {i}\n".encode() for i in range(12)))
    queue.set_settings(service.store, "kb", queue.Settings(k=1, daily_limit=2, min_output=10))
    views.add_records(service.store, "kb", [{"id": f"d{i}", "sentence":
                                             f"Ann Lee has worked at Acme {i} since <2010>."}
                                            for i in range(12)])
    alice = service.client("alice")
    assert _submit(alice, service, data=data, name="rel.csv").status_code == 303
    jobs.run_pending(service.store)
    page = service.client("ann1").get("/annotate/item?campaign=kb").text
    assert "<mark>Ann Lee</mark> has worked at <mark>Acme" in page
    assert "&lt;2010&gt;" in page and "t1/" not in page


def test_records_upload(service):
    root = service.client("root")
    head = {"X-CSRF-Token": csrf_of(root)}
    r = root.post("/api/records?campaign=kb", headers=head,
                  files={"file": ("recs.csv", b"id,name\nL1,Store 1\nR1,Store #1\n", "text/csv")})
    assert r.status_code == 201 and r.json()["records"] == 2
    r = root.post("/api/records?campaign=kb", headers=head,
                  files={"file": ("recs.csv", b"key,name\nL1,x\n", "text/csv")})
    assert r.status_code == 400 and r.json()["error"].startswith("recs.csv: no column 'id'")
    alice = service.client("alice")
    r = alice.post("/api/records?campaign=kb", headers={"X-CSRF-Token": csrf_of(alice)},
                   files={"file": ("recs.csv", b"id\nx\n", "text/csv")})
    assert r.status_code == 403


def test_admin_forms(service):
    root = service.client("root")
    tok = csrf_of(root, "/admin")
    r = root.post("/admin/campaign", data={"csrf": tok, "name": "c2", "half_width": "0.1",
                                           "k": "3", "daily_limit": "4"})
    assert r.status_code == 303 and queue.settings(service.store.engine, "c2").daily_limit == 4
    assert root.post("/admin/campaign", data={"csrf": tok, "name": "c2"}).status_code == 400
    r = root.post("/admin/user", data={"csrf": tok, "name": "carol", "role": "annotator",
                                       "password": "long enough pw"})
    assert r.status_code == 303
    carol = service.client()
    from service_helpers import login
    login(carol, "carol", "long enough pw")
    assert carol.get("/annotate").status_code == 200
    assert root.post("/admin/revoke-sessions", data={"csrf": tok, "name": "carol"}
                     ).status_code == 303
    assert carol.get("/annotate").status_code == 303
    assert root.post("/admin/user", data={"name": "x", "role": "admin", "password": "y" * 9}
                     ).status_code == 403                                   # no CSRF token


POSTS = ["/annotate/label", "/annotate/undo", "/submit", "/admin/campaign", "/admin/user",
         "/admin/revoke-sessions", "/api/submissions", "/api/labels", "/api/undo",
         "/api/records?campaign=kb", "/api/gold?campaign=kb",
         "/api/labelstudio/import?campaign=kb"]
POST_ALLOWED = {"/annotate/label": {"root", "ann1"}, "/annotate/undo": {"root", "ann1"},
                "/submit": {"root", "alice"}, "/api/submissions": {"root", "alice"},
                "/api/labels": {"root", "ann1"}, "/api/undo": {"root", "ann1"}}
MORE_GETS = {"/api/costs?campaign=kb": {"root"}, "/api/labelstudio/export?campaign=kb": {"root"},
             "/api/submissions/1": {"root", "alice"}}


@pytest.mark.parametrize("who", ["root", "alice", "ann1", None])
def test_every_post_and_api_endpoint_for_every_role_by_token(service, who):
    """With an API token (no cookie, so no CSRF token needed): a role not allowed gets 403,
    anonymous 401 (API) or a redirect to the log-in page; an allowed role gets past the check
    (its empty or odd body may then be a 400/404, never a 401/403 or a 5xx)."""
    from assay.service.auth import new_token
    jobs.submit(service.store, user_by_name(service.store.engine, "alice"), "kb", "s", "a.csv",
                service.output_csv(0))
    c, engine = service.client(), service.store.engine
    head = ({} if who is None else
            {"Authorization": f"Bearer {new_token(engine, user_by_name(engine, who))[1]}"})
    for path in POSTS:
        r = c.post(path, headers=head, json={"campaign": "kb"} if "/api/" in path else None)
        allowed = POST_ALLOWED.get(path.split("?")[0], {"root"})
        if who is None:
            assert r.status_code in (303, 401), (path, r.status_code)
        elif who in allowed:
            assert r.status_code not in (401, 403) and r.status_code < 500, (who, path, r.text)
        else:
            assert r.status_code == 403, (who, path, r.status_code)
    for path, allowed in MORE_GETS.items():
        r = c.get(path, headers=head)
        if who is None:
            assert r.status_code == 401, path
        elif who in allowed:
            assert r.status_code == 200, (who, path, r.text[:200])
        else:
            assert r.status_code in (403, 404), (who, path, r.status_code)


def test_exhaustive_bad_input_and_roles(service):
    import json
    from assay.ondemand import OnDemandCampaign
    from assay.service import views
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=10)
    views.add_records(service.store, "docs", [{"id": "d1", "text": "Ann Lee joined Acme."}])
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    bad = {"csrf": tok, "campaign": "docs", "unit": "d1",
           "mentions": json.dumps([{"text": "Bob", "type": "PER"}]), "relations": "[]"}
    r = ann.post("/exhaustive", data=bad)
    from html import unescape
    assert r.status_code == 400 and "mention 1: 'Bob' is not in the text" in unescape(r.text)
    bad["mentions"] = json.dumps([{"text": "Ann Lee", "type": "CAT"}])
    assert "type 'CAT'" in unescape(ann.post("/exhaustive", data=bad).text)
    assert service.client("alice").get("/exhaustive?campaign=docs").status_code == 403
    del bad["csrf"]
    assert ann.post("/exhaustive", data=bad).status_code == 403
    docs = OnDemandCampaign.open(service.store, "docs")
    assert docs.od.units(docs.row.id) == {}


def test_failed_logins_are_limited(service):
    from assay.service.auth import FAILED_LOGINS
    from service_helpers import PASSWORD, login
    c = service.client()
    for _ in range(FAILED_LOGINS):
        page = c.get("/login")
        tok = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        assert c.post("/login", data={"name": "bob", "password": "nope", "csrf": tok}
                      ).status_code == 401
    tok = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)
    r = c.post("/login", data={"name": "bob", "password": PASSWORD, "csrf": tok})
    assert r.status_code == 429 and "too many failed log-ins" in r.text
    login(service.client(), "alice")                       # another user is not affected
    from fastapi.testclient import TestClient

    from assay.service.app import create_app
    elsewhere = TestClient(create_app(service.store), follow_redirects=False,
                           client=("10.0.0.9", 4000))
    login(elsewhere, "bob")             # the lockout is per (name, client): bob logs in elsewhere


def test_team_names_validated_and_visibility_by_team_prefix(service):
    from assay.errors import AssayInputError
    from assay.service import auth, views
    with pytest.raises(AssayInputError):
        auth.add_user(service.store.engine, "eve", "submitter", "correct horse battery", "t1/x")
    t = auth.User(99, "tt", "submitter", "t")
    assert views.visible(t, "t/sys") and not views.visible(t, "t1/sys")
    assert not views.visible(t, "t") and not views.visible(auth.User(98, "a", "annotator", None),
                                                            "t/sys")


def test_mentions_kept_and_clustered_across_documents(service):
    import json
    from assay.ondemand import OnDemandCampaign
    from assay.service import views
    from assay.service.schema import mentions_table
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=10)
    views.add_records(service.store, "docs", [{"id": "d1", "text": "Ann Lee met Bo."},
                                              {"id": "d2", "text": "Ms Lee left."}])
    ann = service.client("ann1")
    tok = csrf_of(ann, "/exhaustive?campaign=docs")
    for unit, ms in (("d1", [{"text": "Ann Lee", "type": "PER"},
                             {"text": "Bo", "type": "PER", "link": "KB:7"}]),
                     ("d2", [{"text": "Ms Lee", "type": "PER"}])):
        r = ann.post("/exhaustive", data={"csrf": tok, "campaign": "docs", "unit": unit,
                                          "mentions": json.dumps(ms), "relations": "[]"})
        assert r.status_code == 303, r.text
    page = ann.get("/clusters?campaign=docs").text
    ids = [int(x) for x in re.findall(r'name="cluster_(\d+)"', page)]
    assert len(ids) == 2 and "Bo" not in re.findall(r"<td>([^<]*)</td>", page)   # linked
    r = ann.post("/clusters", data={"csrf": tok, "campaign": "docs",
                                    **{f"cluster_{i}": "Ann Lee (1)" for i in ids}})
    assert r.status_code == 303
    with service.store.engine.connect() as conn:
        got = conn.execute(select(mentions_table.c.unit, mentions_table.c.cluster).where(
            mentions_table.c.link.is_(None))).all()
    assert sorted(got) == [("d1", "Ann Lee (1)"), ("d2", "Ann Lee (1)")]
    assert ann.post("/clusters", data={"campaign": "docs"}).status_code == 403    # no CSRF
    assert service.client("alice").get("/clusters?campaign=docs").status_code == 403
    OnDemandCampaign.create(service.store, "nocorpus", annotator="consensus")
    views.add_records(service.store, "nocorpus", [{"id": "d1", "text": "x"}])
    r = ann.post("/exhaustive", data={"csrf": tok, "campaign": "nocorpus", "unit": "d1",
                                      "mentions": "[]", "relations": "[]"})
    assert r.status_code == 400 and "corpus" in r.text
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(mentions_table).where(
            mentions_table.c.campaign == "nocorpus")).scalar() == 0


def test_a_token_cannot_mint_tokens(service):
    """A leaked API token must not create tokens that outlive its revocation: tokens are made
    only from a logged-in session with its CSRF token."""
    from assay.service import auth
    u = auth.user_by_name(service.store.engine, "alice")
    tid, stolen = auth.new_token(service.store.engine, u, "ci")
    api = service.client()
    r = api.post("/tokens", headers={"Authorization": f"Bearer {stolen}"})
    assert r.status_code == 403
    alice = service.client("alice")
    assert alice.post("/tokens", data={"label": "x"}).status_code in (400, 403)   # no CSRF
    from sqlalchemy import func, select

    from assay.service.schema import tokens_table
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tokens_table)).scalar() == 1


def test_tiny_output_refused_min_output(service):
    """Leaderboard probing: an output of one item would have its precision read off as that
    item's label; outputs under the campaign's min_output (20 by default) are refused with one
    line and nothing kept."""
    assert queue.settings(service.store.engine, "kb").min_output == 20
    alice = service.client("alice")
    tok = csrf_of(alice, "/submit")
    small = ("item\n" + "\n".join(service.keys[:19]) + "\n").encode()
    r = alice.post("/api/submissions", headers={"X-CSRF-Token": tok},
                   data={"campaign": "kb", "system": "probe"}, files={"file": ("o.csv", small)})
    assert r.status_code == 400 and "at least 20" in r.text and "\n" not in r.json()["error"]
    with service.store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(submissions_table)).scalar() == 0
    ok = ("item\n" + "\n".join(service.keys[:20]) + "\n").encode()
    r = alice.post("/api/submissions", headers={"X-CSRF-Token": tok},
                   data={"campaign": "kb", "system": "fine"}, files={"file": ("o.csv", ok)})
    assert r.status_code == 202, r.text
    assert jobs.submission(service.store.engine, r.json()["id"]).state == "pending"


def test_concurrent_annotators_get_different_documents(service):
    """Exhaustive annotation: each document shown is leased to its annotator, so two
    annotators are not both given the first document; a reload shows the same one."""
    from assay.ondemand import OnDemandCampaign
    from assay.service import views
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=10)
    views.add_records(service.store, "docs", [{"id": f"d{i}", "text": f"Ann Lee {i}."}
                                              for i in range(3)])
    unit = re.compile(r'id="doc" data-unit="([^"]+)"')
    a1, a2 = service.client("ann1"), service.client("ann2")
    u1 = unit.search(a1.get("/exhaustive?campaign=docs").text).group(1)
    u2 = unit.search(a2.get("/exhaustive?campaign=docs").text).group(1)
    assert u1 != u2
    assert unit.search(a1.get("/exhaustive?campaign=docs").text).group(1) == u1
