"""``cs-score``: CS-Score v2.4.4's command line, stdout and exit codes on well-formed input.

``cs-score {-switch {-switch ...}} files...`` with the original's switches (``-tabs``,
``-expand BASE``, ``-queries FILE|ID:ID``, ``-discipline``, ``-right``, ``-wrong``, ``-ignore``,
``-fields``, ``-runids``, ``-output_file``, ``-error_file``, ``-version``, ``-help``) and
assay's ``--fix-duplicates`` and ``--fix-precision`` (the rules of v3.0; docs/csscore.md) and
``--jobs N`` (runs scored in N processes; same output).
Switches come first, as in the original. Files ending in ``.xml`` are query files; the others
(or the ``*.tab.txt`` files of a folder) are submissions and assessments, loaded in order.
Bad input: one line on stderr naming file, line and column, exit code 2.
"""
from __future__ import annotations

import sys

from assay.errors import AssayInputError
from assay.outputs import check_output, write_text

from .api import score_files
from .model import (DEFAULT_FIELDS, DEFAULT_IGNORE, DEFAULT_RIGHT, DEFAULT_WRONG, DISCIPLINES,
                    POLICY_CHOICES, Options)
from .report import COLUMNS

PROG = "cs-score"
VERSION = "2.4.4"
USAGE = f"""{PROG}:  Score one or more TAC Cold Start runs (CS-Score v{VERSION}, re-implemented by assay)

Usage: {PROG} {{-switch {{-switch ...}}}} files...

Legal switches are:
  -discipline <value>   ASSESSED, STRING_CASE or STRING_EXACT (Default = ASSESSED).
  -error_file <value>   Where should error output be sent? (filename, stdout or stderr)
  -expand <value>       Expand multi-entrypoint queries, using string provided as base for
                          expanded query names
  -fields <value>       Colon-separated list of output fields (Default = {DEFAULT_FIELDS}).
  -help                 Show help
  -ignore <value>       Codes ignored (post-policy) (Default = {DEFAULT_IGNORE}).
  -output_file <value>  Where should program output be sent? (filename, stdout or stderr)
  -queries <value>      File of 'LDC_ID SF_ID [HOP]' lines, or colon-separated SF query IDs
  -right <value>        Codes counted as right (post-policy) (Default = {DEFAULT_RIGHT}).
  -runids <value>       Colon-separated list of run IDs to be scored
  -tabs                 Use tabs to separate output fields instead of spaces
  -verbose              Print, per SF class, each answer counted in another category than
                          its judgment
  -version              Print version number and exit
  -wrong <value>        Codes counted as wrong (post-policy) (Default = {DEFAULT_WRONG}).
assay extensions:
  --fix-duplicates      Count a redundant right answer to a single-valued slot once (v3.0)
  --fix-precision       Precision = Right / (Right + Wrong) (v3.0; v2.4.4: Right / (Submitted - Ignored))
  --jobs <n>            Processes scoring runs (Default: 2 when over 200,000 answers, else 1)
parameters are:
  files  Query files (*.xml), submission files and assessment files (Required).
"""
_VALUED = {"output_file", "error_file", "discipline", "expand", "queries", "runids", "right",
           "wrong", "ignore", "fields"}


class UsageError(Exception):
    """A command line cs-score cannot make sense of."""


def parse_args(argv: list[str]) -> tuple[dict[str, object], list[str]]:
    """Switches (first, as the original wants) and the files."""
    sw: dict[str, object] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        if word in ("--fix-duplicates", "--fix-precision"):
            sw[word[2:].replace("-", "_")] = True
        elif word == "--jobs":
            if i + 1 >= len(argv) or not argv[i + 1].isdigit():
                raise UsageError("switch --jobs needs a number of processes")
            i += 1
            sw["jobs"] = int(argv[i])
        elif word[1:] in _VALUED:
            if i + 1 >= len(argv):
                raise UsageError(f"switch {word} needs a value")
            i += 1
            sw[word[1:]] = argv[i]
        elif word[1:] in ("tabs", "verbose", "help", "h", "version"):
            sw[word[1:]] = True
        else:
            raise UsageError(f"Unknown switch: {word}")
        i += 1
    return sw, argv[i:]


def options(sw: dict[str, object]) -> Options:
    """Validate the switches into :class:`Options`."""
    opts = Options(discipline=str(sw.get("discipline", "ASSESSED")),
                   right=str(sw.get("right", DEFAULT_RIGHT)), wrong=str(sw.get("wrong", DEFAULT_WRONG)),
                   ignore=str(sw.get("ignore", DEFAULT_IGNORE)),
                   expand=str(sw["expand"]) if "expand" in sw else None,
                   fields=str(sw.get("fields", DEFAULT_FIELDS)), tabs=bool(sw.get("tabs")),
                   fix_duplicates=bool(sw.get("fix_duplicates")),
                   fix_precision=bool(sw.get("fix_precision")), verbose=bool(sw.get("verbose")),
                   jobs=int(sw.get("jobs", 0)))  # type: ignore[call-overload]
    if opts.discipline not in DISCIPLINES:
        raise UsageError(f"-discipline {opts.discipline}: expected one of {', '.join(DISCIPLINES)}")
    for category, spec in opts.policy().items():
        for choice in spec:
            if category not in POLICY_CHOICES.get(choice, ()):
                raise UsageError(f"-{category.lower()}: unexpected choice {choice!r} for {category}")
    for f in opts.fields.split(":"):
        if f not in COLUMNS:
            raise UsageError(f"-fields: unknown field {f!r}")
    return opts


def main(argv: list[str] | None = None) -> int:
    """Console entry point of ``cs-score``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        sw, files = parse_args(argv)
        if sw.get("help") or sw.get("h"):
            sys.stdout.write(USAGE)
            return 0
        if sw.get("version"):
            sys.stdout.write(f"{PROG} version {VERSION}\n")
            return 0
        if not files:
            raise UsageError("Not enough arguments; files must be provided")
        opts = options(sw)
        out = str(sw.get("output_file", "stdout"))
        if out.lower() not in ("stdout", "stderr"):
            check_output(out, "-output_file")
        result = score_files(files, opts, queries=sw.get("queries"),  # type: ignore[arg-type]
                             runids=str(sw["runids"]).split(":") if "runids" in sw else None)
    except UsageError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 2
    except AssayInputError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 2
    err_to = str(sw.get("error_file", "stderr"))
    warn_text = "".join(f"WARNING: {w}\n" for w in result.warnings + result.hash_order_notes)
    if warn_text:
        if err_to.lower() == "stderr":
            sys.stderr.write(warn_text)
        elif err_to.lower() == "stdout":
            sys.stdout.write(warn_text)
        else:
            write_text(err_to, warn_text, "-error_file")
    if out.lower() == "stdout":
        sys.stdout.write(result.text)
    elif out.lower() == "stderr":
        sys.stderr.write(result.text)
    else:
        write_text(out, result.text, "-output_file")
    return 0


__all__ = ["USAGE", "UsageError", "main", "options", "parse_args"]
