"""Random Cold Start cases scored by the original CS-Score v2.4.4 and by assay's cs-score.

    bash bench/csscore_peer/setup.sh
    .venv/bin/python bench/csscore_peer/fuzz.py --cases 200 --seed 1 [--keep DIR]

Each case: random LDC queries (1-3 entry points, one or two hops), a pool of assessments (C/W/X/I
with equivalence classes, hop-1 answers under right or inexact parents), 2-4 runs mixing pooled,
re-ordered, duplicated, novel (unassessed) and hop-1 answers, and random options. A case where
assay notes a choice that depends on perl's hash order in the original (an LDC-MAX tie, or
entry points of one LDC query disagreeing on GT = 0) is compared whole for the other runs, on
the SF table for the runs named; any other case whose original output changes between two runs is reported. Exits 1 on any
difference.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from assay.formats.kbp import entrypoint_uuid, hop1_uuid, parse_provenance
from assay.scorers.csscore import main as cs_main

HERE = Path(__file__).resolve().parent
PERL = HERE / "checkout" / "CS-Score.pl"
BASE = "CSSF15_ENG"
SLOTS = [("per", ("per:employee_or_member_of", "org:city_of_headquarters")),
         ("per", ("per:title",)), ("per", ("per:city_of_birth",)),
         ("org", ("org:top_members_employees", "per:age")),
         ("org", ("org:top_members_employees", "per:schools_attended")),
         ("per", ("per:children", "per:spouse")), ("org", ("org:website",))]
VALUES = ["Alpha", "alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta"]
POLICIES = [[], ["-right", "CORRECT:INEXACT", "-wrong", "INCORRECT:INCORRECT_PARENT:DUPLICATE"],
            ["-wrong", "INCORRECT:INEXACT", "-ignore", "UNASSESSED:INCORRECT_PARENT:DUPLICATE"],
            ["-wrong", "INCORRECT:UNASSESSED:DUPLICATE", "-ignore", "INEXACT:INCORRECT_PARENT"],
            ["-right", "CORRECT:DUPLICATE", "-wrong", "INCORRECT:INCORRECT_PARENT:INEXACT"],
            ["-wrong", "INCORRECT:INCORRECT_PARENT:INEXACT"]]


def prov(rng: random.Random, n: int = 1) -> str:
    out = []
    for _ in range(n):
        s = rng.randrange(0, 500)
        out.append(f"DOC{rng.randrange(6)}:{s}-{s + rng.randrange(0, 60)}")
    return ",".join(out)


def make_case(rng: random.Random, folder: Path, varied: bool = False,
              verbose: bool = False) -> list[str]:
    """Write one random case into ``folder``; return the command line. ``varied``: every query
    has a right answer in the pool and each run answers each query at its own rate (fewer
    LDC-MAX ties, so more LDC tables are compared); ``verbose``: -verbose in a quarter of the
    cases."""
    ldc, sf = [], []
    for i in range(rng.randint(3, 8)):
        etype, slots = rng.choice(SLOTS)
        eps = [(f"Name{i}_{j}", f"EP{i}", 10 * j, 10 * j + 5) for j in range(rng.randint(1, 3))]
        ldc.append((f"CS15_ENG_{i:04d}", etype, slots, eps))
        for ep in eps:
            sf.append((f"{BASE}_{entrypoint_uuid(ep[1], ep[2], ep[3], slots)}", etype, slots, [ep]))
    pool: list[str] = []
    answers: dict[str, list[tuple[str, str, str, str]]] = {}   # query -> (value, rel, vprov, code)
    n = 0
    for qid, _, slots, _ in sf:
        classes: dict[str, int] = {}
        for j in range(rng.randint(1 if varied else 0, 6)):
            v, rel, vp = rng.choice(VALUES), prov(rng, rng.randint(1, 2)), prov(rng)
            code = "C" if varied and j == 0 else rng.choice("CCCWWXI")
            ec = "0"
            if code in "CX":
                ec = f"{qid}:{classes.setdefault(v, len(classes) + 1)}"
            n += 1
            pool.append(f"A{n}\t{qid}:{slots[0]}\t{rel}\t{v}\t{vp}\t{code}\t{code}\t{ec}")
            answers.setdefault(qid, []).append((v, rel, vp, code))
            if len(slots) > 1 and code in "CX":
                child = f"{qid}_{hop1_uuid(qid, v, parse_provenance(vp).key())}"
                cls: dict[str, int] = {}
                for _ in range(rng.randint(0, 3)):
                    v2, rel2, vp2 = rng.choice(VALUES), prov(rng), prov(rng)
                    c2 = rng.choice("CCWX")
                    ec2 = f"{ec}:{cls.setdefault(v2, len(cls) + 1)}" if c2 in "CX" else "0"
                    n += 1
                    pool.append(f"A{n}\t{child}:{slots[1]}\t{rel2}\t{v2}\t{vp2}\t{c2}\t{c2}\t{ec2}")
                    answers.setdefault(child, []).append((v2, rel2, vp2, c2))
    slot_of = {q: s for q, _, s, _ in sf}
    runs = []
    for r in range(rng.randint(2, 4)):
        rows = []
        for qid, _, slots, _ in sf:
            if rng.random() < 0.2:
                continue
            rate = rng.uniform(0.1, 1.0) if varied else 0.6
            picks = [a for a in answers.get(qid, []) if rng.random() < rate]
            picks += [(rng.choice(VALUES), prov(rng), prov(rng), "?") for _ in range(rng.randint(0, 2))]
            if picks and rng.random() < 0.3:
                picks.append(rng.choice(picks))
            for v, rel, vp, _ in picks:
                rows.append(f"{qid}\t{slots[0]}\trun{r}\t{rel}\t{v}\tSTRING\t{vp}\t1.0")
                if len(slots) > 1 and rng.random() < 0.7:
                    child = f"{qid}_{hop1_uuid(qid, v, parse_provenance(vp).key())}"
                    kids = [a for a in answers.get(child, []) if rng.random() < 0.6]
                    kids += [(rng.choice(VALUES), prov(rng), prov(rng), "?")
                             for _ in range(rng.randint(0, 1))]
                    for v2, rel2, vp2, _ in kids:
                        rows.append(f"{child}\t{slots[1]}\trun{r}\t{rel2}\t{v2}\tSTRING\t{vp2}\t0.5")
        # a hop-1 answer whose parent this run did not give (parent in the pool)
        for child, kids in answers.items():
            if child.count("_") == 3 and kids and rng.random() < 0.1:
                v2, rel2, vp2, _ = kids[0]
                parent = child.rsplit("_", 1)[0]
                rows.append(f"{child}\t{slot_of[parent][1]}\trun{r}\t{rel2}\t{v2}\tSTRING\t{vp2}\t0.5")
        runs.append(rows)
    from make_cases import xml  # noqa: E402  (same folder)
    (folder / "ldc.xml").write_text(xml(ldc))
    (folder / "sf.xml").write_text(xml(sf))
    (folder / "pool.tab").write_text("\n".join(pool) + "\n")
    names = []
    for i, rows in enumerate(runs):
        (folder / f"run{i}.tab").write_text("\n".join(rows) + "\n")
        names.append(f"run{i}.tab")
    args = list(rng.choice(POLICIES))
    if rng.random() < 0.3:
        args += ["-discipline", rng.choice(["STRING_CASE", "STRING_EXACT"])]
    if rng.random() < 0.3:
        args.append("-tabs")
    if verbose and rng.random() < 0.25:
        args.append("-verbose")
    if rng.random() < 0.5:
        args += ["-expand", BASE, "ldc.xml"]
        if rng.random() < 0.3:
            lines = [f"{l_[0]} {BASE}_{entrypoint_uuid(ep[1], ep[2], ep[3], l_[2])}"
                     + (f" {rng.randint(0, len(l_[2]) - 1)}" if rng.random() < 0.5 else "")
                     for l_ in ldc for ep in l_[3]]
            hops: dict[str, str] = {}
            fixed = []
            for line in lines:   # one hop per LDC query, as the original demands
                w = line.split()
                h = hops.setdefault(w[0], w[2] if len(w) > 2 else "")
                fixed.append(" ".join(w[:2] + ([h] if h else [])))
            (folder / "qids.txt").write_text("\n".join(fixed) + "\n")
            args = ["-queries", "qids.txt"] + args
    else:
        args.append("sf.xml")
    return args + ["pool.tab"] + names


def _runs(out: bytes) -> list[bytes]:
    return [b"SF: Slot-filling" + p for p in out.split(b"SF: Slot-filling")[1:]]


def _runid(block: bytes) -> str:
    for line in block.decode().splitlines()[3:]:
        words = line.split()
        if len(words) > 1:
            return words[1]
    return ""


def _compare_runs(mine: bytes, theirs: bytes, noted: set[str]) -> bool:
    """Runs without a named hash-order choice must match whole; the others on their SF table
    (up to the LDC-MAX table: its widths depend on SF lines only)."""
    a, b = _runs(mine), _runs(theirs)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if _runid(x) in noted:
            x, y = x.split(b"LDC-MAX: ")[0], y.split(b"LDC-MAX: ")[0]
        if x != y:
            return False
    return True


def perl(args: list[str], folder: Path) -> tuple[int, bytes]:
    p = subprocess.run(["perl", str(PERL), *args], cwd=folder, capture_output=True)
    return p.returncode, p.stdout


def assay(args: list[str], folder: Path) -> tuple[int, bytes, str]:
    old = os.getcwd()
    buf, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            code = cs_main(args)
    finally:
        os.chdir(old)
    return code, buf.getvalue().encode(), err.getvalue()


def _keep(keep: Path | None, k: int, folder: Path, args: list[str], **outs: bytes) -> None:
    if keep is None:
        return
    dest = keep / f"case{k}"
    dest.mkdir(parents=True, exist_ok=True)
    for p in folder.iterdir():
        (dest / p.name).write_bytes(p.read_bytes())
    for name, data in outs.items():
        (dest / f"{name}.out").write_bytes(data)
    (dest / "args").write_text(" ".join(args) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, default=None, help="keep differing cases here")
    ap.add_argument("--verbose", action="store_true", help="-verbose in a quarter of the cases")
    ap.add_argument("--varied", action="store_true",
                    help="a right answer for every query, a rate per run and query (fewer ties)")
    a = ap.parse_args()
    sys.path.insert(0, str(HERE))
    rng = random.Random(a.seed)
    same = differ = hashed = sf_same = verbose_skipped = both_reject = only_perl_rejects = 0
    unexplained = 0
    for k in range(a.cases):
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            args = make_case(rng, folder, a.varied, a.verbose)
            c1, o1 = perl(args, folder)
            code, mine, err = assay(args, folder)
            if c1 != 0:
                if code == 2:
                    both_reject += 1
                else:
                    only_perl_rejects += 1
                    print(f"case {k}: rejected by the original only: {' '.join(args)}")
                    _keep(a.keep, k, folder, args, perl=o1, assay=mine)
                continue
            if "WARNING: -verbose," in err:
                verbose_skipped += 1  # which right answer -verbose shows: hash order; not compared
                continue
            if "LDC-MAX of" in err or "LDC-MEAN of" in err:
                hashed += 1           # assay names the hash-order-dependent choice: compare the
                noted = set(re.findall(r"LDC-M(?:AX|EAN) of \S+ \((\S+)\)", err))  # others' runs
                if code == 0 and _compare_runs(mine, o1, noted):       # whole, the noted' SF
                    sf_same += 1
                else:
                    differ += 1
                    print(f"case {k}: differs outside the named choices: {' '.join(args)}")
                    _keep(a.keep, k, folder, args, perl=o1, assay=mine)
                continue
            c2, o2 = perl(args, folder)
            if o1 != o2:
                unexplained += 1
                print(f"case {k}: the original's output depends on hash order, unnoticed by assay")
                _keep(a.keep, k, folder, args, perl=o1, perl2=o2, assay=mine)
                continue
            if code == 0 and mine == o1:
                same += 1
                continue
            differ += 1
            print(f"case {k}: differs: {' '.join(args)}")
            _keep(a.keep, k, folder, args, perl=o1, assay=mine)
    print(f"{a.cases} cases: {same} identical, {differ} differ; {hashed} with an LDC-MAX tie or "
          f"an LDC-MEAN GT disagreement (hash order; of these, identical but for the runs' named "
          f"choices in {sf_same}); {verbose_skipped} with a -verbose choice named (not compared); "
          f"{both_reject} rejected by "
          f"both, {only_perl_rejects} by the original only; {unexplained} unexplained hash-order "
          "dependence")
    differ += only_perl_rejects + unexplained
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
