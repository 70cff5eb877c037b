"""Record the golden outputs into tests/golden/expected.json (a script, not a test).

It was run once on release 0.1.0 from a detached worktree, never from the working tree::

    git worktree add --detach /tmp/assay-base bd65c11
    cd /tmp && PYTHONPATH=/tmp/assay-base /work/main/.venv/bin/python \\
        /work/main/tests/golden/record.py
    git -C /work/main worktree remove --force /tmp/assay-base

Whichever ``assay`` is importable is recorded (its folder and commit are written into the file).
The two commands are started through their entry points in this interpreter (``assay``: the
installed console script's module if it imports, else ``assay.cli:main``; ``scorer2``:
``assay.scorers.senseval:main``), in a temporary folder so that no checkout shadows the package.
Re-recording is only for a deliberate, explained change of results.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden import cases

LAUNCH = """import importlib, os, sys
import assay
home = os.path.dirname(os.path.realpath(assay.__file__))
for spec in {specs!r}:
    mod, _, fn = spec.partition(":")
    rel = os.path.join(home, *mod.split(".")[1:])
    if not (os.path.isfile(rel + ".py") or os.path.isfile(os.path.join(rel, "__init__.py"))):
        continue  # not in this package (an editable install's finder could find it elsewhere)
    m = importlib.import_module(mod)
    bad = [n for n, x in sys.modules.items() if n.split(".")[0] == "assay"
           and getattr(x, "__file__", None)
           and not os.path.realpath(x.__file__).startswith(home + os.sep)]
    if bad:
        raise SystemExit(f"modules from outside {{home}}: {{bad}}")
    sys.argv[0] = {prog!r}
    sys.exit(getattr(m, fn)())
raise SystemExit("no entry point among {specs!r}")
"""


def launcher(prog: str, fallback: str) -> list[str]:
    specs = [ep.value for ep in metadata.entry_points(group="console_scripts")
             if ep.name == prog] + [fallback]
    return [sys.executable, "-c", LAUNCH.format(specs=specs, prog=prog)]


def provenance() -> dict[str, str]:
    import assay
    folder = Path(assay.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                              text=True, check=False).stdout.strip()
    return {"assay": str(folder), "commit": git("rev-parse", "HEAD"),
            "dirty": git("status", "--porcelain", "--", ".") != "",
            "version": getattr(assay, "__version__", "")}


def main() -> None:
    prov = provenance()
    print(f"recording assay from {prov['assay']} (commit {prov['commit']}, "
          f"dirty={prov['dirty']})", flush=True)
    out: dict = {"recorded_from": prov, "budget": cases.BUDGET, "seeds": list(cases.SEEDS),
                 "er": {}, "stratified": {}, "scorer2": {}}
    t0 = time.perf_counter()
    for cid in cases.er_case_ids():
        t = time.perf_counter()
        out["er"][cid] = cases.run_er_case(cid)
        print(f"{cid}: {time.perf_counter() - t:.2f} s", flush=True)
    assay_cmd = launcher("assay", "assay.cli:main")
    scorer2_cmd = launcher("scorer2", "assay.scorers.senseval:main")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        world = Path(tmp) / "world"
        world.mkdir()
        out["stratified"] = cases.run_stratified(assay_cmd, world)
        print(f"stratified: {time.perf_counter() - t:.2f} s", flush=True)
        t = time.perf_counter()
        for grain, minimal in cases.SENSEVAL_CASES:
            out["scorer2"][cases.senseval_case_id(grain, minimal)] = cases.run_scorer2(
                scorer2_cmd, Path(tmp), grain, minimal)
        print(f"scorer2: {time.perf_counter() - t:.2f} s", flush=True)
    foreign = sorted(n for n, m in sys.modules.items() if n.split(".")[0] == "assay"
                     and getattr(m, "__file__", None) and not
                     str(Path(m.__file__).resolve()).startswith(prov["assay"]))
    if foreign:
        raise SystemExit(f"modules loaded from outside {prov['assay']}: {foreign}")
    text = json.dumps(out, indent=1)
    # one line per recorded draw: [index, probability, stratum]
    text = re.sub(r"\[\s+([-+\d.e]+),\s+([-+\d.e]+),\s+([-+\d.e]+)\s+\]", r"[\1, \2, \3]", text)
    if json.loads(text) != out:
        raise SystemExit("the compacted JSON does not read back as recorded")
    cases.EXPECTED.write_text(text + "\n")
    print(f"wrote {cases.EXPECTED} in {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
