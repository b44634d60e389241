#!/bin/sh
# heaptape's own writer thread (RSS, MODULE, LOST records under its tid, no
# THREAD record, no allocation) is not listed as a program thread
t=$(mktemp) || exit 1
trap 'rm -f "$t"' EXIT
"$HEAPTAPE" record -o "$t" -- "$HT_BUILD/progs/rep_known" 2>/dev/null || exit 1
"$HEAPTAPE" stats "$t" | sed -n '/^THREADS/,$p' | sed 's/[0-9][0-9]*/N/g' | tr -s ' '
