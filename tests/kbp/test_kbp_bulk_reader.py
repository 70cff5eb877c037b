"""The column-wise submission reader (speed, issue 13) gives exactly what the line-by-line
checks give, or declines (``None``) and leaves the file to them: on a generated run and on
seeded random damage to its lines (columns, comments, blank lines, carriage returns, bad
provenance, query IDs, slots, run IDs, value types, confidences)."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from assay.formats.kbp.errors import KBPInputError
from assay.formats.kbp.responses import parse_lines, parse_responses, parse_submissions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "csscore_peer"))
from speed import write_case  # noqa: E402

_NOISE = ["", " ", "x y", "1.5", "0", ".0", "1.00", "0.75", "per:titles", "per:title",
          "org:top_members_employees", "D1:9-3", "D1:0-9,D2:1-2", "D1:007-9", " D1:0-9",
          "D1:0-400", "D1:0-9 ", "D:1:0-9", "D1:0-٣", ",", "ORG", "Per", "string", "STRING ",
          "CSSF15_ENG_0458206f71_a0b1c2d3e4f5", "CSSF15_ENG_0458206f71_a0b1c2d3e4f5_aaaaaaaaaaaa",
          "CS15_ENG_0001", "#CSSF15_ENG_0458206f71", " CSSF15_ENG_0458206f71", "1", "run 1",
          "run\u00a01", "QX:per:title"]


def _damage(lines: list[str], rng: random.Random) -> str:
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        fields = lines[i].split("\t")
        what = rng.random()
        if what < 0.6:
            fields[rng.randrange(len(fields))] = rng.choice(_NOISE)
            lines[i] = "\t".join(fields)
        elif what < 0.7:
            lines[i] = "\t".join(fields[:rng.randint(1, 7)])
        elif what < 0.8:
            lines.insert(i, rng.choice(["", "  ", "# a comment", " #x\ty"]))
        elif what < 0.9:
            lines[i] += "\r"
        else:
            lines[i] += "\t" + rng.choice(_NOISE)
    return "\n".join(lines) + rng.choice(["\n", "", "\n\n"])


def _lines(text: str):
    try:
        return parse_lines(text, "f")
    except KBPInputError as exc:
        return str(exc)


@pytest.fixture(scope="module")
def run_lines(tmp_path_factory) -> list[str]:
    files = write_case(tmp_path_factory.mktemp("case"), runs=1, answers=400, nq=20, seed=7)
    return Path(files[2]).read_text().splitlines()


def test_a_clean_run_is_read_by_columns_as_by_lines(run_lines):
    text = "\n".join(run_lines) + "\n"
    bulk = parse_submissions(text, "f")
    assert bulk is not None and bulk == parse_lines(text, "f") and len(bulk) == len(run_lines)
    assert parse_responses(text, "f") == bulk
    assert parse_submissions("\n".join(run_lines), "f") == bulk      # no final newline


def test_damaged_runs_are_read_alike_or_declined(run_lines):
    rng = random.Random(13)
    declined = 0
    for _ in range(600):
        text = _damage(run_lines[:30], rng)
        bulk = parse_submissions(text, "f")
        by_lines = _lines(text)
        if bulk is None:
            declined += 1
        else:
            assert bulk == by_lines, text
        got = parse_responses(text, "f") if not isinstance(by_lines, str) else None
        assert got is None or got == by_lines
    assert 0 < declined < 600


def test_an_assessment_file_is_left_to_the_line_reader():
    line = ("A1\tCSSF15_ENG_0458206f71:per:title\tD1:0-9\tmayor\tD1:3-7\tC\tC\t"
            "CSSF15_ENG_0458206f71:1\n")
    assert parse_submissions(line, "f") is None
    assert parse_responses(line, "f")[0].kind == "assessment"
