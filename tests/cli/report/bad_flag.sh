#!/bin/sh
# an unknown flag: message and usage on stderr, exit 2
out=$("$HEAPTAPE" report --bogus ../../data/rep_basic.tape 2>&1); rc=$?
printf "%s\n" "$out" | head -n 2; exit $rc
