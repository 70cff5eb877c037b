"""One query's score lines for one run: its tree of assessments (built once per query, copied
per run), the run's answers placed at their classes, the classes scored (:mod:`.tree`;
:mod:`.verbose` with -verbose).
"""
from __future__ import annotations

from assay.formats.kbp import ASSESSMENT

from .load import Loaded
from .model import Options, ScoreLine
from .tree import Node, Tree
from .verbose import VerboseTree


def _clone(node: Node, copies: dict[int, Node]) -> Node:
    new = Node(node.name, node.bin_incorrect, node.quantity,
               {k: _clone(c, copies) for k, c in node.children.items()}, [], node.assessments)
    copies[id(node)] = new
    return new


def _tree_of_assessments(ld: Loaded, opts: Options, base: str, runid: str) -> Tree:
    """A new tree holding the query's assessments: built once per query, then copied (the
    assessments do not depend on the run; node order is kept)."""
    template = ld.templates.get(base)
    if template is None:
        t = Tree(ld, opts, "")           # assessments only: the same for either kind
        t.add_assessments(ld.by_base[ASSESSMENT].get(base, []))
        # the nodes only, not the tree: a tree refers to ``ld``, and a cycle through ``ld``
        # would leave millions of objects to the cyclic collector (5 s at 10^6 answers)
        template = ld.templates[base] = (t.tops, t.node_of)
    tops, node_of = template
    tree = (VerboseTree if opts.verbose else Tree)(ld, opts, runid)
    copies: dict[int, Node] = {}
    tree.tops = {k: _clone(n, copies) for k, n in tops.items()}
    tree.node_of = {a: copies[id(n)] for a, n in node_of.items()}
    return tree


def score_query(ld: Loaded, opts: Options, runid: str, base: str) -> list[ScoreLine]:
    """All score lines of query ``base`` (its hop-0 query ID) for ``runid``."""
    tree = _tree_of_assessments(ld, opts, base, runid)
    assessments = ld.by_base[ASSESSMENT].get(base, [])
    subs = ld.by_run.get((runid, base), [])
    if subs and opts.discipline == "ASSESSED":
        # ground_truth and add_submission inlined (the same steps, without the string index)
        exact_index = tree._index(base, assessments)[0]
        truths, node_of, parent_ec = tree.truth, tree.node_of, tree.parent_ec
        for s in subs:
            r = s.r
            ec = parent_ec(s)           # first, as ground_truth: it may stop on a skipped parent
            choices = exact_index.get((r.parts.query_id, r.value, r.relation_provenance.normal,
                                       r.value_provenance.normal))
            truth = None
            if choices:
                exact = [a for a in choices if parent_ec(a) == ec]
                if len(exact) == 1:
                    truth = exact[0]
                elif exact:
                    correct = [c for c in exact if c.r.judgment == "CORRECT"]
                    truth = correct[0] if correct else exact[0]
            if truth is not None:
                truths[id(s)] = truth
                node_of[id(truth)].submissions.append(s)
            else:
                tree.get(tree.entry_ec(s), s.quantity).submissions.append(s)
    else:
        for s in subs:
            tree.add_submission(s, tree.ground_truth(s, assessments))
    return tree.scores()


__all__ = ["score_query"]
