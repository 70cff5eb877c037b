"""Add three random reference cases (tests/kbp/cases/random{1,2,3}/) drawn by fuzz.py's generator:
one with SF queries, one with -expand, one with -expand and a -queries file. A draw is kept only
if assay scores it without a hash-order note (so the original's output is deterministic) and has
the wanted options; the lines for tests/kbp/cases.tsv are printed.

    .venv/bin/python bench/csscore_peer/make_random_cases.py
"""
from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fuzz import assay, make_case  # noqa: E402

CASES = HERE.parents[1] / "tests" / "kbp" / "cases"
WANT = {"random1": lambda a: "-expand" not in a,
        "random2": lambda a: "-expand" in a and "-queries" not in a,
        "random3": lambda a: "-queries" in a}


def main() -> None:
    rng = random.Random(2026)
    for name, want in WANT.items():
        folder = CASES / name
        while True:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            args = make_case(rng, folder)
            if not want(args):
                continue
            code, out, err = assay(args, folder)
            if code == 0 and "LDC-MAX of" not in err and "LDC-MEAN of" not in err and out:
                break
        for f in folder.iterdir():          # keep only the files the case reads
            if f.name not in args:
                f.unlink()
        rel = [f"{name}/{a}" if (folder / a).is_file() else a for a in args]
        print(f"{name}\t{' '.join(rel)}\trandom case (fuzz.py generator, seed 2026): {name}")


if __name__ == "__main__":
    main()
