#!/bin/sh
# a finalised journal (record --journal) cut inside its symbol section: stats says the symbols are
# missing and that heaptape symbolize restores them; after it, "yes" again
t=$(mktemp) || exit 1
trap 'rm -f "$t"' EXIT
"$HEAPTAPE" record --journal -o "$t" -- "$HT_BUILD/progs/rep_known" 2>/dev/null || exit 1
"$HEAPTAPE" stats "$t" | grep '^  symbolised'
# the symbols are the last packet (appended at exit): cut 100 bytes of it
truncate -s -100 "$t"
"$HEAPTAPE" stats "$t" 2>/dev/null | grep '^  symbolised' | sed "s|$t|TAPE|; s/[0-9][0-9]*/N/g"
"$HEAPTAPE" symbolize "$t" 2>/dev/null || exit 1
"$HEAPTAPE" stats "$t" | grep '^  symbolised'
