"""A campaign killed mid-submission (SIGKILL of the process, after its k-th label: in the first
submission, or in the second after the first finished) resumes with no label lost or asked twice,
and ends with the draws and estimates of an uninterrupted run. Killed while a question is
outstanding (the item claimed, its answer not yet in the store): the dead process's claim is
taken over and that one item is asked again — its answer never reached the store, so nothing is
lost — and no other item is asked twice."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from assay.labels.sources import CallableLabels
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.ondemand.simulate import world

M = 3

CHILD = textwrap.dedent("""
    import os, signal, sys
    from assay.labels.sources import CallableLabels
    from assay.labels.store import LabelStore
    from assay.ondemand import OnDemandCampaign
    from assay.ondemand.simulate import world
    db, log, kill_after, during = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    w = world(5, m={m})
    keys = w.keys()
    gold = {{k: int(t) for k, t in zip(keys, w.truth)}}
    def ask(k):
        with open(log, "a") as fh:
            fh.write(k + "\\n")
        if during == "during" and sum(1 for _ in open(log)) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)       # asked, the answer never recorded
        return gold[k]
    camp = OnDemandCampaign.open(LabelStore(db), "kbp")
    def die(key, asked):
        if sum(1 for _ in open(log)) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    camp.observer = die
    for k in range({m}):
        camp.submit(f"s{{k}}", keys[w.memb[:, k]], CallableLabels(ask, "gold"))
""").format(m=M)


class Log(CallableLabels):
    def __init__(self, gold):
        super().__init__(lambda k: gold[k], "gold")
        self.asked = []

    def label(self, index, key):
        self.asked.append(key)
        return super().label(index, key)


def _campaign(db):
    return OnDemandCampaign.create(LabelStore(db), "kbp", corpus_units=500, seed=3,
                                   half_width=0.06)


@pytest.mark.parametrize("kill_after,during", [
    (7, "after"), pytest.param(230, "after", marks=pytest.mark.slow),   # 173 labels: s0's
    pytest.param(190, "during", marks=pytest.mark.slow)])
def test_killed_campaign_resumes_without_loss_or_repeat(tmp_path, kill_after, during):
    w = world(5, m=M)
    keys = w.keys()
    gold = {k: int(t) for k, t in zip(keys, w.truth)}
    db, log = tmp_path / "killed.db", tmp_path / "asked.log"
    _campaign(db)
    log.write_text("")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(db), str(log), str(kill_after),
                           during],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    before = log.read_text().split()
    assert len(before) == kill_after == len(set(before))
    camp = OnDemandCampaign.open(LabelStore(db), "kbp")
    src = Log(gold)
    for k in range(M):
        camp.submit(f"s{k}", keys[w.memb[:, k]], src)
    answered = before if during == "after" else before[:-1]
    if during == "during":                              # the outstanding question, once more
        assert before[-1] in src.asked and before[-1] not in answered
    assert not set(answered) & set(src.asked)           # nothing answered is asked twice
    assert len(src.asked) == len(set(src.asked))
    stored = LabelStore(db).labels("kbp", "gold")
    assert set(stored) == set(answered) | set(src.asked)  # nothing lost
    drawn = set(camp.od.draws(camp.row.id)["item"])
    assert drawn == set(stored)

    whole = _campaign(tmp_path / "whole.db")
    for k in range(M):
        whole.submit(f"s{k}", keys[w.memb[:, k]], Log(gold))
    assert camp.od.draws(camp.row.id)["item"].tolist() == \
        whole.od.draws(whole.row.id)["item"].tolist()
    a, b = camp.report().to_dict(), whole.report().to_dict()
    assert a["systems"] == b["systems"] and a["labels_total"] == b["labels_total"]
