"""Speed of cs-score: R runs x N answers each (default 100 x 10,000), one hop or two.

    .venv/bin/python bench/csscore_peer/speed.py [--runs 100] [--answers 10000] [--queries 500]
                                                 [--jobs N] [--md5] [--profile FILE]

Writes a synthetic Cold Start case to a temporary folder (an SF query file, a pool of ~20
assessed answers a query and their hop-1 answers, R run files of N answers: half pooled, half
novel, a third with a hop-1 answer) and times ``cs-score`` (reading, scoring, report) in-process:
wall clock, CPU time of this process and of the worker processes, and the load average (the
machine is shared: wall clock moves with the load).
Optionally ``--perl`` times the original on the same files (CPU time, peak memory, identical
output); ``--md5`` prints the MD5 of the output (to check it is unchanged), ``--profile FILE``
writes a cProfile of the in-process run (one process: use it with ``--jobs 1``); ``--perl-runs K`` gives it only the first K runs (the original holds every line in
perl hashes: over 10 GB at 100 x 10,000), and times assay on those K runs as well for the ratio.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import hashlib
import io
import os
import random
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from assay.formats.kbp import entrypoint_uuid, hop1_uuid
from assay.scorers.csscore import main as cs_main

SLOTS = ("per:employee_or_member_of", "org:top_members_employees")


def write_case(folder: Path, runs: int, answers: int, nq: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    qs = [f"CSSF15_ENG_{entrypoint_uuid(f'D{i}', 0, 9, SLOTS)}" for i in range(nq)]
    xml = ["<query_set>"]
    for i, q in enumerate(qs):
        xml.append(f'<query id="{q}"><name>N{i}</name><docid>D{i}</docid><beg>0</beg><end>9</end>'
                   f"<enttype>per</enttype><slot0>{SLOTS[0]}</slot0><slot1>{SLOTS[1]}</slot1></query>")
    xml.append("</query_set>")
    (folder / "q.xml").write_text("\n".join(xml) + "\n")
    pool, pooled = [], {q: [] for q in qs}
    n = 0
    for q in qs:
        for k in range(20):
            v, rel, vp = f"V{k}", f"P{k}:0-99", f"P{k}:{k}-{k + 5}"
            code = "C" if k % 3 else "W"
            ec = f"{q}:{k // 2 + 1}" if code == "C" else "0"
            n += 1
            pool.append(f"A{n}\t{q}:{SLOTS[0]}\t{rel}\t{v}\t{vp}\t{code}\t{code}\t{ec}")
            pooled[q].append((v, rel, vp))
            if code == "C" and k < 6:
                child = f"{q}_{hop1_uuid(q, v, vp)}"
                n += 1
                pool.append(f"A{n}\t{child}:{SLOTS[1]}\tH{k}:0-50\tW{k}\tH{k}:1-4\tC\tC\t{ec}:1")
    (folder / "pool.tab").write_text("\n".join(pool) + "\n")
    names = []
    per_q = max(1, answers // nq)
    for r in range(runs):
        rows = []
        for q in qs:
            got = 0
            while got < per_q:
                if rng.random() < 0.5:
                    v, rel, vp = rng.choice(pooled[q])
                else:
                    j = rng.randrange(10 ** 6)
                    v, rel, vp = f"N{j}", f"X{j}:0-99", f"X{j}:1-9"
                rows.append(f"{q}\t{SLOTS[0]}\trun{r}\t{rel}\t{v}\tORG\t{vp}\t1.0")
                got += 1
                if got < per_q and rng.random() < 0.33:
                    child = f"{q}_{hop1_uuid(q, v, vp)}"
                    k = rng.randrange(6)
                    rows.append(f"{child}\t{SLOTS[1]}\trun{r}\tH{k}:0-50\tW{k}\tPER\tH{k}:1-4\t0.5")
                    got += 1
        name = f"run{r}.tab"
        (folder / name).write_text("\n".join(rows) + "\n")
        names.append(name)
    return [str(folder / "q.xml"), str(folder / "pool.tab")] + [str(folder / n) for n in names]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--answers", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--perl", action="store_true")
    ap.add_argument("--jobs", type=int, default=0, help="cs-score --jobs (0: its default)")
    ap.add_argument("--perl-runs", type=int, default=0,
                    help="give the original only the first K runs (0: all)")
    ap.add_argument("--md5", action="store_true", help="print the MD5 of the output")
    ap.add_argument("--profile", default="", help="write a cProfile of the run to this file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        files = write_case(Path(d), a.runs, a.answers, a.queries, a.seed)
        lines = sum(1 for f in files[2:] for _ in open(f))
        jobs = ["--jobs", str(a.jobs)] if a.jobs else []
        load0 = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        out = io.StringIO()
        prof = cProfile.Profile() if a.profile else None
        with contextlib.redirect_stdout(out):
            if prof is not None:
                prof.enable()
            code = cs_main([*jobs, "-tabs", *files])
            if prof is not None:
                prof.disable()
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"cs-score: {a.runs} runs x {a.answers} answers ({lines} submission lines, "
              f"{a.queries} queries): {dt:.2f} s (exit {code}, {len(out.getvalue())} bytes); "
              f"CPU {cpu:.2f} s here + {kids.ru_utime + kids.ru_stime:.2f} s in workers; "
              f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
        if a.md5:
            print(f"MD5 of the output: {hashlib.md5(out.getvalue().encode()).hexdigest()}")
        if prof is not None:
            prof.dump_stats(a.profile)
        if a.perl:
            sub = files if not a.perl_runs else files[:2 + a.perl_runs]
            if sub is not files:            # assay on the same subset, for the ratio
                out = io.StringIO()
                c0 = time.process_time()
                with contextlib.redirect_stdout(out):
                    cs_main([*jobs, "-tabs", *sub])
                cpu = time.process_time() - c0
                print(f"cs-score on the first {a.perl_runs} runs: CPU {cpu:.2f} s")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(["perl", str(Path(__file__).parent / "checkout" / "CS-Score.pl"),
                                "-tabs", *sub], capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            pcpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            print(f"CS-Score 2.4.4 (perl) on {len(sub) - 2} runs: {time.perf_counter() - t0:.2f} s "
                  f"wall, CPU {pcpu:.2f} s, peak {after.ru_maxrss / 2 ** 20:.2f} GiB (exit "
                  f"{p.returncode}); identical: {p.stdout.decode() == out.getvalue()}; "
                  f"CPU ratio perl / assay {pcpu / cpu:.1f}")


if __name__ == "__main__":
    main()
