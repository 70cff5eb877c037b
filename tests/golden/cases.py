"""The golden cases, shared by ``record.py`` (which wrote ``expected.json`` from release 0.1.0,
commit bd65c11) and ``tests/test_golden.py`` (which re-runs them on the installed ``assay``).

Only public entry points are used: ``assay.evaluate`` for the ER pools, the ``assay stratified``
command line for the TREC world, the ``scorer2`` command for Senseval-3. The caller says how the
two commands are started (``assay_cmd``/``scorer2_cmd``: the argv prefix of each).
"""
from __future__ import annotations

import hashlib
import math
import os
import subprocess
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .world import write_world

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
ER = DATA / "er"
SENSEVAL = DATA / "senseval"
EXPECTED = Path(__file__).resolve().parent / "expected.json"

POOLS = ("restaurant", "dblp_acm", "abt_buy")
DESIGNS: dict[str, tuple[str, dict[str, Any]]] = {
    "auto": ("auto", {}),
    "passive": ("passive", {}),
    "passive_replace": ("passive", {"replace": True}),
    "stratified_csf_neyman": ("stratified", {}),
    "stratified_equal_proportional_10": ("stratified", {"strata": "equal", "n_strata": 10,
                                                        "allocation": "proportional"}),
    "importance": ("importance", {}),
    "oasis": ("oasis", {}),
}
SEEDS = (3, 11)
BUDGET = 300
MEASURES = ("precision", "recall", "f1")
HEAD = 50

# ---------------------------------------------------------------------------- ER pools


def er_case_ids() -> list[str]:
    """``pool/design-case/seed`` for every ER case, in recording order."""
    return [f"{p}/{d}/{s}" for p in POOLS for d in DESIGNS for s in SEEDS]


@cache
def er_frames(pool: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pool without its ``label`` column, and the gold (id columns + label)."""
    path = ER / f"{pool}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: the real ER pools are expected in ../shared/data/er")
    df = pd.read_parquet(path)
    ids = [c for c in ("left_id", "right_id", "item_id") if c in df.columns]
    return df.drop(columns=["label"]), df[ids + ["label"]]


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def draw_triples(draws: Any) -> list[tuple[int, float, int]]:
    """(index, probability, stratum) of each draw: a list of draw records or columns of arrays."""
    if not isinstance(draws, (list, tuple)) and hasattr(draws, "probability"):
        return list(zip((int(i) for i in np.asarray(draws.index)),
                        (float(p) for p in np.asarray(draws.probability)),
                        (int(s) for s in np.asarray(draws.stratum))))
    return [(int(d.index), float(d.probability), int(d.stratum)) for d in draws]


def _sha(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def run_er_case(case_id: str) -> dict[str, Any]:
    """Evaluate one ER case through ``assay.evaluate`` (no store) and summarise it."""
    import assay
    pool, name, seed = case_id.split("/")
    design, options = DESIGNS[name]
    pool_df, gold = er_frames(pool)
    res = assay.evaluate(pool_df, gold, design=design, budget=BUDGET, seed=int(seed),
                         options=dict(options))
    measures = {}
    for m in MEASURES:
        e = res.estimates[m]
        out = {"estimate": _num(e.estimate), "ci_low": _num(e.ci_low),
               "ci_high": _num(e.ci_high), "std_error": _num(e.std_error),
               "method": e.method, "n_effective": _num(e.n_effective), "note": e.note}
        extra = getattr(e, "extra", None) or {}
        if "design_estimate" in extra:
            out["design_estimate"] = _num(extra["design_estimate"])
        if "design_interval" in extra:
            out["design_interval"] = [_num(v) for v in extra["design_interval"]]
        measures[m] = out
    draws = draw_triples(res.draws)
    return {"labels_used": int(res.labels_used), "pool_size": int(res.pool_size),
            "measures": measures, "n_draws": len(draws),
            "draws_head": [[i, p, s] for i, p, s in draws[:HEAD]],
            "draws_sha256": _sha([f"{i}\t{p!r}\t{s}" for i, p, s in draws]),
            "draws_items_sha256": _sha([f"{i}\t{s}" for i, _, s in draws])}


# ---------------------------------------------------------------------------- commands


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run a command in ``cwd`` (never the repository: it must not shadow the installed
    package), without progress bars."""
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_PROGRESS"}
    env["COLUMNS"] = "120"
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)


# ---------------------------------------------------------------------------- TREC world

STRATIFIED_STEPS: list[tuple[str, list[str]]] = [
    ("design", ["stratified", "design", "--runs", "runA.txt", "--runs", "runB.txt",
                "--collection", "docs.txt", "--budget", "600", "--seed", "1",
                "--out", "SAMPLE.tsv"]),
    ("adjudicate", ["stratified", "adjudicate", "--sample", "SAMPLE.tsv", "--assessments",
                    "qrels.txt", "--budget", "150", "--seed", "3", "--out", "ADJ.tsv",
                    "--runs", "runA.txt", "--runs", "runB.txt", "--target-run", "A"]),
    ("estimate_adjudicated", ["stratified", "estimate", "--runs", "runA.txt", "--runs",
                              "runB.txt", "--collection", "docs.txt", "--sample", "SAMPLE.tsv",
                              "--assessments", "qrels.txt", "--adjudication-sample", "ADJ.tsv",
                              "--adjudications", "truth.txt", "--json", "adjudicated.json"]),
    ("estimate_naive", ["stratified", "estimate", "--runs", "runA.txt", "--runs", "runB.txt",
                        "--collection", "docs.txt", "--sample", "SAMPLE.tsv", "--assessments",
                        "qrels.txt", "--json", "naive.json"]),
]
STRATIFIED_OUTPUTS = ("SAMPLE.tsv", "ADJ.tsv", "adjudicated.json", "naive.json")
WORLD_FILES = ("docs.txt", "runA.txt", "runB.txt", "qrels.txt", "truth.txt")


def world_hashes(folder: Path) -> dict[str, str]:
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in WORLD_FILES}


def run_stratified(assay_cmd: list[str], folder: Path) -> dict[str, Any]:
    """Write the world into ``folder``, run the four steps there, return exit codes and outputs
    (the text of each output file)."""
    write_world(folder)
    codes = {}
    for step, args in STRATIFIED_STEPS:
        p = run(assay_cmd + args, folder)
        codes[step] = p.returncode
        if p.returncode != 0:
            raise RuntimeError(f"assay {' '.join(args)} exited {p.returncode}: "
                               f"{p.stderr.decode(errors='replace')}")
    return {"world_sha256": world_hashes(folder), "exit_codes": codes,
            "files": {n: (folder / n).read_bytes().decode("ascii")
                      for n in STRATIFIED_OUTPUTS}}


# ---------------------------------------------------------------------------- Senseval-3

SENSEVAL_CASES = [(g, m) for g in ("fine", "coarse", "mixed") for m in (False, True)]
TEST_KEY, TRAIN_KEY, SENSEMAP = (SENSEVAL / n for n in (
    "EnglishLS.test.key", "EnglishLS.train.key", "EnglishLS.sensemap"))
ANSWERS = "mfs.answers"


def senseval_case_id(grain: str, minimal: bool) -> str:
    return f"{grain}{'-m' if minimal else ''}"


def write_mfs_answers(folder: Path) -> Path:
    """The most-frequent-sense baseline (per lexelt, the train key's most frequent tag; ties:
    bytewise smallest) for every test instance, as tests/test_senseval_real.py builds it."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in TRAIN_KEY.read_text().splitlines():
        lexelt, _, *tags = line.split()
        counts[lexelt].update(tags)
    mfs = {lx: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for lx, c in counts.items()}
    path = folder / ANSWERS
    path.write_text("".join(f"{lx} {inst} {mfs[lx]}\n" for lx, inst, *_ in
                            (ln.split() for ln in TEST_KEY.read_text().splitlines())))
    return path


def run_scorer2(scorer2_cmd: list[str], folder: Path, grain: str,
                minimal: bool) -> dict[str, Any]:
    """scorer2 on the baseline (written into ``folder`` if absent): exit code, stdout, and stderr
    (with ``-m``, a line per instance left out) as its line count, first lines and sha256. The
    real data's paths are replaced by <KEY> and <SENSEMAP>."""
    if not (folder / ANSWERS).exists():
        write_mfs_answers(folder)
    args = [ANSWERS, str(TEST_KEY), str(SENSEMAP), "-g", grain] + (["-m"] if minimal else [])
    p = run(scorer2_cmd + args, folder)

    def clean(b: bytes) -> str:
        return b.decode().replace(str(TEST_KEY), "<KEY>").replace(str(SENSEMAP), "<SENSEMAP>")
    err = clean(p.stderr)
    return {"exit_code": p.returncode, "stdout": clean(p.stdout),
            "stderr_lines": err.count("\n"), "stderr_head": err.splitlines(keepends=True)[:3],
            "stderr_sha256": hashlib.sha256(err.encode()).hexdigest()}


# ---------------------------------------------------------------------------- comparison

SIGNIFICANT = 10


def same_float(a: float | None, b: float | None) -> bool:
    """Equal to ``SIGNIFICANT`` significant digits (None only equals None; exact zeros)."""
    if a is None or b is None:
        return a is b
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= 10.0 ** (1 - SIGNIFICANT) * 0.5 * max(abs(a), abs(b))


Difference = tuple[str, Any, Any]   # (where, recorded, now)


def differences(expected: Any, actual: Any, where: str = "") -> list[Difference]:
    """Every place where ``actual`` differs from ``expected``: floats to ``SIGNIFICANT`` digits,
    everything else exactly (lists element by element, dicts key by key, in any key order)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return [] if expected is actual else [(where, expected, actual)]
    if isinstance(expected, float) or isinstance(actual, float):
        ok = (isinstance(expected, (int, float)) and isinstance(actual, (int, float))
              and same_float(float(expected), float(actual)))
        return [] if ok else [(where, expected, actual)]
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        if set(expected) != set(actual):   # a JSON object's key order is not compared
            out.append((f"{where}{{keys}}", sorted(expected), sorted(actual)))
        for k in expected:
            if k in actual:
                out += differences(expected[k], actual[k], f"{where}.{k}" if where else k)
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [(f"{where}{{length}}", len(expected), len(actual))]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += differences(e, a, f"{where}[{i}]")
        return out
    return [] if expected == actual else [(where, expected, actual)]
