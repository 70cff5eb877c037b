"""The tree of one query for ``-verbose``: the same scores as :class:`~.tree.Tree`, with the
answers of each category kept (the report lists, per class, each answer counted in a category
other than its judgment: its line, its assessment's line, the judgment, the categories).
"""
from __future__ import annotations

from .load import Loaded
from .model import Entry, Options, ScoreLine
from .tree import _CATEGORIES, Node, Tree


class VerboseTree(Tree):
    """:class:`Tree` scoring by lists of answers rather than counts."""

    def __init__(self, ld: Loaded, opts: Options, runid: str) -> None:
        super().__init__(ld, opts, runid)
        self.categorized: list[tuple[ScoreLine, dict[str, list[Entry]]]] = []

    def categorize(self, node: Node) -> dict[str, list[Entry]]:
        """A class's answers by pre-policy code and post-policy category
        (:meth:`Tree.categorize_counts` in lists)."""
        out: dict[str, list[Entry]] = {}
        name = node.name or ""
        hop0 = name.count(":") == 1             # a hop-0 class: its path is always correct
        truth, touched = self.truth, self.touched
        for s in node.submissions:
            t = truth.get(id(s))
            if not hop0 and not self.path_correct(name, s.r.query_id):
                key = "INCORRECT_PARENT"
            elif t is None:
                # an unassessed answer already looked at as a parent has no category in v2.4.4
                key = "" if id(s) in touched else "UNASSESSED"
            else:
                key = t.r.judgment or ""
            group = out.get(key)
            if group is None:
                out[key] = [s]
            else:
                group.append(s)
        policy = self.policy
        for cat in _CATEGORIES:
            for opt in policy[cat]:
                if opt in out:
                    out.setdefault(cat, []).extend(out[opt])
        if len(out.get("RIGHT", [])) > 1:
            out["REDUNDANT"] = out["RIGHT"][1:]
            out["RIGHT"] = out["RIGHT"][:1]
        if out.get("REDUNDANT"):
            out.setdefault(self.dup_category, []).extend(out["REDUNDANT"])
        return out

    def score_node(self, node: Node, name: str) -> None:
        """:meth:`Tree.score_node` with each category's answers kept."""
        if not node.children:           # a leaf's score is never reported (nor used)
            return
        for child_name, child in node.children.items():
            if child.children:
                self.score_node(child, child_name)
        gt = sum(1 for c in node.children.values() if not c.bin_incorrect)
        single = node.quantity == "single"
        if single and gt > 1:
            gt = 1
        cats: dict[str, list[Entry]] = {}
        submitted = 0
        for child in node.children.values():
            for key, items in self.categorize(child).items():
                cats.setdefault(key, []).extend(items)
            submitted += len(child.submissions)
        if single and cats.get("RIGHT"):
            keep = cats["RIGHT"][-1]
            if len(_classes(self, cats["RIGHT"])) > 1:
                self.ld.notes.append(
                    f"-verbose, {name} ({self.runid}): right answers in several classes of a "
                    f"single-valued slot; assay keeps line {keep.r.line} as RIGHT, the last in "
                    "class order (CS-Score 2.4.4: whichever perl's hash order gives)")
            extra = cats["RIGHT"][:-1]
            cats["RIGHT"] = [keep]
            dup = self.dup_category
            if self.opts.fix_duplicates:         # v3.0: only the newly redundant answers move
                cats.setdefault("REDUNDANT", []).extend(extra)
                cats.setdefault(dup, []).extend(extra)
            else:                                # v2.4.4: the whole redundant list moves again
                cats.setdefault("REDUNDANT", []).extend(extra)
                cats.setdefault(dup, []).extend(cats["REDUNDANT"])
        n = {k: len(v) for k, v in cats.items()}
        level = name.count(":")
        node.score = ScoreLine(
            name, self.runid, level, gt=gt, submitted=submitted, correct=n.get("CORRECT", 0),
            incorrect=n.get("INCORRECT", 0), inexact=n.get("INEXACT", 0),
            incorrect_parent=n.get("INCORRECT_PARENT", 0), unassessed=n.get("UNASSESSED", 0),
            redundant=n.get("REDUNDANT", 0), right=n.get("RIGHT", 0), wrong=n.get("WRONG", 0),
            ignored=n.get("IGNORE", 0), quantity=node.quantity)
        self.categorized.append((node.score, cats))
        self.out.append(node.score)

    def scores(self) -> list[ScoreLine]:
        out = super().scores()
        for score, cats in self.categorized:      # after scoring: the parent look-ups are done
            score.details = [(label, e.r.line, e.r.text) + self._judged(e)
                             for label, entries in cats.items() for e in entries]
        return out

    def _judged(self, e: Entry) -> tuple[str, str]:
        """(assessment line, judgment) as -verbose shows them: '-' and UNASSESSED for an
        unassessed answer, empty for one given an empty assessment while looking for a parent."""
        truth = self.truth.get(id(e))
        if truth is not None:
            return truth.r.text, truth.r.judgment or ""
        return ("", "") if id(e) in self.touched else ("-", "UNASSESSED")


def _classes(tree: Tree, entries: list[Entry]) -> set[int]:
    """The classes (nodes) that assessed answers sit in."""
    return {id(tree.node_of.get(id(tree.truth.get(id(e))))) for e in entries}


__all__ = ["VerboseTree"]
