#!/bin/sh
# --buckets N gives N to 2N time buckets, a power of two ns apart (the
# snapshots fold as the pass goes, so a sealed tape holds the page's without
# knowing its duration beforehand: docs/FORMAT.md)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
for b in 100 7 3; do
  "$HEAPTAPE" html --buckets $b ../../data/rep_lua.tape -o "$t/p.html" 2>&1 | sed "s|$t/||"
done
"$HEAPTAPE" html ../../data/rep_basic.tape -o "$t/p.html" 2>&1 | sed "s|$t/||"
