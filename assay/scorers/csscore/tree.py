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

Scored here by counts; :mod:`.verbose` keeps the answers of each category (-verbose);
:mod:`.query` makes a query's tree for a run and scores it.
"""
from __future__ import annotations

from functools import lru_cache

from assay.formats.kbp import KBPInputError, parse_queryid

from .load import Loaded, flush
from .model import Entry, Options, ScoreLine

_CATEGORIES = ("RIGHT", "WRONG", "IGNORE")


class Node:
    """One class of the tree (a plain class with slots: a run makes one per class and query)."""

    __slots__ = ("name", "bin_incorrect", "quantity", "children", "submissions", "assessments",
                 "score")

    def __init__(self, name: str | None, bin_incorrect: bool = False, quantity: str | None = None,
                 children: dict[str, "Node"] | None = None, submissions: list[Entry] | None = None,
                 assessments: list[Entry] | None = None, score: ScoreLine | None = None) -> None:
        self.name, self.bin_incorrect, self.quantity = name, bin_incorrect, quantity
        self.children: dict[str, Node] = {} if children is None else children
        self.submissions: list[Entry] = [] if submissions is None else submissions
        self.assessments: list[Entry] = [] if assessments is None else assessments
        self.score = score


class Tree:
    """Builds and scores the tree of one query (one QUERY_ID_BASE) for one run."""

    def __init__(self, ld: Loaded, opts: Options, runid: str) -> None:
        self.ld, self.opts, self.runid = ld, opts, runid
        self.tops: dict[str, Node] = {}
        self.node_of: dict[int, Node] = {}          # id(assessment entry) -> node
        self.truth: dict[int, Entry] = {}           # id(submission entry) -> its assessment
        self.touched: set[int] = set()              # unassessed answers looked at as parents
        self.out: list[ScoreLine] = []              # score lines of classes with children
        # what this tree adds to nodes it may share (:func:`.query.score_query` undoes it)
        self.added: list[tuple[dict[str, Node], str]] = []     # (children or tops, key)
        self.filled: list[Node] = []                # nodes given submissions
        # parent class -> [its answers, how many scanned, first position of each generated
        # query, how many marked touched] (:meth:`path_correct`)
        self.walks: dict[str, list] = {}
        last = _LAST_POLICY
        if last and last[0] is opts:        # one Options per scoring: no hash of it per tree
            policy = last[1]
        else:
            policy = _policy(opts)
            _LAST_POLICY[:] = [opts, policy]
        self.policy, self.policy_pairs, self.dup_category = policy

    # ---- equivalence classes -------------------------------------------------------------
    def get(self, ec: str, quantity: str | None = None) -> Node:
        comps = ec.split(":")
        top = comps[0]
        node = self.tops.get(top)
        if node is None:
            node = self.tops[top] = Node(None, quantity=quantity)
            self.added.append((self.tops, top))
        name, incorrect = top, False
        for c in comps[1:]:
            incorrect = incorrect or c == "0"
            name = f"{name}:{c}"
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(name, incorrect)
                self.added.append((node.children, name))
            node = child
        return node

    def query_id2ec(self, full_id: str) -> str:
        """The class of the answer a query (given by its full ID) comes from: the ID itself at
        hop 0; else the parent answer's class if it is assessed correct or inexact, or its
        parent query's class and ``:0``."""
        cached = self.ld.ec_cache.get(full_id)
        if cached is None:
            parts = parse_queryid(full_id)
            q = self.ld.queries[parts.query_id] if parts else None
            if q is None:
                raise KBPInputError(full_id, "query not loaded")
            cached = full_id if q.level == 0 else self.qid_ec(q.query_id)
            self.ld.ec_cache[full_id] = cached
        return cached

    def qid_ec(self, qid: str) -> str:
        """:meth:`query_id2ec` of a loaded query named by its query ID (its full ID as the
        query set knows it; no parsing)."""
        cached = self.ld.qid_ec.get(qid)
        if cached is None:
            q = self.ld.queries[qid]
            if q.level == 0:
                cached = q.full_id
            else:
                pa = self.ld.parent_assessment.get(qid)
                if pa is not None:
                    cached = pa.r.ec or "0"
                else:
                    parent_id = self.ld.parent_query_id.get(qid)
                    if parent_id is None and self.ld.pending:
                        flush(self.ld)
                        parent_id = self.ld.parent_query_id.get(qid)
                    if parent_id is None:   # its parent's only line was skipped (wrong slot)
                        raise KBPInputError(q.full_id, "the answer this query comes from was "
                                            "skipped (its slot is not its query's); CS-Score "
                                            "2.4.4 stops here too")
                    cached = self.qid_ec(parent_id) + ":0"
            self.ld.qid_ec[qid] = cached
        return cached

    def entry_ec(self, e: Entry) -> str:
        """:meth:`qid_ec` of the query generated from ``e`` (level >= 1: the class of a correct
        or inexact assessment of the same answer, else ``e``'s query's class and ``:0``),
        without hashing its ID."""
        pa = self.ld.answer_assessment.get((e.query_full, e.r.value, e.r.value_provenance.normal))
        if pa is not None:
            return pa.r.ec or "0"
        return self.qid_ec(e.r.parts.query_id) + ":0"

    def parent_ec(self, e: Entry) -> str:
        return e.r.full_query_id if e.query_level == 0 else self.qid_ec(e.r.parts.query_id)

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
            node = self.node_of[id(truth)]
        else:
            node = self.get(self.entry_ec(s), s.quantity)
        node.submissions.append(s)
        self.filled.append(node)

    # ---- scoring ---------------------------------------------------------------------------
    def path_correct(self, ec: str, query_id: str) -> bool:
        """Whether the parent answer of a class-``ec`` answer to ``query_id`` is assessed
        correct (and so on up): v2.4.4 walks the parent class's answers in line order up to the
        first whose generated query is ``query_id``, giving each unassessed one walked over an
        empty assessment (:attr:`touched`). Walked here once per parent class: the first
        position of each generated query, and how far answers were marked, are kept."""
        if ec.count(":") == 1:
            return True
        parent_ec = ec[:ec.rindex(":")]
        walk = self.walks.get(parent_ec)
        if walk is None:
            walk = self.walks[parent_ec] = [self.get(parent_ec).submissions, 0, {}, 0]
        subs, scanned, first, marked = walk
        idx = first.get(query_id)
        if idx is None:
            n = len(subs)
            while scanned < n:
                target = subs[scanned].target_id
                if target not in first:
                    first[target] = scanned
                scanned += 1
                if target == query_id:
                    idx = scanned - 1
                    break
            walk[1] = scanned
        end = len(subs) if idx is None else idx + 1
        truths = self.truth
        if end > marked:
            touched = self.touched
            for ps in subs[marked:end]:
                if id(ps) not in truths:
                    touched.add(id(ps))     # v2.4.4 gives it an empty assessment here
            walk[3] = end
        if idx is None:
            return False
        ps = subs[idx]
        truth = truths.get(id(ps))
        if truth is not None and truth.r.judgment == "CORRECT":
            return self.path_correct(parent_ec, ps.r.query_id)
        return False

    def _key(self, s: Entry, name: str, hop0: bool) -> str:
        """The pre-policy code of a submission of class ``name``."""
        if not hop0 and not self.path_correct(name, s.r.query_id):
            return "INCORRECT_PARENT"
        t = self.truth.get(id(s))
        if t is None:
            # an unassessed answer already looked at as a parent has no category in v2.4.4
            return "" if id(s) in self.touched else "UNASSESSED"
        return t.r.judgment or ""

    def categorize_counts(self, node: Node) -> dict[str, int]:
        """The counts of a class's answers by pre-policy code and post-policy category
        (:meth:`VerboseTree.categorize <assay.scorers.csscore.verbose.VerboseTree.categorize>`
        keeps the answers themselves, for -verbose; same parent look-ups in the same order)."""
        subs = node.submissions
        if not subs:
            return {}
        out: dict[str, int] = {}
        name = node.name or ""
        hop0 = name.count(":") == 1
        if hop0:
            truth, touched = self.truth, self.touched
            for s in subs:
                t = truth.get(id(s))
                if t is None:
                    key = "" if id(s) in touched else "UNASSESSED"
                else:
                    key = t.r.judgment or ""
                out[key] = out.get(key, 0) + 1
        else:
            for s in subs:
                key = self._key(s, name, False)
                out[key] = out.get(key, 0) + 1
        for cat, opt in self.policy_pairs:
            n = out.get(opt)
            if n is not None:
                out[cat] = out.get(cat, 0) + n
        right = out.get("RIGHT", 0)
        if right > 1:
            out["REDUNDANT"] = right - 1
            out["RIGHT"] = 1
            dup = self.dup_category
            out[dup] = out.get(dup, 0) + right - 1
        return out

    def score_node(self, node: Node, name: str) -> None:
        """Score the classes under ``node`` (children first), then ``node`` by counts."""
        if not node.children:           # a leaf's score is never reported (nor used)
            return
        for child_name, child in node.children.items():
            if child.children:
                self.score_node(child, child_name)
        self._score_counts(node, name)
        self.out.append(node.score)

    def _score_counts(self, node: Node, name: str) -> None:
        """:meth:`score_node` by counts (no -verbose): the same numbers, no lists of answers."""
        children = node.children.values()
        gt = 0
        for c in children:
            if not c.bin_incorrect:
                gt += 1
        single = node.quantity == "single"
        if single and gt > 1:
            gt = 1
        n: dict[str, int] = {}
        submitted = 0
        truth, touched = self.truth, self.touched
        pairs, dup = self.policy_pairs, self.dup_category
        for child in children:
            subs = child.submissions
            if not subs:
                continue
            # categorize_counts(child), inlined (called per class of every query and run)
            out: dict[str, int] = {}
            cname = child.name or ""
            if cname.count(":") == 1:
                for s in subs:
                    t = truth.get(id(s))
                    if t is None:
                        key = "" if id(s) in touched else "UNASSESSED"
                    else:
                        key = t.r.judgment or ""
                    out[key] = out.get(key, 0) + 1
            else:
                for s in subs:
                    key = self._key(s, cname, False)
                    out[key] = out.get(key, 0) + 1
            for cat, opt in pairs:
                k = out.get(opt)
                if k is not None:
                    out[cat] = out.get(cat, 0) + k
            r = out.get("RIGHT", 0)
            if r > 1:
                out["REDUNDANT"] = r - 1
                out["RIGHT"] = 1
                out[dup] = out.get(dup, 0) + r - 1
            for key, k in out.items():
                n[key] = n.get(key, 0) + k
            submitted += len(subs)
        right = n.get("RIGHT", 0)
        if single and right:
            extra = right - 1
            n["RIGHT"] = 1
            redundant = n["REDUNDANT"] = n.get("REDUNDANT", 0) + extra
            dup = self.dup_category
            n[dup] = n.get(dup, 0) + (extra if self.opts.fix_duplicates else redundant)
        node.score = ScoreLine(
            name, self.runid, name.count(":"), gt, submitted, n.get("CORRECT", 0),
            n.get("INCORRECT", 0), n.get("INEXACT", 0), n.get("INCORRECT_PARENT", 0),
            n.get("UNASSESSED", 0), n.get("REDUNDANT", 0), n.get("RIGHT", 0), n.get("WRONG", 0),
            n.get("IGNORE", 0), None, node.quantity)

    def scores(self) -> list[ScoreLine]:
        out = self.out = []         # score_node appends in post-order, as reported
        for top_name, top in list(self.tops.items()):
            self.score_node(top, top_name)
        return out


_LAST_POLICY: list = []         # [the last Options, its _policy]


@lru_cache(maxsize=64)
def _policy(opts: Options) -> tuple[dict[str, list[str]], tuple[tuple[str, str], ...], str]:
    """The policy (category -> codes), its (category, code) pairs in order, and the last
    category listing DUPLICATE ("" if none)."""
    policy = opts.policy()
    dup = ""
    for cat in _CATEGORIES:
        if "DUPLICATE" in getattr(opts, cat.lower()):
            dup = cat
    return policy, tuple((cat, opt) for cat in _CATEGORIES for opt in policy[cat]), dup


def _answer_key(e: Entry) -> tuple[str, str, str, str]:
    """Query, value and both provenances (normalised): what the ASSESSED discipline matches."""
    return (e.r.query_id, e.r.value, e.r.relation_provenance.key(), e.r.value_provenance.key())


def _string_key(e: Entry, discipline: str) -> str:
    return e.r.value.lower() if discipline == "STRING_CASE" else e.r.value


__all__ = ["Node", "Tree"]
