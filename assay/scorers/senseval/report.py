"""scorer2's printed output: the ``-v`` trace, the stderr messages and the final report."""
from __future__ import annotations

import json
from typing import Iterator

from .cnum import c_format
from .model import InstanceScore, SensevalScore, UnscoredAnswer

_GRAIN_TITLE = {"fine": "Fine-grained", "coarse": "Coarse-grained", "mixed": "Mixed-grained"}


def header(result: SensevalScore) -> str:
    """``Fine-grained[ minimal] score for "<answers>" using key "<key>":``."""
    o = result.options
    title = _GRAIN_TITLE[o.grain]
    if o.policy == "conjunctive":
        title += " conjunctive"
    if o.minimal:
        title += " minimal"
    return f'{title} score for "{result.answer_file}" using key "{result.key_file}":'


def summary(result: SensevalScore) -> str:
    """The report scorer2 prints last: empty line, header, three lines, empty line."""
    c, a, t = (c_format(x, 2) for x in (result.correct, result.attempted, result.total))
    return (f"\n{header(result)}\n"
            f" precision: {c_format(result.precision, 3)} ({c} correct of {a} attempted)\n"
            f" recall: {c_format(result.recall, 3)} ({c} correct of {t} in total)\n"
            f" attempted: {c_format(result.attempted_percent, 2)} % ({a} attempted of {t} in total)\n"
            "\n")


def trace_block(item: InstanceScore | UnscoredAnswer) -> str:
    """One ``-v`` block: the score with key and weighted guess, or the reason for no score."""
    if isinstance(item, UnscoredAnswer):
        return item.message + "\n\n"
    key = "".join(f" {t}" for t in item.key)
    guess = "".join(f" {t}/{c_format(w, 3)}" for t, w in item.guess)
    return (f'score for "{item.id}": {c_format(item.score, 3)}\n'
            f" key   ={key}\n guess ={guess}\n\n")


def in_file_order(result: SensevalScore) -> Iterator[InstanceScore | UnscoredAnswer]:
    """Scored and unscored answer lines merged back into answer-file order."""
    return iter(sorted((*result.scored, *result.unscored), key=lambda x: x.index))


def stdout_text(result: SensevalScore, verbose: bool) -> str:
    """Everything scorer2 writes on stdout."""
    trace = "".join(trace_block(x) for x in in_file_order(result)) if verbose else ""
    return trace + summary(result)


def stderr_text(result: SensevalScore) -> str:
    """scorer2's per-line complaints, in answer-file order."""
    return "".join(u.message + "\n" for u in result.unscored)


def json_text(result: SensevalScore) -> str:
    """The ``--json`` document: :meth:`SensevalScore.to_dict` as indented JSON."""
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
