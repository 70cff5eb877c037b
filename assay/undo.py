"""Taking answers back: the undo of a judgment or of a skip, and the replay of a stored run
whose skips were undone (a part of :class:`assay.campaign.Campaign`).

An undo withdraws the annotator's most recent entry in the campaign and asks the item again. An
undone *judgment* answered anew replaces the item's label in every draw of it. An undone *skip*
answered with a value reinstates the skipped draw: it joins the sample at the place where it was
answered, stored with kind ``reinstated``. The design had already planned a replacement for it;
keeping both is still a valid sample (see :meth:`Undoing._reinstate`).

An undone entry stays stored until the item is answered again (a value replaces it, a skip
keeps it): a session that stops in between loses the undo, never a label. A resumed run
replays the design: an item drawn before its stored ``reinstated`` place is skipped again (so
the design plans the same replacement) and taken at that place, in the order the live run took
it (before the next draw when the live run had finished its budget, else after it).

>>> REINSTATED
'reinstated'
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.types import Draw
from assay.core.vote import NO_LABEL, panel_decision
from assay.labels.store import Judgment, Status

if TYPE_CHECKING:       # pragma: no cover
    from assay.campaign import Campaign

_SKIP = -1
REINSTATED = "reinstated"      # the stored kind of a draw whose skip was undone


class Undoing:
    """Undo and reinstatement; mixed into :class:`assay.campaign.Campaign` (uses its state)."""

    def _replay_skip(self: "Campaign", d: Draw) -> bool:
        """Replay of a run with undone skips: an item the live run skipped here and took back
        is skipped again (the design planned its replacement then) and reinstated at its later
        stored draw."""
        seq, key = len(self.collected.draws), self.pool.key(d.index)
        if self._late.get(key, -1) >= seq:
            self._accept(d, None, _SKIP)
            return True
        return False

    def _late_not_drawn(self: "Campaign") -> bool:
        """Replay: the stored draw at this place reinstates an item not drawn again yet."""
        seq = len(self.collected.draws)
        if not self._late or seq >= len(self._stored) or self._stored[seq].kind != REINSTATED:
            return False
        return self.pool.index_of(self._stored[seq].item) not in self._held

    def _replay_reinstated(self: "Campaign") -> bool:
        """Replay: when the stored draw at this place is a reinstated item (see
        :meth:`_reinstate`), take it now, as the live run did, before the pending draw."""
        seq = len(self.collected.draws)
        if seq >= len(self._stored) or self._stored[seq].kind != REINSTATED:
            return False
        key = self._stored[seq].item
        i = self.pool.index_of(key)
        if i is None or int(i) not in self._held or any(r[1] == key for r in self._reask):
            return False
        res = self._resolve(key)
        self.collected.skipped.discard(int(i))
        if isinstance(res, str):                # its judgment was withdrawn since: ask again
            self._reask.append((int(i), key, res))
            return True
        self._reinstate(int(i), key, res)
        return True

    def _reinstate(self: "Campaign", i: int, key: str, label: int) -> None:
        """A skipped draw whose skip was undone and which is now judged joins the sample where
        it was answered (stored kind ``reinstated``). The design already planned a replacement
        for it; keeping both is still a valid sample: without replacement each stratum's draws
        stay a prefix of its random order (a simple random sample of the stratum); with
        replacement the draw's probability was fixed before it was drawn, and the draws
        made meanwhile did not depend on its label."""
        d = self._held.pop(i)
        if label == _SKIP:
            self._held[i] = d
            self.collected.skipped.add(i)
            return
        self._accept(d, key, label, kind=REINSTATED)
        self.flush()                        # its place in the order matters on replay

    def _undo(self: "Campaign", annotator: str) -> None:
        """Take back ``annotator``'s latest entry in this campaign: the item is asked again.
        The entry stays stored until the new answer arrives (a value replaces it, a skip keeps
        it), so a session that stops before answering loses the undo, never a label, and the
        stored run replays as before."""
        mine = [x for x in self._mine if x[0] == annotator]
        if not mine:
            return
        who, key = mine[-1]
        self._mine.remove((who, key))
        self._mine_set.discard((who, key))
        old = self.known.of(who).get(key)
        idx = self.pool.index_of(key)
        i = int(idx if idx is not None else -1)
        if old is not None and old.status != Status.JUDGED:
            self.collected.skipped.discard(i)     # a skip taken back: the item is asked again
        self._reask.append((i, key, who))
        self._undone[(who, key)] = old

    def _record_reask(self: "Campaign", req: tuple[int, str, str], j: Judgment) -> None:
        """The answer to an undone item: a value replaces the stored entry; a status (skip)
        keeps it. A label is new when it replaces a skip."""
        old = self._undone.pop((j.annotator, j.item), None)
        if j.status == Status.JUDGED and self._drops_sampled(req[0], j):
            self.notes.append(f"an undone vote on {j.item!r} was kept: the new one would leave "
                              "an item already in the sample without a panel majority")
            j = Judgment(j.item, j.annotator, None, Status.SKIPPED)     # keeps the old vote
        if j.status == Status.JUDGED:
            self._write([j], replace=True)
            self.new += old is None or old.status != Status.JUDGED
        self._mine.append((j.annotator, j.item))         # it can be undone again
        self._mine_set.add((j.annotator, j.item))
        self._reask.remove(req)
        self._after_reask(req)

    def _drops_sampled(self: "Campaign", i: int, j: Judgment) -> bool:
        """True when ``j`` would turn the panel decision on a sampled item into no label (the
        item cannot leave the sample: its draw is stored)."""
        if len(self.members) < 2 or i not in self.collected.labelled:
            return False
        count, m = [0, 0], len(self.members)
        for n, who in enumerate(self.members):
            e = j if who == j.annotator else self.known.of(who).get(j.item)
            if e is None or e.status == Status.PENDING:
                return False                      # more votes to come
            if e.status == Status.JUDGED:
                count[int(int(e.value) > 0)] += 1  # type: ignore[arg-type]
            decided = panel_decision(count[1], count[0], m - n - 1, m)
            if decided is not None:
                return decided == NO_LABEL
        return True

    def _after_reask(self: "Campaign", req: tuple[int, str, str]) -> None:
        """The item's label after its re-ask: a held (skipped) draw is reinstated, or stays
        skipped; a labelled item takes its new value in every draw of it."""
        i, key, who = req
        res = self._resolve(key)
        if isinstance(res, str):
            self._reask.append((i, key, res))
        elif i in self._held:
            self._reinstate(i, key, res)
        elif res != _SKIP and i in self.collected.labelled:
            self.collected.labelled[i] = res
            c = self.collected
            c.labels = [res if d.index == i else v for d, v in zip(c.draws, c.labels)]


__all__ = ["REINSTATED", "Undoing"]
