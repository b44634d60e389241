#!/bin/sh
# heaptape -- pprof export: go tool pprof reads every profile heaptape writes
# and its totals equal `heaptape report`'s; merged profiles sum; --at; damage.
. "$(dirname "$0")/viz_common.inc"

if ! command -v go >/dev/null 2>&1; then
  echo "go not installed (golang-go): cannot check with go tool pprof"
  FAIL=1; finish; exit 1
fi

# Record a real program too (unsampled and sampled).
"$HEAPTAPE" record -o "$TMP/grow.tape" -- "$HT_BUILD/progs/viz_grow" 0.3 >/dev/null 2>&1
"$HEAPTAPE" record --sample 16K -o "$TMP/grows.tape" -- "$HT_BUILD/progs/viz_grow" 0.3 >/dev/null 2>&1

# check_totals PROFILE "allocs bytes inuse_n inuse": go tool pprof's totals.
check_totals() {
  got=$(python3 "$LIB" pprof "$1" | python3 -c '
import json,sys; t=json.load(sys.stdin)
print(t["alloc_objects"], t["alloc_space"], t["inuse_objects"], t["inuse_space"])')
  [ "$got" = "$2" ] || { echo "  $1: go tool pprof says '$got', report says '$2'"; return 1; }
}

# want TAPE [REPORT ARGS] [--peak]: the report's four figures.
want() {
  python3 - "$@" <<'PY'
import sys, json, subprocess, os
tape, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "end"
args = ["--at", mode] if mode not in ("end", "peak") else []
r = json.loads(subprocess.run([os.environ["HEAPTAPE"], "report", "--json", *args, tape],
                              capture_output=True, text=True).stdout)
s = r["summary"]
if mode == "end": n, b = s["leaked_blocks"], s["leaked"]
elif mode == "peak": n, b = s["peak_blocks"], s["peak"]
else: n, b = r["at_blocks"], r["at_heap"]
print(s["allocs"], s["bytes"], n, b)
PY
}

for t in "$DATA/rep_basic.tape" "$DATA/rep_lua.tape" "$DATA/rep_sampled.tape" \
         "$DATA/rep_trunc.tape" "$TMP/grow.tape" "$TMP/grows.tape"; do
  n=$(basename "$t" .tape)
  ok "$n: pprof writes a profile" "$HEAPTAPE" pprof -q "$t" -o "$TMP/$n.pb.gz"
  ok "$n: go tool pprof totals = report" check_totals "$TMP/$n.pb.gz" "$(want "$t")"
  "$HEAPTAPE" pprof -q --at peak "$t" -o "$TMP/$n.peak.pb.gz" 2>/dev/null
  ok "$n: --at peak totals = report peak" check_totals "$TMP/$n.peak.pb.gz" "$(want "$t" peak)"
done
"$HEAPTAPE" pprof -q --at 0.2 "$TMP/grow.tape" -o "$TMP/at.pb.gz"
ok "--at 0.2 totals = report --at 0.2" check_totals "$TMP/at.pb.gz" "$(want "$TMP/grow.tape" 0.2)"

# Labels, mappings with build ids, inlined frames reach pprof.
raw=$(HOME=$TMP go tool pprof -raw "$TMP/grow.pb.gz" 2>/dev/null)
ok "thread labels" sh -c 'printf "%s" "$1" | grep -q "thread:\["' _ "$raw"
ok "mapping with build id" sh -c 'printf "%s" "$1" | grep -A3 "^Mappings" | grep -q "viz_grow [0-9a-f]\{40\}"' _ "$raw"
ok "function names" sh -c 'printf "%s" "$1" | grep -q "grow_step"' _ "$raw"
raw=$(HOME=$TMP go tool pprof -raw "$TMP/rep_lua.pb.gz" 2>/dev/null)
ok "runtime domain label (Lua tape)" sh -c 'printf "%s" "$1" | grep -q "domain:\[runtime\]"' _ "$raw"

# Merging: the totals of a merged profile are the sums.
"$HEAPTAPE" pprof -q "$DATA/rep_basic.tape" "$DATA/rep_lua.tape" "$TMP/grow.tape" -o "$TMP/merged.pb.gz"
sum=$( (want "$DATA/rep_basic.tape"; want "$DATA/rep_lua.tape"; want "$TMP/grow.tape") |
  awk '{a+=$1;b+=$2;c+=$3;d+=$4} END{print a, b, c, d}')
ok "merged totals are the sums" check_totals "$TMP/merged.pb.gz" "$sum"

# Damaged and empty tapes: one clear line, exit 1, no file.
: > "$TMP/empty.tape"
head -c 3000 /dev/urandom > "$TMP/junk.tape"
for bad in empty junk; do
  "$HEAPTAPE" pprof "$TMP/$bad.tape" -o "$TMP/$bad.pb.gz" 2>"$TMP/err"; rc=$?
  ok "$bad tape: exit 1" [ "$rc" = 1 ]
  ok "$bad tape: message names the file" grep -q "^heaptape: $TMP/$bad.tape: " "$TMP/err"
  ok "$bad tape: no profile written" [ ! -e "$TMP/$bad.pb.gz" ]
done
"$HEAPTAPE" pprof "$DATA/rep_basic.tape" "$TMP/empty.tape" -o "$TMP/mix.pb.gz" 2>/dev/null
ok "a bad tape among good ones writes nothing" [ ! -e "$TMP/mix.pb.gz" ]
"$HEAPTAPE" pprof --at nope "$DATA/rep_basic.tape" -o "$TMP/x.pb.gz" 2>/dev/null
ok "bad --at: exit 2" [ $? = 2 ]
ok "-o a pipe: the profile goes through it, the pipe stays" \
  via_pipe "$TMP/pipe.pb.gz" "$HEAPTAPE" pprof -q "$DATA/rep_basic.tape" -o "$TMP/pipe.pb.gz"
finish
