"""Gold questions: uploaded by an admin, shown every 10th answer among the queued items, kept
apart from the votes (never a vote on a real item), undone like any answer, each annotator's
accuracy in the quality report; the migration from revision 0001 adds their table."""
from __future__ import annotations

from assay.labels.store import LabelStore
from assay.service import gold, jobs, migrate, queue
from assay.service.auth import user_by_name

from service_helpers import csrf_of


def test_gold_questions(service):
    jobs.submit(service.store, user_by_name(service.store.engine, "alice"), "kb", "sysA",
                "a.csv", service.output_csv(0))
    jobs.run_pending(service.store)
    queue.enqueue(service.store, "kb", [f"x{i}" for i in range(30)], 1)   # enough real items
    root = service.client("root")
    r = root.post("/api/gold?campaign=kb", headers={"X-CSRF-Token": csrf_of(root)},
                  files={"file": ("g.csv", b"item,label\ngold1,1\ngold2,0\n", "text/csv")})
    assert r.status_code == 201 and r.json()["gold"] == 2
    r = root.post("/api/gold?campaign=kb", headers={"X-CSRF-Token": csrf_of(root)},
                  files={"file": ("g.csv", b"item,label\ngold3,2\n", "text/csv")})
    assert r.status_code == 400 and r.json()["error"].startswith("g.csv, line 2")
    row, shown = service.camp.row, []
    for _ in range(gold.EVERY * 2):
        item = queue.next_item(service.store, row, "ann1")
        shown.append(item)
        value = 0 if item == "gold1" else service.truth.get(item, 0)   # gold1 answered wrong
        queue.vote(service.store, row, "ann1", item, value)
    assert shown[gold.EVERY - 1] == "gold1" and shown[2 * gold.EVERY - 1] == "gold2"
    assert "gold1" not in service.store.labels("kb", "ann1")          # not a vote
    assert queue.undo(service.store, row, "ann1") == "gold2"
    assert queue.next_item(service.store, row, "ann1") == "gold2"     # shown again
    q = root.get("/api/quality?campaign=kb").json()
    ann1 = next(a for a in q["annotators"] if a["name"] == "ann1")
    assert (ann1["gold_answered"], ann1["gold_correct"]) == (1, 0)


def test_migration_0001_to_head(tmp_path):
    store = LabelStore(tmp_path / "s.db")
    migrate.upgrade(store.engine, "0001")
    assert migrate.current(store.engine) == "0001"
    assert migrate.upgrade(store.engine) == "0001"
    assert migrate.current(store.engine) == migrate.head() == "0008"
    assert gold.add_gold(store, "c", {"x": 1}) == 1


def test_costs_per_submission(service):
    alice = user_by_name(service.store.engine, "alice")
    jobs.submit(service.store, alice, "kb", "a", "a.csv", service.output_csv(0))
    jobs.submit(service.store, alice, "kb", "b", "b.csv", service.output_csv(1))
    jobs.run_pending(service.store)
    row = service.camp.row
    while (item := queue.next_item(service.store, row, "ann1")) is not None:
        queue.vote(service.store, row, "ann1", item, service.truth[item])
    root = service.client("root")
    got = root.get("/api/costs?campaign=kb&price=0.5").json()
    a, b = got["submissions"]
    assert (a["system"], b["system"]) == ("t1/a", "t1/b")
    assert a["items"] == a["new_items"] > 0 and b["new_items"] <= b["items"]
    assert got["answers"] == len(service.store.judgments("kb", "ann1"))
    assert got["cost"] == 0.5 * got["answers"] and a["cost"] == 0.5 * a["answers"]
    assert service.client("alice").get("/api/costs?campaign=kb").status_code == 403


def test_dawid_skene_aggregation_and_migration_0003(tmp_path):
    """A campaign aggregating by Dawid-Skene answers a decided item with crowd-kit's
    Dawid-Skene label over every vote of the campaign; a bad setting on the admin form creates
    no campaign; revision 0003 gives an older campaign's settings the majority."""
    from service_helpers import make_service
    svc = make_service(tmp_path, k=3)
    queue.set_settings(svc.store, "kb", queue.Settings(3, 5, "dawid-skene"))
    assert queue.settings(svc.store.engine, "kb").aggregation == "dawid-skene"
    items = [f"z{i}" for i in range(12)]
    queue.enqueue(svc.store, "kb", items, 3)
    row = svc.camp.row
    for i, item in enumerate(items):
        for who, v in (("ann1", i % 2), ("root", 1), ("ann2", i % 2)):
            if who == "ann2" and item in queue.decided(svc.store, "kb"):
                continue                        # a vote on a decided item is refused (409)
            queue.vote(svc.store, row, who, item, v)
    ds = jobs.dawid_skene(svc.store, "kb")
    src = jobs.QueueSource(svc.store, "kb", "consensus", "dawid-skene")
    assert [src.label(0, i) for i in items] == [ds[i] for i in items] == [i % 2 for i in
                                                                            range(12)]
    root = svc.client("root")
    r = root.post("/admin/campaign", data={"csrf": csrf_of(root, "/admin"), "name": "zz",
                                           "aggregation": "median"})
    assert r.status_code == 400 and "median" in r.text
    from assay.service.views import campaigns
    assert "zz" not in campaigns(svc.store)
    store = LabelStore(tmp_path / "other.db")
    migrate.upgrade(store.engine, "0002")
    with store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO assay_svc_campaign_settings (campaign, k, daily_limit)"
                             " VALUES ('old', 2, 4)")
    assert migrate.upgrade(store.engine) == "0002"
    assert queue.settings(store.engine, "old") == queue.Settings(2, 4, "majority", 20)


def test_a_gold_question_is_never_a_queued_item(service):
    """A gold upload naming a queued item is refused (one line, nothing kept); an item a
    submission queues stops being a gold question; and a gold question the annotator already
    answered as a vote (a store from before this rule) is never shown again."""
    from assay.service.schema import gold_table
    store, row = service.store, service.camp.row
    items = [f"i{n}" for n in range(30)]
    queue.enqueue(store, "kb", items, 3)
    root = service.client("root")
    r = root.post("/api/gold?campaign=kb", headers={"X-CSRF-Token": csrf_of(root)},
                  files={"file": ("g.csv", b"item,label\ng1,1\ni25,1\n", "text/csv")})
    assert r.status_code == 400 and "'i25' is in the annotation queue" in r.json()["error"]
    with store.engine.connect() as conn:
        assert conn.execute(gold_table.select()).all() == []
    gold.add_gold(store, "kb", {"g9": 1})
    queue.enqueue(store, "kb", ["g9"], 3)
    with store.engine.connect() as conn:
        assert conn.execute(gold_table.select()).all() == []
    with store.engine.begin() as conn:                      # the overlap, as an old store has it
        conn.execute(gold_table.insert().values(campaign="kb", item="i25", value=1))
    seen = []
    for _ in range(25):
        it = queue.next_item(store, row, "ann1")
        seen.append(it)
        queue.vote(store, row, "ann1", it, 1)
    assert len(seen) == len(set(seen)) == 25


def test_dawid_skene_overturns_a_two_to_one_majority(tmp_path):
    """Two annotators who say 1 whatever the item, one who is right: on the item where the two
    outvote the third, the majority decides 1 and Dawid-Skene (crowd-kit, over every vote of the
    campaign) answers 0, which is what the job records."""
    from assay.service import auth
    from service_helpers import make_service
    svc = make_service(tmp_path, k=3)
    auth.add_user(svc.store.engine, "ann3", "annotator", "correct horse battery")
    queue.set_settings(svc.store, "kb", queue.Settings(3, 5, "dawid-skene"))
    row = svc.camp.row
    plan = ([("ann2", 1), ("ann1", 0), ("root", 0)],) * 12 + \
           ([("ann3", 1), ("ann1", 0), ("root", 0)],) * 12 + \
           ([("ann2", 1), ("ann1", 1)],) * 6 + ([("ann3", 1), ("root", 1)],) * 6 + \
           ([("ann2", 1), ("ann1", 0), ("ann3", 1)],)            # the target: 2-1 for 1
    items = [f"w{i}" for i in range(len(plan))]
    queue.enqueue(svc.store, "kb", items, 3)
    for item, votes in zip(items, plan):
        for who, v in votes:
            queue.vote(svc.store, row, who, item, v)
    target = items[-1]
    assert queue.decided(svc.store, "kb")[target] == 1              # the majority
    assert jobs.dawid_skene(svc.store, "kb")[target] == 0
    assert jobs.QueueSource(svc.store, "kb", "consensus", "dawid-skene").label(0, target) == 0
    assert jobs.QueueSource(svc.store, "kb", "consensus", "majority").label(0, target) == 1
