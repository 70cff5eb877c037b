#!/usr/bin/env bash
# The official TAC KBP Cold Start scorer, CS-Score v2.4.4 (perl; jamesmayfield/ColdStart, branch
# release-2015.11), as a reference peer for assay's cs-score. assay never depends on it: the tests
# read only the outputs committed in tests/kbp/expected/ (see run_peer.sh).
#
#   bash bench/csscore_peer/setup.sh     # idempotent; prints the path of the built CS-Score.pl
#
# Source: $CSSCORE_PEER_SRC (a local clone or bare mirror of the repository) if set, else
# https://github.com/jamesmayfield/ColdStart.git. Pinned to the commit below. The checkout and the
# built script live in bench/csscore_peer/checkout/ (gitignored). Needs perl with JSON.pm.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
commit=dfdcce40d1afc29afccf38d13f2d9282092d4f27   # release-2015.11: CS-Score 2.4.4, CS-ValidateSF 1.9
src="${CSSCORE_PEER_SRC:-https://github.com/jamesmayfield/ColdStart.git}"
out="$here/checkout"
if [ ! -f "$out/CS-Score.pl" ]; then
    rm -rf "$out.tmp"
    git init -q "$out.tmp"
    git -C "$out.tmp" fetch -q "$src" "$commit" 2>/dev/null \
        || git -C "$out.tmp" fetch -q "$src" release-2015.11
    git -C "$out.tmp" -c advice.detachedHead=false checkout -q "$commit"
    ( cd "$out.tmp" && perl Include.pl CS-Score-MASTER.pl > CS-Score.pl \
                    && perl Include.pl CS-ValidateSF-MASTER.pl > CS-ValidateSF.pl )
    rm -rf "$out"
    mv "$out.tmp" "$out"
fi
perl -MJSON -e1
perl "$out/CS-Score.pl" -version >/dev/null
echo "$out/CS-Score.pl"
