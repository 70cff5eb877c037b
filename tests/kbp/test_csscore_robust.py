"""Mutated inputs never give cs-score a traceback: exit 0, or exit 2 with one stderr line."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from assay.scorers.csscore import main

CASES = Path(__file__).resolve().parent / "cases"
GARBAGE = ["", " ", "x", "0", "-1", "D1:5-2", "D1:a-b", "CSSF15_ENG_0000000000", "per:age", "1.0",
           "C", "0:1", "CSSF15_ENG_501edb1b87:9:9", "\u00e9", "a:b:c", "1e5"]


def mutate(lines: list[str], rng: random.Random) -> list[str]:
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        fields = lines[i].split("\t")
        op = rng.randrange(6)
        if op == 0 and len(fields) > 1:
            del fields[rng.randrange(len(fields))]
        elif op == 1:
            fields[rng.randrange(len(fields))] = rng.choice(GARBAGE)
        elif op == 2:
            lines.insert(0, lines.pop(i))               # a line before its parent
        elif op == 3:
            lines.insert(i, lines[i])                   # a duplicate
        elif op == 4:
            lines.insert(i, rng.choice(["", "# note", "   "]))
        else:
            fields.append(rng.choice(GARBAGE))
        if op in (0, 1, 5):
            lines[i] = "\t".join(fields)
    return lines


@pytest.mark.parametrize("seed", range(60))
def test_mutated_run_or_pool(seed, tmp_path, capsys):
    rng = random.Random(seed)
    name = rng.choice(["run1.tab", "pool.tab", "run2.tab"])
    files = {n: (CASES / n).read_text().splitlines() for n in ("pool.tab", "run1.tab", "run2.tab")}
    files[name] = mutate(files[name], rng)
    for n, lines in files.items():
        (tmp_path / n).write_text("\n".join(lines) + "\n")
    args = [str(tmp_path / n) for n in ("pool.tab", "run1.tab", "run2.tab")]
    extra = rng.choice([[], ["-expand", "CSSF15_ENG", str(CASES / "ldc_queries.xml")],
                        ["-discipline", "STRING_CASE", str(CASES / "sf_queries.xml")],
                        ["-ignore", "UNASSESSED:DUPLICATE", "-wrong", "INCORRECT:INEXACT",
                         str(CASES / "sf_queries.xml")]])
    if not extra or not extra[-1].endswith(".xml"):
        extra = extra + [str(CASES / "sf_queries.xml")]
    code = main(extra + args)
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("cs-score: ")


@pytest.mark.parametrize("seed", range(30))
def test_mutated_query_file(seed, tmp_path, capsys):
    rng = random.Random(1000 + seed)
    name = rng.choice(["sf_queries.xml", "ldc_queries.xml"])
    lines = (CASES / name).read_text().splitlines()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines[i] = lines[i].replace(">", "> ", 1).replace("</", "<", 1)
        elif op == 2:
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    (tmp_path / name).write_text("\n".join(lines) + "\n")
    args = (["-expand", "CSSF15_ENG"] if name.startswith("ldc") else []) + [
        str(tmp_path / name), str(CASES / "pool.tab"), str(CASES / "run1.tab")]
    code = main(args)
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("cs-score: ")
