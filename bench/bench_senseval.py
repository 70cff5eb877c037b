"""Benchmark: score the full Senseval-3 English lexical sample (3,944 instances) in < 1 s.

A most-frequent-sense baseline (from the train key) is scored against the test key with the
task's sense map, fine, coarse and mixed, through the library and through the command line
(parse, score, format); the budget applies to these.  A new Python process is also timed, with
its start-up (interpreter and ``import assay``) shown apart.  Prints the best of several runs;
exits 1 if the library or ``main`` exceeds the budget.

    .venv/bin/python bench/bench_senseval.py
"""
from __future__ import annotations

import contextlib
import io
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assay.scorers.senseval import main, score  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "senseval"
KEY, TRAIN, SENSEMAP = DATA / "EnglishLS.test.key", DATA / "EnglishLS.train.key", DATA / "EnglishLS.sensemap"
BUDGET_S = 1.0
REPEATS = 5


def write_mfs_answers(path: Path) -> int:
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in TRAIN.read_text().splitlines():
        lexelt, _, *tags = line.split()
        counts[lexelt].update(tags)
    mfs = {lx: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for lx, c in counts.items()}
    rows = [ln.split()[:2] for ln in KEY.read_text().splitlines()]
    path.write_text("".join(f"{lx} {inst} {mfs[lx]}\n" for lx, inst in rows))
    return len(rows)


def best_of(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main_bench() -> int:
    print(f"python {platform.python_version()} on {platform.machine()} ({platform.processor() or platform.system()})")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        answers = Path(tmp) / "mfs.answers"
        n = write_mfs_answers(answers)
        print(f"{n} instances, key {KEY.name}, sense map {SENSEMAP.name}; best of {REPEATS} runs")
        for grain in ("fine", "coarse", "mixed"):
            lib = best_of(lambda: score(answers, KEY, SENSEMAP, grain))
            argv = [str(answers), str(KEY), str(SENSEMAP), "-g", grain, "-v"]

            def cli() -> None:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    main(argv)
            cmd = best_of(cli)
            proc = best_of(lambda: subprocess.run(
                [sys.executable, "-c", "import sys; from assay.scorers.senseval import main;"
                 " sys.exit(main(sys.argv[1:]))", *argv], cwd=REPO, check=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), repeats=3)
            worst = max(worst, lib, cmd)
            result = score(answers, KEY, SENSEMAP, grain)
            print(f"  {grain:6s}  library {lib * 1e3:6.1f} ms   main(-v) {cmd * 1e3:6.1f} ms"
                  f"   new process {proc * 1e3:6.1f} ms   (precision {result.precision:.3f})")
        startup = best_of(lambda: subprocess.run(
            [sys.executable, "-c", "import assay.scorers.senseval"], cwd=REPO, check=True), repeats=3)
        print(f"  (a new process spends {startup * 1e3:.0f} ms starting Python and importing assay)")
    verdict = "OK" if worst < BUDGET_S else "TOO SLOW"
    print(f"slowest {worst * 1e3:.1f} ms, budget {BUDGET_S * 1e3:.0f} ms: {verdict}")
    return 0 if worst < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main_bench())
