"""Library API: score answer files (or texts) and get a :class:`SensevalScore` back."""
from __future__ import annotations

from typing import Iterable

from .model import AnswerLine, Grain, KeyEntry, Policy, ScoringOptions, SensevalScore
from .readers import (PathLike, SenseMap, check_inputs, parse_answers, parse_instance_list, parse_key,
                      parse_sense_list, parse_sensemap, read_lines, split_lines)
from .scoring import ratios, run

__all__ = ["score", "score_text", "score_parsed"]


def score(answers_path: PathLike, key_path: PathLike, sensemap_path: PathLike | None = None,
          grain: Grain = "fine", minimal: bool = False, *, policy: Policy = "disjunctive",
          instances_path: PathLike | None = None, senses_path: PathLike | None = None,
          instances: Iterable[str | tuple[str, str]] | None = None,
          senses: Iterable[str] | None = None) -> SensevalScore:
    """Score an answer file against a key, like ``scorer2 answers key [sensemap] [-g G] [-m]``.

    ``instances``/``instances_path`` restrict scoring to the listed instances (``(lexelt,
    instance)`` pairs, or bare instance ids); ``senses``/``senses_path`` delete every other
    sense tag from the key (seed 003, filtering).  Coarse and mixed grains need a sense map.
    Raises :class:`SensevalInputError` for unreadable files and malformed key lines.
    """
    key = parse_key(read_lines(key_path, "key"), key_path)
    smap = parse_sensemap(read_lines(sensemap_path, "sense map")) if sensemap_path else None
    if instances_path is not None:
        instances = parse_instance_list(read_lines(instances_path, "instance list"), instances_path)
    if senses_path is not None:
        senses = parse_sense_list(read_lines(senses_path, "sense list"))
    opts = ScoringOptions(grain=grain, minimal=minimal, policy=policy,
                          instance_filter=None if instances is None else frozenset(instances),
                          sense_filter=None if senses is None else frozenset(senses))
    answers = parse_answers(read_lines(answers_path, "answer"))
    return score_parsed(answers, key, smap, opts, str(answers_path), str(key_path),
                        None if sensemap_path is None else str(sensemap_path))


def score_text(answers: str, key: str, sensemap: str | None = None, grain: Grain = "fine",
               minimal: bool = False, **options: object) -> SensevalScore:
    """As :func:`score`, from file contents held in strings (handy in tests and notebooks).

    Extra keyword options are those of :class:`ScoringOptions` (``policy``,
    ``instance_filter``, ``sense_filter``).
    """
    opts = ScoringOptions(grain=grain, minimal=minimal, **options)  # type: ignore[arg-type]
    smap = parse_sensemap(split_lines(sensemap)) if sensemap is not None else None
    return score_parsed(parse_answers(split_lines(answers)), parse_key(split_lines(key)), smap,
                        opts, "<answers>", "<key>", None if sensemap is None else "<sensemap>")


def score_parsed(answers: Iterable[AnswerLine], key: Iterable[KeyEntry], smap: SenseMap | None, opts: ScoringOptions,
                 answer_file: str, key_file: str, sensemap_file: str | None) -> SensevalScore:
    """Score already-parsed inputs (see :mod:`.readers`).

    Unlike the original, an empty key and a weight that is not a finite number >= 0 (``nan``,
    ``inf``, ``-0.5``) are errors naming the file and line (:func:`.readers.check_inputs`)."""
    if opts.grain != "fine" and smap is None:
        raise ValueError(f"{opts.grain}-grained scoring needs a sense map")
    answers, key = list(answers), list(key)
    check_inputs(answers, key, answer_file, key_file)
    result = run(answers, key, smap, opts, answer_file)
    precision, recall, attempted_percent = ratios(result.totals, opts.policy == "conjunctive")
    t = result.totals
    return SensevalScore(answer_file=answer_file, key_file=key_file, sensemap_file=sensemap_file,
                         options=opts, correct=t.correct, attempted=t.attempted, total=t.total,
                         precision=precision, recall=recall, attempted_percent=attempted_percent,
                         scored=result.scored, unscored=result.unscored)
