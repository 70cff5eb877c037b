#!/usr/bin/env bash
# Run the official CS-Score v2.4.4 on every reference case of tests/kbp/cases.tsv and write its
# stdout to tests/kbp/expected/<case>.out (committed; the tests read only those files).
#
#   bash bench/csscore_peer/setup.sh && bash bench/csscore_peer/run_peer.sh
#
# Stops if the original exits non-zero on a case. The cases are written by make_cases.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
score="$here/checkout/CS-Score.pl"
[ -f "$score" ] || { echo "run bench/csscore_peer/setup.sh first" >&2; exit 1; }
cd "$repo/tests/kbp/cases"
mkdir -p ../expected
grep -v '^#' ../cases.tsv | while IFS=$'\t' read -r name args _what; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    perl "$score" $args > "../expected/$name.out" 2> "../expected/$name.perl-stderr.tmp" \
        || { echo "CS-Score failed on $name" >&2; cat "../expected/$name.perl-stderr.tmp" >&2; exit 1; }
    rm -f "../expected/$name.perl-stderr.tmp"
    echo "$name: $(wc -l < "../expected/$name.out") lines"
done
