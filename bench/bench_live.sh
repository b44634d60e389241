#!/bin/sh
# heaptape bench -- the live view's refresh cost against the tape's length:
# python3 runs a busy loop for SECONDS (default 20) under `heaptape record`,
# then bench_follow replays its tape one second at a time through the
# follower (one refresh each) beside a whole re-read per second.
# usage: sh bench/bench_live.sh [BUILD] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build} SECS=${2:-20}
make -s "$B/heaptape" "$B/bench/bench_follow" B="$B" >/dev/null
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cat > "$W/busy.py" <<PYEOF
import json, time
keep, end, i = [], time.time() + $SECS, 0
while time.time() < end:
    d = [{'a': j, 'b': str(j) * 3, 'c': [j] * 5} for j in range(2000)]
    s = json.dumps(d); e = json.loads(s)
    if i % 20 == 0: keep.append(e[:50])
    i += 1
print(i)
PYEOF
PYTHONMALLOC=malloc "$B/heaptape" record -o "$W/py.tape" -- python3 "$W/busy.py" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
# (python3 may be a shim that execs the interpreter: the largest tape is its)
tape=$(ls -S "$W"/py*.tape | head -n 1)
"$B/bench/bench_follow" "$tape" "$W/scratch.tape"
