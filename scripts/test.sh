#!/bin/sh
# heaptape: install what is needed, build everything, run the whole test suite.
# The last line is "N passed, N failed"; the exit status is non-zero on failure.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
make -s -j2 test
