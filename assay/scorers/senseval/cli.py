"""``scorer2`` / ``assay senseval``: the original's arguments, output and messages.

``scorer2 answer_file key_file [sense_map_file] [-g coarse|mixed] [-m] [-v]`` plus assay's
options ``--policy``, ``--instances``, ``--senses`` and ``--json`` (all spelled with two dashes,
which the original ignores).  Arguments after the first two are read as the original reads
them: a word not starting with ``-`` is the sense map (the last one wins), ``-m``, ``-v`` and
``-g coarse|mixed`` are flags, and any other single-dash word is ignored.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import IO

from assay.errors import AssayInputError
from assay.outputs import check_output, write_text

from .api import score
from .model import POLICIES, SensevalInputError
from .report import json_text, stderr_text, stdout_text

PROG = "scorer2"

USAGE = """
This scorer requires two command-line arguments in the
following order:

   ANSWER FILE NAME (name of a file containing formatted answers)

   KEY FILE NAME (name of an answer-key file)

Optionally, the following may be appended:

   SENSE FILE NAME (name of a file containing sense-map information)
     - without this file, only fine-grained scoring is available,
       and illformed sense tags will lower precision (rather than recall)

   -g (specifies granularity: "coarse" or "mixed"; "fine" is default)

   -m (causes exclusion of instances tagged with multiple tags in key)

   -v (causes line-by-line scoring calculations to be printed)

"""

EXTENSIONS = """assay extensions:

   --policy disjunctive|conjunctive  (multi-tag policy; conjunctive reads weights as
                                      probabilities of appearance, seed 003)
   --instances FILE  (score only the listed instances: 'lexelt instance' or 'instance' a line)
   --senses FILE     (delete every other sense tag from the key)
   --json OUT        (write the scores as JSON to OUT; '-' writes JSON instead of the report)
   --help            (this text)
"""

FALLBACK = "Fine-grained scoring will be used since no sense map was given\n"
_VALUED = {"--json": "json_out", "--policy": "policy", "--instances": "instances",
           "--senses": "senses"}


class UsageError(Exception):
    """A command line assay cannot make sense of (beyond what the original accepts)."""


@dataclass
class CliArgs:
    """The parsed command line."""

    answers: str = ""
    key: str = ""
    sensemap: str | None = None
    grain: str = "fine"
    minimal: bool = False
    verbose: bool = False
    policy: str = "disjunctive"
    instances: str | None = None
    senses: str | None = None
    json_out: str | None = None
    help: bool = False
    usage: bool = False


def _split_extensions(argv: list[str], args: CliArgs) -> list[str]:
    """Take assay's ``--name value`` / ``--name=value`` options out; return the rest."""
    rest: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        name, eq, value = word.partition("=")
        if word == "--help":
            args.help = True
        elif name in _VALUED:
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value")
                i += 1
                value = argv[i]
            setattr(args, _VALUED[name], value)
        elif word.startswith("--") and word != "--":
            raise UsageError(f"unknown option {word} (see --help)")
        else:
            rest.append(word)
        i += 1
    return rest


def parse_args(argv: list[str]) -> CliArgs:
    """Parse like the original, after removing assay's double-dash options."""
    args = CliArgs()
    rest = _split_extensions(argv, args)
    if args.policy not in POLICIES:
        raise UsageError(f"--policy must be one of {', '.join(POLICIES)}, got {args.policy!r}")
    if len(rest) < 2:
        args.usage = True
        return args
    args.answers, args.key = rest[0], rest[1]
    maps: list[str] = []
    i = 2
    while i < len(rest):
        word = rest[i]
        if not word.startswith("-"):
            maps.append(word)
        elif word == "-m":
            args.minimal = True
        elif word == "-v":
            args.verbose = True
        elif word == "-g" and i + 1 < len(rest) and rest[i + 1] in ("coarse", "mixed", "fine"):
            i += 1
            args.grain = rest[i]
        i += 1
    _check_readable(args.answers, "answer")
    _check_readable(args.key, "key")
    for path in maps:  # every one must be readable, as in the original; the last one is used
        _check_readable(path, "sense map")
    args.sensemap = maps[-1] if maps else None
    return args


def _check_readable(path: str, role: str) -> None:
    """Fail early, in the original's order (answers, key, sense maps), on an unreadable file."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise SensevalInputError(path, f"cannot read {role} file: {exc.strerror or exc}") from None


def _write(stream: IO[str], text: str) -> None:
    """Write *text* with the bytes it was read with (UTF-8, surrogate-escaped)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


def _check_json(path: str) -> None:
    """Refuse an unwritable ``--json`` path before scoring."""
    try:
        check_output(path)
    except AssayInputError as exc:
        problem = str(exc).removeprefix(f"{path}: ")
        raise SensevalInputError(path, f"cannot write JSON output: {problem}") from None


def _write_json_file(path: str, text: str) -> None:
    """Write the JSON document whole or not at all (:func:`assay.outputs.write_text`)."""
    try:
        write_text(path, text, errors="surrogateescape")
    except AssayInputError as exc:
        problem = str(exc).removeprefix(f"{path}: ")
        raise SensevalInputError(path, f"cannot write JSON output: {problem}") from None


def main(argv: list[str] | None = None) -> int:
    """Console entry point of ``scorer2`` and ``assay senseval``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse_args(argv)
        if args.help:
            _write(sys.stdout, USAGE + "\n" + EXTENSIONS)
            return 0
        if args.usage:
            _write(sys.stderr, USAGE)
            return 2
        if args.json_out not in (None, "-"):
            _check_json(args.json_out)
        if args.grain != "fine" and args.sensemap is None:
            _write(sys.stderr, FALLBACK)
            args.grain = "fine"
        result = score(args.answers, args.key, args.sensemap, args.grain,  # type: ignore[arg-type]
                       args.minimal, policy=args.policy,  # type: ignore[arg-type]
                       instances_path=args.instances, senses_path=args.senses)
        if args.json_out is not None and args.json_out != "-":
            _write_json_file(args.json_out, json_text(result))
    except (UsageError, SensevalInputError) as exc:
        _write(sys.stderr, f"{PROG}: {exc}\n")
        return 2
    _write(sys.stderr, stderr_text(result))
    if args.json_out == "-":
        _write(sys.stdout, json_text(result))
    else:
        _write(sys.stdout, stdout_text(result, args.verbose))
    return 0
