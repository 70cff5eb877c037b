#!/usr/bin/env bash
# The original OASIS package (Marchant & Rubinstein, VLDB 2017; PyPI oasis==0.1.3) as a benchmark
# peer, in its own virtual environment bench/.venv-oasis (gitignored). assay never depends on it.
#
#   bash bench/oasis_peer/setup.sh          # idempotent; prints the venv's python path
#
# oasis 0.1.3 declares old pins, so it is installed with --no-deps next to current numpy, scipy,
# scikit-learn and tables (it imports sklearn and tables at import time). On SciPy >= 1.12 it
# needs scipy.percentile/scipy.ptp, which run_peer.py restores from numpy before importing it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/../.venv-oasis"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
stamp="$venv/.oasis-installed"
if [ ! -f "$stamp" ]; then
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q --no-deps oasis==0.1.3
    "$venv/bin/python" -m pip install -q numpy scipy scikit-learn tables pandas pyarrow
    touch "$stamp"
fi
"$venv/bin/python" - <<'PY'
import numpy, scipy
if not hasattr(scipy, "percentile"):
    scipy.percentile = numpy.percentile
if not hasattr(scipy, "ptp"):
    scipy.ptp = numpy.ptp
import oasis
print("oasis peer ready:", oasis.__file__)
PY
echo "$venv/bin/python"
