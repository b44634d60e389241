#!/bin/sh
# heaptape locks --model fine of a golden tape: every line (the rules are in
# docs/ALLOCATORS.md; tests/unit/test_locks.c works them by hand).
"$HEAPTAPE" locks --model fine ../../data/rep_basic.tape
