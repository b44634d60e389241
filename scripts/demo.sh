#!/bin/sh
# heaptape quick start: install what is needed, build, record the bundled
# example program and print its report.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
make -s -j2 all build/examples/wordfreq
tape=build/wordfreq.tape
build/heaptape record -o "$tape" -- build/examples/wordfreq 200000
build/heaptape report "$tape"
