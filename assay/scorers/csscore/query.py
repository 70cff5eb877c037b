"""One query's score lines for one run: its tree of assessments (built once per query, shared
by the runs), the run's answers placed at their classes, the classes scored (:mod:`.tree`;
:mod:`.verbose` with -verbose), and the run's additions taken off again.
"""
from __future__ import annotations

from assay.formats.kbp import ASSESSMENT

from .load import Loaded
from .model import Options, ScoreLine
from .tree import Node, Tree
from .verbose import VerboseTree


def _tree_of_assessments(ld: Loaded, opts: Options, base: str, runid: str) -> Tree:
    """A tree holding the query's assessments, built once per query (the assessments do not
    depend on the run): each run's tree shares its nodes, and what a run adds (submissions,
    classes of unassessed answers) is taken away after it (:func:`_restore`), leaving the
    nodes and their order as built."""
    template = ld.templates.get(base)
    if template is None:
        t = Tree(ld, opts, "")           # assessments only: the same for either kind
        t.add_assessments(ld.by_base[ASSESSMENT].get(base, []))
        # the nodes only, not the tree: a tree refers to ``ld``, and a cycle through ``ld``
        # would leave millions of objects to the cyclic collector (5 s at 10^6 answers)
        template = ld.templates[base] = (t.tops, t.node_of)
    tree = (VerboseTree if opts.verbose else Tree)(ld, opts, runid)
    tree.tops, tree.node_of = template
    return tree


def _restore(tree: Tree) -> None:
    """Take a run's additions off the shared nodes: submissions, then the classes it made, last
    made first (each was added at the end of its dict, so the order as built comes back)."""
    for node in tree.filled:
        node.submissions.clear()
    for nodes, key in reversed(tree.added):
        del nodes[key]


def score_query(ld: Loaded, opts: Options, runid: str, base: str) -> list[ScoreLine]:
    """All score lines of query ``base`` (its hop-0 query ID) for ``runid``."""
    tree = _tree_of_assessments(ld, opts, base, runid)
    try:
        _place(tree, ld, opts, runid, base)
        return tree.scores()
    finally:
        _restore(tree)


def _place(tree: Tree, ld: Loaded, opts: Options, runid: str, base: str) -> None:
    """Each answer of the run to the query at its class: its assessment's, else the class its
    answer leads to (:meth:`Tree.ground_truth`, :meth:`Tree.add_submission`)."""
    assessments = ld.by_base[ASSESSMENT].get(base, [])
    subs = ld.by_run.get((runid, base), [])
    if subs and opts.discipline == "ASSESSED":
        # ground_truth and add_submission inlined (the same steps, without the string index);
        # an answer's assessment given its parent class is kept for the next runs (resolved),
        # and the classes of unassessed answers for this tree (nodes, zero)
        exact_index = tree._index(base, assessments)[0]
        truths, node_of, parent_ec, qid_ec = tree.truth, tree.node_of, tree.parent_ec, tree.qid_ec
        filled, get, resolved = tree.filled, tree.get, ld.resolved
        answer_assessment = ld.answer_assessment
        nodes: dict[str, Node] = {}         # class -> its node
        zero: dict[str, Node] = {}          # query ID -> the class of its unassessed answers
        for s in subs:
            r = s.r
            qid = r.parts.query_id
            # first, as ground_truth: it may stop on a skipped parent
            ec = r.full_query_id if s.query_level == 0 else qid_ec(qid)
            vnormal = r.value_provenance.normal
            key = (qid, r.value, r.relation_provenance.normal, vnormal)
            choices = exact_index.get(key)
            truth = None
            if choices:
                hit = resolved.get(key)
                if hit is not None and hit[0] == ec:
                    truth = hit[1]
                else:
                    exact = [a for a in choices if parent_ec(a) == ec]
                    if len(exact) == 1:
                        truth = exact[0]
                    elif exact:
                        correct = [c for c in exact if c.r.judgment == "CORRECT"]
                        truth = correct[0] if correct else exact[0]
                    resolved[key] = (ec, truth)
            if truth is not None:
                truths[id(s)] = truth
                node = node_of[id(truth)]
            else:                           # tree.get(tree.entry_ec(s), s.quantity)
                pa = answer_assessment.get((s.query_full, r.value, vnormal))
                if pa is not None:
                    cls = pa.r.ec or "0"
                    node = nodes.get(cls)
                    if node is None:
                        node = nodes[cls] = get(cls, s.quantity)
                else:
                    node = zero.get(qid)
                    if node is None:
                        node = zero[qid] = get(qid_ec(qid) + ":0", s.quantity)
            node.submissions.append(s)
            filled.append(node)
    else:
        for s in subs:
            tree.add_submission(s, tree.ground_truth(s, assessments))


__all__ = ["score_query"]
