#!/bin/sh
# heaptape -- record --pprof-every: one readable pprof snapshot per second
# whose inuse totals follow a program growing its heap by 1 MiB a second,
# taken from the model of the pass sealing the journal as the program runs.
. "$(dirname "$0")/viz_common.inc"

if ! command -v go >/dev/null 2>&1; then
  echo "go not installed (golang-go)"; FAIL=1; finish; exit 1
fi
HEAPTAPE_SEAL_LOG=1 "$HEAPTAPE" record --sample 32K --pprof-every 1 -o "$TMP/g.tape" -- \
  "$HT_BUILD/progs/viz_grow" 4.5 >/dev/null 2>"$TMP/err"
ok "record exits 0" [ $? = 0 ]
ok "the tape is sealed, while the program ran (or after it, saying why)" sh -c \
  "grep -q 'sealed while the program ran\|sealed after the run' \"$TMP/err\" &&
   \"$HEAPTAPE\" stats \"$TMP/g.tape\" | grep -q '^  sealed  *yes: report'"
n=$(ls "$TMP"/g.tape.0*.pb.gz 2>/dev/null | wc -l)
ok "one snapshot per second (4 or 5, got $n)" [ "$n" -ge 4 ] && [ "$n" -le 5 ]
prev=0
for f in "$TMP"/g.tape.0*.pb.gz; do
  k=$(echo "$f" | sed 's/.*\.0*\([0-9]*\)\.pb\.gz$/\1/')
  tot=$(python3 "$LIB" pprof "$f" 2>/dev/null)
  ok "snapshot $k readable by go tool pprof" [ -n "$tot" ]
  ok "snapshot $k inuse follows the heap (~$k MiB) and allocs since the last (~1 MiB)" \
    python3 - "$tot" "$k" "$prev" <<'PY'
import json, sys
t, k, prev = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
mib = 1048576
inuse, alloc = t["inuse_space"], t["alloc_space"]
# (the snapshots are of the journal sealed so far: up to ~0.4 s behind)
good = 0.6 * (k - 0.4) * mib <= inuse <= 1.35 * k * mib and inuse > prev and 0.4 * mib <= alloc <= 1.8 * mib
print("  snapshot %d: inuse %d alloc %d" % (k, inuse, alloc))
sys.exit(0 if good else 1)
PY
  prev=$(echo "$tot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inuse_space"])')
done
ok "the tape is finalised as usual" sh -c '"$1" report "$2" >/dev/null' _ "$HEAPTAPE" "$TMP/g.tape"
"$HEAPTAPE" record --pprof-every x -- true 2>/dev/null
ok "bad --pprof-every: exit 2" [ $? = 2 ]
finish
