#!/bin/sh
# --buckets N gives N time buckets (the step is the tape's duration / N, not
# rounded up to a 1-2-5 value, which gave 65 of 100 on a 1.3 s tape)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
for b in 100 7 3; do
  "$HEAPTAPE" html --buckets $b ../../data/rep_lua.tape -o "$t/p.html" 2>&1 | sed "s|$t/||"
done
"$HEAPTAPE" html ../../data/rep_basic.tape -o "$t/p.html" 2>&1 | sed "s|$t/||"
