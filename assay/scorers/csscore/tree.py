"""The ground-truth tree of one query for one run, as CS-Score 2.4.4 builds and scores it.

Nodes are named by equivalence class: the query (``Q``), its hop-0 classes (``Q:1``, ``Q:2``;
``Q:0`` collects wrong and unassessed answers), their hop-1 classes (``Q:1:3``, ``Q:1:0``, and
``Q:0:0`` under a wrong parent). Each assessment sits at its class; each submission at the class
of its matching assessment or, unassessed, at the class its answer leads to. A node with
children is scored over its children's submissions:

* GT = children that are true classes (1 at most for a single-valued slot);
* a submission whose parent answer, in this run, is not assessed correct is INCORRECT_PARENT;
  otherwise it is UNASSESSED or counted by its judgment (CORRECT, INCORRECT, INEXACT, ...);
* RIGHT, WRONG and IGNORE gather the codes the policy gives them (an ``I`` judgment is always
  ignored); in one class a second right answer is redundant and goes where DUPLICATE is listed;
* for a single-valued slot, all right answers but one are redundant too, and v2.4.4 adds the
  whole redundant list to DUPLICATE's category again (so a class's own redundant answers are
  counted twice; ``fix_duplicates`` counts each once, as v3.0 does).

Children are visited in creation order and a parent answer is looked up in the run's line order.
v2.4.4 quirk kept: looking for a hop-1 answer's parent walks the run's hop-0 answers of the
parent class in line order up to the parent; each unassessed one walked over gets an empty
assessment (perl autovivification), so when its own class is scored it counts as submitted but
in no category (not UNASSESSED, not IGNORED) — it lowers precision. Hop-1 classes are scored
before their parents, so this always happens first.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from assay.formats.kbp import KBPInputError, parse_queryid

from .load import Loaded
from .model import Entry, Options, ScoreLine

_CATEGORIES = ("RIGHT", "WRONG", "IGNORE")


@dataclass
class Node:
    name: str | None
    bin_incorrect: bool = False
    quantity: str | None = None
    children: dict[str, "Node"] = field(default_factory=dict)
    submissions: list[Entry] = field(default_factory=list)
    assessments: list[Entry] = field(default_factory=list)
    score: ScoreLine | None = None


class Tree:
    """Builds and scores the tree of one query (one QUERY_ID_BASE) for one run."""

    def __init__(self, ld: Loaded, opts: Options, runid: str) -> None:
        self.ld, self.opts, self.runid = ld, opts, runid
        self.tops: dict[str, Node] = {}
        self.node_of: dict[int, Node] = {}          # id(assessment entry) -> node
        self.truth: dict[int, Entry] = {}           # id(submission entry) -> its assessment
        self.touched: set[int] = set()              # unassessed answers looked at as parents
        self.policy = opts.policy()
        self.categorized: list[tuple[ScoreLine, dict[str, list[Entry]]]] = []   # -verbose
        self.dup_category = ""                      # the last category listing DUPLICATE
        for cat in _CATEGORIES:
            if "DUPLICATE" in getattr(opts, cat.lower()):
                self.dup_category = cat

    # ---- equivalence classes -------------------------------------------------------------
    def get(self, ec: str, quantity: str | None = None) -> Node:
        comps = ec.split(":")
        top = comps[0]
        node = self.tops.get(top) or Node(None, quantity=quantity)
        self.tops[top] = node
        name, incorrect = top, False
        for c in comps[1:]:
            incorrect = incorrect or c == "0"
            name = f"{name}:{c}"
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(name, incorrect)
            node = child
        return node

    def query_id2ec(self, full_id: str) -> str:
        cached = self.ld.ec_cache.get(full_id)
        if cached is None:
            cached = self.ld.ec_cache[full_id] = self._query_id2ec(full_id)
        return cached

    def _query_id2ec(self, full_id: str) -> str:
        parts = parse_queryid(full_id)
        q = self.ld.queries[parts.query_id] if parts else None
        if q is None:
            raise KBPInputError(full_id, "query not loaded")
        if q.level == 0:
            return full_id
        pa = self.ld.parent_assessment.get(q.query_id)
        if pa is not None:
            return pa.r.ec or "0"
        parent_id = self.ld.parent_query_id.get(q.query_id)
        if parent_id is None:       # its parent's only line was skipped (wrong slot)
            raise KBPInputError(full_id, "the answer this query comes from was skipped (its slot "
                                "is not its query's); CS-Score 2.4.4 stops here too")
        return self.query_id2ec(self.ld.queries[parent_id].full_id) + ":0"

    def entry_ec(self, e: Entry) -> str:
        return self.query_id2ec(self.ld.queries[e.target_id].full_id)

    def parent_ec(self, e: Entry) -> str:
        return self.query_id2ec(e.r.full_query_id)

    # ---- building --------------------------------------------------------------------------
    def node_for_assessment(self, a: Entry) -> Node:
        ec = a.r.ec or "0"
        if ec != "0":
            return self.get(ec, a.quantity)
        if a.query_level == 0:
            return self.get(f"{a.r.full_query_id}:0", a.quantity)
        pa = self.ld.parent_assessment.get(a.r.query_id)
        if pa is None:
            raise KBPInputError(a.r.source, "a hop-1 assessment whose parent answer has no correct "
                                "or inexact assessment (CS-Score 2.4.4 stops here)", line=a.r.line)
        return self.get(f"{self.node_for_assessment(pa).name}:0", a.quantity)

    def add_assessments(self, assessments: list[Entry]) -> None:
        for a in assessments:
            node = self.node_for_assessment(a)
            node.assessments.append(a)
            if not node.quantity:
                node.quantity = self.ld.queries[a.target_id].quantity
            self.node_of[id(a)] = node
            comps = (node.name or "").split(":")
            if a.r.judgment == "CORRECT" and len(comps) > 2:
                parent = self.get(":".join(comps[:-1]))
                if not any(x.r.judgment in ("CORRECT", "INEXACT") for x in parent.assessments):
                    raise KBPInputError(a.r.source, "equivalence class without a correct parent "
                                        "entry", line=a.r.line, column=8)

    def _index(self, base: str, assessments: list[Entry]) -> tuple[dict, dict]:
        """Assessments of a query by exact answer and by (parent class, string), in file order."""
        key = (base, self.opts.discipline)
        if key not in self.ld.gt_index:
            exact: dict[tuple, list[Entry]] = {}
            fuzzy: dict[tuple, list[Entry]] = {}
            for a in assessments:
                exact.setdefault(_answer_key(a), []).append(a)
                if self.opts.discipline != "ASSESSED":
                    fuzzy.setdefault((self.parent_ec(a), _string_key(a, self.opts.discipline)),
                                     []).append(a)
            self.ld.gt_index[key] = (exact, fuzzy)
        return self.ld.gt_index[key]

    def ground_truth(self, s: Entry, assessments: list[Entry]) -> Entry | None:
        """The assessment of a submission: exact answer first, else a string match (the
        discipline) with the same parent class; among several, the first correct one."""
        ec = self.parent_ec(s)
        exact_index, fuzzy_index = self._index(s.r.parts.base, assessments)
        exact = [a for a in exact_index.get(_answer_key(s), []) if self.parent_ec(a) == ec]
        fuzzy: list[Entry] = []
        if not exact and self.opts.discipline != "ASSESSED":
            fuzzy = [a for a in fuzzy_index.get((ec, _string_key(s, self.opts.discipline)), [])
                     if a.query_level == s.query_level]
        choices = exact or fuzzy
        if len(choices) <= 1:
            return choices[0] if choices else None
        correct = [c for c in choices if c.r.judgment == "CORRECT"]
        return correct[0] if correct else choices[0]

    def add_submission(self, s: Entry, truth: Entry | None) -> None:
        if truth is not None:
            self.truth[id(s)] = truth
            self.node_of[id(truth)].submissions.append(s)
        else:
            self.get(self.entry_ec(s), s.quantity).submissions.append(s)

    # ---- scoring ---------------------------------------------------------------------------
    def path_correct(self, ec: str, query_id: str) -> bool:
        comps = ec.split(":")
        if len(comps) == 2:
            return True
        parent_ec = ":".join(comps[:-1])
        for ps in self.get(parent_ec).submissions:
            truth = self.truth.get(id(ps))
            if truth is None:
                self.touched.add(id(ps))     # v2.4.4 gives it an empty assessment here
            if ps.target_id != query_id:
                continue
            if truth is not None and truth.r.judgment == "CORRECT":
                return self.path_correct(parent_ec, ps.r.query_id)
            return False
        return False

    def categorize(self, node: Node) -> dict[str, list[Entry]]:
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
            out.setdefault(self.duplicate_category(), []).extend(out["REDUNDANT"])
        return out

    def duplicate_category(self) -> str:
        return self.dup_category

    def score_node(self, node: Node, name: str) -> None:
        if not node.children:           # a leaf's score is never reported (nor used)
            return
        for child_name, child in node.children.items():
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
            if self.opts.verbose and len(_classes(self, cats["RIGHT"])) > 1:
                self.ld.notes.append(
                    f"-verbose, {name} ({self.runid}): right answers in several classes of a "
                    f"single-valued slot; assay keeps line {keep.r.line} as RIGHT, the last in "
                    "class order (CS-Score 2.4.4: whichever perl's hash order gives)")
            extra = cats["RIGHT"][:-1]
            cats["RIGHT"] = [keep]
            dup = self.duplicate_category()
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
        if self.opts.verbose:
            self.categorized.append((node.score, cats))

    def scores(self) -> list[ScoreLine]:
        out: list[ScoreLine] = []
        for top_name, top in list(self.tops.items()):
            self.score_node(top, top_name)
        for top in self.tops.values():
            _collect(top, out)
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


def _collect(node: Node, out: list[ScoreLine]) -> None:
    for child in node.children.values():
        _collect(child, out)
    if node.children and node.score is not None:
        out.append(node.score)


def _answer_key(e: Entry) -> tuple[str, str, str, str]:
    """Query, value and both provenances (normalised): what the ASSESSED discipline matches."""
    return (e.r.query_id, e.r.value, e.r.relation_provenance.key(), e.r.value_provenance.key())


def _string_key(e: Entry, discipline: str) -> str:
    return e.r.value.lower() if discipline == "STRING_CASE" else e.r.value


def _clone(node: Node, copies: dict[int, Node]) -> Node:
    new = Node(node.name, node.bin_incorrect, node.quantity,
               {k: _clone(c, copies) for k, c in node.children.items()}, [], node.assessments)
    copies[id(node)] = new
    return new


def _tree_of_assessments(ld: Loaded, opts: Options, base: str, runid: str) -> Tree:
    """A new tree holding the query's assessments: built once per query, then copied (the
    assessments do not depend on the run; node order is kept)."""
    from assay.formats.kbp import ASSESSMENT
    template = ld.templates.get(base)
    if template is None:
        t = Tree(ld, opts, "")
        t.add_assessments(ld.by_base[ASSESSMENT].get(base, []))
        template = ld.templates[base] = t
    tree = Tree(ld, opts, runid)
    copies: dict[int, Node] = {}
    tree.tops = {k: _clone(n, copies) for k, n in template.tops.items()}
    tree.node_of = {a: copies[id(n)] for a, n in template.node_of.items()}
    return tree


def score_query(ld: Loaded, opts: Options, runid: str, base: str) -> list[ScoreLine]:
    """All score lines of query ``base`` (its hop-0 query ID) for ``runid``."""
    from assay.formats.kbp import ASSESSMENT
    tree = _tree_of_assessments(ld, opts, base, runid)
    assessments = ld.by_base[ASSESSMENT].get(base, [])
    for s in ld.by_run.get((runid, base), []):
        tree.add_submission(s, tree.ground_truth(s, assessments))
    return tree.scores()


__all__ = ["Node", "Tree", "score_query"]
